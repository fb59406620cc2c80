"""The bodies of MaMuJoCo's scenarios: Gymnasium's own v5 MJCF files, annotated with
Gymnasium v5's task and MaMuJoCo's partitions.

`mamujoco_body(scenario, agent_conf)` loads the file Gymnasium's `<Scenario>-v5` loads
(ant.xml, half_cheetah.xml, hopper.xml, walker2d_v5.xml, humanoid.xml from the installed
gymnasium), gives the bodies Gymnasium leaves unnamed the names MaMuJoCo's tables use
(the ant's feet: foot_1..foot_4), and adds, as `modular_ppo:` annotations:
- frame_skip and the task of Gymnasium's v5 env with its default arguments (`GYMNASIUM_V5`:
  weights, healthy ranges and their bounds, what the velocity and height are read from,
  reset noise and its distribution);
- the partition: module "torso" (the root body, no motor) and modules "agent_0".. in
  MaMuJoCo's agent order, each owning the bodies of its agent's joints and their
  joint-less ancestors below the root.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import mujoco

from modular_ppo.body import BodyGraph
from modular_ppo.body.task import add_annotations
from modular_ppo.env.mamujoco_graphs import SCENARIOS, Scenario
from modular_ppo.interop.errors import InteropError

GYMNASIUM_V5: dict[str, tuple[str, int, dict[str, str | tuple[float, ...]]]] = {
    "Ant": ("ant.xml", 5, {
        "forward_reward_weight": (1.0,), "velocity_source": "root", "healthy_reward": (1.0,),
        "ctrl_cost_weight": (0.5,), "ctrl_cost_on": "action", "contact_cost_weight": (5e-4,),
        "contact_force_range": (-1.0, 1.0), "healthy_z": (0.2, 1.0),
        "height_source": "root_joint", "healthy_bounds": "inclusive",
        "reset_noise_scale": (0.1,), "reset_qvel_noise": "normal",
    }),
    "HalfCheetah": ("half_cheetah.xml", 5, {
        "forward_reward_weight": (1.0,), "velocity_source": "root_joint",
        "healthy_reward": (0.0,), "ctrl_cost_weight": (0.1,), "ctrl_cost_on": "action",
        "reset_noise_scale": (0.1,), "reset_qvel_noise": "normal",
    }),
    "Hopper": ("hopper.xml", 4, {
        "forward_reward_weight": (1.0,), "velocity_source": "root_joint",
        "healthy_reward": (1.0,), "ctrl_cost_weight": (1e-3,), "ctrl_cost_on": "action",
        "healthy_z": (0.7, float("inf")), "healthy_angle": (-0.2, 0.2),
        "healthy_state": (-100.0, 100.0), "height_source": "root_joint",
        "healthy_bounds": "strict", "reset_noise_scale": (5e-3,), "reset_qvel_noise": "uniform",
    }),
    "Walker2d": ("walker2d_v5.xml", 4, {
        "forward_reward_weight": (1.0,), "velocity_source": "root_joint",
        "healthy_reward": (1.0,), "ctrl_cost_weight": (1e-3,), "ctrl_cost_on": "action",
        "healthy_z": (0.8, 2.0), "healthy_angle": (-1.0, 1.0), "height_source": "root_joint",
        "healthy_bounds": "strict", "reset_noise_scale": (5e-3,), "reset_qvel_noise": "uniform",
    }),
    "Humanoid": ("humanoid.xml", 5, {
        "forward_reward_weight": (1.25,), "velocity_source": "com", "healthy_reward": (5.0,),
        "ctrl_cost_weight": (0.1,), "ctrl_cost_on": "ctrl", "contact_cost_weight": (5e-7,),
        "contact_cost_range": (-float("inf"), 10.0), "healthy_z": (1.0, 2.0),
        "height_source": "root_joint", "healthy_bounds": "strict",
        "reset_noise_scale": (1e-2,), "reset_qvel_noise": "uniform",
    }),
}
"""Scenario -> (Gymnasium's v5 MJCF file, frame_skip, its task as annotations), from the
v5 envs' default arguments and their `step` / `is_healthy` (gymnasium/envs/mujoco/*_v5.py)."""

SCENARIO_NAMES = tuple(GYMNASIUM_V5)


def scenario_named(scenario: str) -> Scenario:
    """MaMuJoCo's graph tables for `scenario` ("Ant", ...); InteropError lists the names."""
    for table in SCENARIOS.values():
        if table.name == scenario:
            return table
    raise InteropError(
        f"scenario={scenario!r}: the MaMuJoCo scenarios served here are "
        f"{', '.join(SCENARIO_NAMES)} (and their agent_conf: "
        f"{'; '.join(s.name + ' ' + ', '.join(s.partitions) for s in SCENARIOS.values())})."
    )


def gymnasium_asset(file: str) -> Path:
    """The path of one of Gymnasium's MuJoCo MJCF files (needs gymnasium installed)."""
    import gymnasium.envs.mujoco as gymnasium_mujoco

    return Path(gymnasium_mujoco.__file__).parent / "assets" / file


def mamujoco_body(scenario: str, agent_conf: str) -> BodyGraph:
    """The body of MaMuJoCo's `scenario` with partition `agent_conf` (module docstring)."""
    table = scenario_named(scenario)
    if agent_conf not in table.partitions:
        raise InteropError(
            f"agent_conf={agent_conf!r}: MaMuJoCo's {scenario} defines "
            f"{', '.join(repr(p) for p in table.partitions)}."
        )
    file, frame_skip, task = GYMNASIUM_V5[scenario]
    spec = mujoco.MjSpec.from_file(str(gymnasium_asset(file)))
    for body, name in zip(spec.bodies, table.bodies):
        if not body.name:
            body.name = name
    add_annotations(spec, {"frame_skip": (frame_skip,),
                           "task_reference": f"Gymnasium {scenario}-v5", **task})
    with warnings.catch_warnings():
        # half_cheetah.xml's settotalmass, which MuJoCo still applies but calls deprecated
        warnings.filterwarnings("ignore", "compiler attribute 'settotalmass'")
        model = spec.compile()
        partition = {"torso": ["torso"]} | {
            f"agent_{i}": _agent_bodies(model, table, agent)
            for i, agent in enumerate(table.partitions[agent_conf])
        }
        return BodyGraph.from_mjcf(spec, partition, f"mamujoco-{scenario}-{agent_conf}")


def _agent_bodies(model: mujoco.MjModel, table: Scenario, agent: tuple[str, ...]) -> list[str]:
    """The bodies of the agent's joints and their joint-less ancestors below the root."""
    bodies: list[str] = []
    for label in agent:
        joint = table.actuator_joints[table.node(label).actuator]
        body = int(model.jnt_bodyid[model.joint(joint).id])
        while body > 1:
            name = model.body(body).name
            if name not in bodies:
                bodies.append(name)
            body = int(model.body_parentid[body])
            if model.body_jntnum[body]:
                break
    return bodies
