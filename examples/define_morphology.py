"""Define a new modular morphology from scratch — a six-legged walker — and train it.

The body is written with `mujoco.MjSpec`, partitioned into a torso and six legs by an
annotation stored in the model itself, saved as one MJCF file, shown, and trained for a few
iterations through the same run machinery as `python cli.py train`.

    python examples/define_morphology.py                # a short run
    python examples/define_morphology.py --steps 2000000
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import mujoco

from modular_ppo.body import BodyGraph
from modular_ppo.body import describe
from modular_ppo.env import EnvConfig
from modular_ppo.ppo import EvalConfig, PPOConfig
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.train_run import run_training

LEG_ANGLES = {f"leg_{i}": math.radians(a) for i, a in enumerate((30, 90, 150, 210, 270, 330))}


def hexapod_spec() -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    spec.modelname = "hexapod"
    spec.compiler.degree = False
    # MJX-friendly physics: Newton, 1 iteration, 4 line-search steps; only feet touch the floor.
    spec.option.timestep = 0.01
    spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON
    spec.option.iterations = 1
    spec.option.ls_iterations = 4
    spec.default.joint.armature = 1
    spec.default.joint.damping = [1, 0, 0]
    spec.default.geom.contype = 0
    spec.default.geom.conaffinity = 0
    spec.default.geom.density = 5.0
    spec.worldbody.add_light(pos=[0, 0, 3], dir=[0, 0, -1])
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[40, 40, 0.1],
                            conaffinity=1, rgba=[0.8, 0.9, 0.8, 1])
    torso = spec.worldbody.add_body(name="torso", pos=[0, 0, 0.5])
    torso.add_freejoint(name="root")
    torso.add_geom(type=mujoco.mjtGeom.mjGEOM_ELLIPSOID, size=[0.35, 0.25, 0.08])
    for leg, angle in LEG_ANGLES.items():
        c, s = math.cos(angle), math.sin(angle)
        hip = torso.add_body(name=f"{leg}_hip", pos=[0.3 * c, 0.22 * s, 0])
        hip.add_joint(name=f"{leg}_swing", axis=[0, 0, 1], range=[-0.5, 0.5],
                      limited=mujoco.mjtLimited.mjLIMITED_TRUE)
        hip.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.05, 0, 0],
                     fromto=[0, 0, 0, 0.2 * c, 0.2 * s, 0])
        shin = hip.add_body(name=f"{leg}_shin", pos=[0.2 * c, 0.2 * s, 0])
        shin.add_joint(name=f"{leg}_lift", axis=[-s, c, 0], range=[-0.6, 0.6],
                       limited=mujoco.mjtLimited.mjLIMITED_TRUE)
        shin.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, size=[0.05, 0, 0],
                      fromto=[0, 0, 0, 0.15 * c, 0.15 * s, -0.35])
        shin.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[0.06, 0, 0], contype=1,
                      pos=[0.15 * c, 0.15 * s, -0.35], mass=0)
        for joint in (f"{leg}_swing", f"{leg}_lift"):
            spec.add_actuator(name=joint, target=joint, trntype=mujoco.mjtTrn.mjTRN_JOINT,
                              gear=[60, 0, 0, 0, 0, 0], ctrlrange=[-1, 1],
                              ctrllimited=mujoco.mjtLimited.mjLIMITED_TRUE)
    # The partition lives in the file: a torso module (no motors: observes and values)
    # and one module per leg, each owning its hip body and everything below it.
    modules = "; ".join(["torso=torso", *(f"{leg}={leg}_hip" for leg in LEG_ANGLES)])
    spec.add_text(name="modular_ppo:partition", data=modules)
    # So does its task (the keys of modular_ppo/body/task.py): an ant-like walk forward.
    spec.add_text(name="modular_ppo:task_reference", data="run forward, the ant's weights")
    spec.add_numeric(name="modular_ppo:frame_skip", data=[5], size=1)
    spec.add_numeric(name="modular_ppo:forward_reward_weight", data=[1.0], size=1)
    spec.add_numeric(name="modular_ppo:healthy_reward", data=[1.0], size=1)
    spec.add_numeric(name="modular_ppo:ctrl_cost_weight", data=[0.5], size=1)
    spec.add_numeric(name="modular_ppo:healthy_z", data=[0.15, 1.0], size=2)
    spec.add_numeric(name="modular_ppo:reset_noise_scale", data=[0.1], size=1)
    return spec


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=16_384, help="env steps to train")
    parser.add_argument("--out", type=Path, default=Path("runs"), help="runs root")
    args = parser.parse_args()

    path = args.out / "hexapod.xml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hexapod_spec().to_xml())
    body = BodyGraph.from_mjcf(path)
    print(f"{path}: {len(body.modules)} modules, {body.model.nu} actuators")
    for row in describe.module_table(body):
        print("  " + " | ".join(row))
    print(describe.module_tree_text(body))

    n_envs = 32
    config = TrainRunConfig(
        body=str(path),
        env=EnvConfig(episode_length=200),
        ppo=PPOConfig(n_envs=n_envs, rollout_length=16, n_minibatches=4,
                      total_steps=args.steps),
        eval=EvalConfig(n_envs=4, episode_length=200),
        eval_every_steps=args.steps // 2,
        checkpoint_every_steps=args.steps // 2,
        video=False,
        runs_root=args.out,
    )
    run_dir = run_training(config)
    print(f"trained: {run_dir}")


if __name__ == "__main__":
    main()
