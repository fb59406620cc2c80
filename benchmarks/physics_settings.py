"""What each body's physics settings cost and change (issue 42, point 3; docs/physics.md):
per body, the geom pairs MJX tests, which of them ever touch, and for the declared setting
and each variant the raw env-steps/s of MJX and of MuJoCo's C simulator and how far the
variant's trajectory strays from the declared one's. One JSON row per line.

    python benchmarks/physics_settings.py                                  # CPU: small sizes
    python benchmarks/physics_settings.py --envs 4096 --budget-s 170 --out $OUT/physics.jsonl
    python benchmarks/physics_settings.py --bodies walker2d-modular --variants declared solver=CG

Rows, in order, for each body:
- "contacts": `collision_pairs` (what MJX tests each step), and per rollout kind
  (task/free x uniform/held controls, `collisions.touching_pairs` on the body without its
  exclusions, MuJoCo's C simulator) the pairs that touched and on how many physics steps:
  "task" episodes end where the task ends them, "free" ones only after --episode-length.
  "untouched" lists the pairs that never touched in the task rollouts; "exclusions" the
  body-pair `<exclude>` elements that would remove exactly them (a body pair goes only
  where none of its geom pairs touched);
- one "setting" row per variant: "declared" (the file's), "without-exclusions" (where the
  file excludes pairs), "exclude-untouched" (where the rollouts found pairs to exclude), and
  `physics_options.parse_options` words (solver=CG, iterations=4, eulerdamp=enable...):
  the pairs MJX tests, MJX env-steps/s (jit(vmap(step)) of --envs environments, random
  uniform controls, `frame_skip` physics steps per env step, no resets, compile time apart),
  C env-steps/s (one thread, mj_step with nstep=frame_skip, random uniform controls), and
  "deviation" from the declared setting: the max |qpos difference|, the team returns and
  the episode ends of both over a --deviation-steps rollout of the same fixed random actions
  from the same starts (the CPU backend's env, C MuJoCo, the body's task with its
  terminations); for exclusions, whether any excluded pair touched in the contact
  rollouts. Solver variants copy the compiled model (`with_physics`); exclusion variants
  are rebuilt from the MJCF text, whose printed numbers may round the model's last bits:
  the declared row's "xml_round_trip_deviation" is that noise floor (the bodies that fall
  are chaotic: a 1e-8 change grows to centimetres within an episode).
Cases run in order until --budget-s is spent (a case started runs to its end); rows are
flushed as they come, so a cut run keeps what it measured. Figures carry the date, the JAX
device and the 1-min load average.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.body.physics_options import parse_options, with_physics
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.collisions import (
    collision_pairs, excluded_pairs, pair_label, touching_pairs, without_exclusions)
from modular_ppo.env.physics import Physics

BODIES = ("ant-modular", "halfcheetah-modular", "hopper-modular", "walker2d-modular",
          "humanoid-modular")
VARIANTS = ("declared", "without-exclusions", "exclude-untouched", "solver=CG",
            "iterations=4", "ls_iterations=8", "eulerdamp=enable")
ROLLOUTS = (("task", "uniform"), ("task", "held"), ("free", "uniform"), ("free", "held"))
STEPS_PER_CALL = 20
"""Control steps per jitted MJX call."""


def contact_row(body: BodyGraph, steps: int, seed: int, episode_length: int) -> dict:
    """The "contacts" row (module docstring) of `body`."""
    full = without_exclusions(body)
    touched = {f"{kind}/{controls}": touching_pairs(full, steps, seed, controls, kind == "task",
                                                    episode_length)
               for kind, controls in ROLLOUTS}
    in_task = set().union(*(t for k, t in touched.items() if k.startswith("task/")))
    pairs = collision_pairs(full.model)
    untouched = [p for p in pairs if pair_label(full.model, p) not in in_task]
    return {"row": "contacts", "body": body.name, "control_steps": steps, "seed": seed,
            "collision_pairs": [pair_label(full.model, p) for p in pairs],
            "excluded_by_file": excluded_pairs(body), "touched": touched,
            "untouched": [pair_label(full.model, p) for p in untouched],
            "exclusions": _body_exclusions(full.model, pairs, untouched)}


def _body_exclusions(model: mujoco.MjModel, pairs: list, untouched: list) -> list[list[str]]:
    """[body1, body2] names of the body pairs all of whose tested geom pairs are untouched."""
    def bodies(pair):
        return tuple(sorted(int(model.geom_bodyid[g]) for g in pair))
    blocked = {bodies(p) for p in pairs if p not in untouched}
    chosen = sorted({bodies(p) for p in untouched} - blocked)
    return [[mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, b) or "world" for b in pair]
            for pair in chosen]


def variant_body(body: BodyGraph, variant: str, contacts: dict) -> BodyGraph | None:
    """`body` under `variant`, None where the variant changes nothing for it."""
    if variant == "declared":
        return body
    if variant == "without-exclusions":
        return without_exclusions(body) if contacts["excluded_by_file"] else None
    if variant == "exclude-untouched":
        existing = {tuple(sorted(p)) for p in _declared_exclusions(body)}
        new = [p for p in contacts["exclusions"] if tuple(sorted(p)) not in existing]
        if not new:
            return None
        spec = mujoco.MjSpec.from_string(body.xml)
        for body1, body2 in new:
            spec.add_exclude(bodyname1=body1, bodyname2=body2)
        return BodyGraph.from_mjcf(spec, None, body.name)
    return with_physics(body, parse_options(variant))


def _declared_exclusions(body: BodyGraph) -> list[tuple[str, str]]:
    spec = mujoco.MjSpec.from_string(body.xml)
    return [(e.bodyname1, e.bodyname2) for e in spec.excludes]


def mjx_rate(body: BodyGraph, envs: int, seconds: float, seed: int) -> dict:
    """MJX env-steps/s of jit(vmap(step)) over `envs` environments (module docstring);
    mjx_compile_s includes two calls' run time."""
    physics = Physics(body, contact_forces=False)
    low, high = body.model.actuator_ctrlrange.T.astype(np.float32)
    key = jax.random.key(seed)
    qpos = jnp.asarray(body.init_qpos, jnp.float32) + jax.random.uniform(
        key, (envs, body.model.nq), minval=-0.01, maxval=0.01)
    data = jax.vmap(physics.start)(qpos, jnp.zeros((envs, body.model.nv)))

    def one(carry, step_key):
        action = jax.random.uniform(step_key, (envs, body.model.nu), minval=-1.0, maxval=1.0)
        ctrl = (low + high) / 2 + action * (high - low) / 2
        return jax.vmap(physics.step)(carry, ctrl), None

    run = jax.jit(lambda d, k: jax.lax.scan(one, d, jax.random.split(k, STEPS_PER_CALL))[0])
    start = time.perf_counter()
    # Twice: the first call's output may differ from its input in weak types, which the
    # second call then compiles for.
    data = jax.block_until_ready(run(run(data, key), key))
    compile_s = time.perf_counter() - start
    calls, start = 0, time.perf_counter()
    while calls < 2 or time.perf_counter() - start < seconds:
        data = run(data, jax.random.fold_in(key, calls))
        calls += 1
        jax.block_until_ready(data)
    elapsed = time.perf_counter() - start
    finite = bool(jnp.isfinite(data.qpos).all())
    return {"mjx_env_steps_per_s": round(envs * STEPS_PER_CALL * calls / elapsed),
            "mjx_compile_s": round(compile_s, 2), "mjx_envs": envs, "mjx_finite": finite}


def cpu_rate(body: BodyGraph, seconds: float, seed: int) -> dict:
    """C MuJoCo env-steps/s on one thread (module docstring); restarts every 1000 steps."""
    model, data = body.model, mujoco.MjData(body.model)
    rng = np.random.default_rng(seed)
    low, high = model.actuator_ctrlrange.T
    steps, start = 0, time.perf_counter()
    while steps < 100 or time.perf_counter() - start < seconds:
        if steps % 1000 == 0:
            mujoco.mj_resetData(model, data)
            data.qpos[:] = body.init_qpos
        data.ctrl[:] = (low + high) / 2 + rng.uniform(-1, 1, model.nu) * (high - low) / 2
        mujoco.mj_step(model, data, nstep=body.frame_skip)
        steps += 1
    return {"cpu_env_steps_per_s": round(steps / (time.perf_counter() - start))}


def rollout(body: BodyGraph, steps: int, seed: int) -> tuple[np.ndarray, float, int]:
    """[steps, nq] qpos, the team return and the number of episode ends of one env of the
    CPU backend under fixed random actions (key `seed`): the body's task, with its
    terminations and fresh starts (the same keys in every variant)."""
    with jax.default_device(jax.devices("cpu")[0]):
        env = make_env(body, EnvConfig(episode_length=steps + 1), "cpu", nthread=1)
        keys = jax.random.split(jax.random.key(seed), steps + 1)

        def one(state, key):
            action = {m: jax.random.uniform(jax.random.fold_in(key, i), (n,), minval=-1.0,
                                            maxval=1.0)
                      for i, (m, n) in enumerate(env.action_sizes.items())}
            after = env.step(state, action)
            return after, (after.data.qpos, sum(after.reward.values()), after.done)

        run = jax.jit(lambda k: jax.lax.scan(one, env.reset(k[0]), k[1:])[1])
        qpos, reward, done = run(keys)
        return np.asarray(qpos), float(jnp.sum(reward)), int(jnp.sum(done))


def deviation(reference: tuple[np.ndarray, float, int], body: BodyGraph, steps: int,
              seed: int) -> dict:
    """How far `body`'s rollout strays from the declared setting's `reference`."""
    qpos, team_return, ends = rollout(body, steps, seed)
    return {"steps": steps, "max_abs_qpos": float(np.max(np.abs(qpos - reference[0]))),
            "return": round(team_return, 4), "declared_return": round(reference[1], 4),
            "abs_return_difference": round(abs(team_return - reference[1]), 4),
            "episode_ends": ends, "declared_episode_ends": reference[2]}


def setting_row(body: BodyGraph, variant: str, variant_of: BodyGraph, contacts: dict,
                reference: tuple[np.ndarray, float], args: argparse.Namespace) -> dict:
    """One "setting" row (module docstring)."""
    model = variant_of.model
    excluded = excluded_pairs(variant_of)
    touched = set().union(*contacts["touched"].values())
    task_touched = set().union(*(t for k, t in contacts["touched"].items() if k.startswith("task/")))
    row = {"row": "setting", "body": body.name, "variant": variant,
           "solver": "Newton" if model.opt.solver == mujoco.mjtSolver.mjSOL_NEWTON else "CG",
           "iterations": int(model.opt.iterations), "ls_iterations": int(model.opt.ls_iterations),
           "disableflags": _flag_names(model.opt.disableflags),
           "collision_pairs": len(collision_pairs(model)), "excluded_pairs": excluded,
           "excluded_touched_in_task": sorted(set(excluded) & task_touched),
           "excluded_touched_anywhere": sorted(set(excluded) & touched)}
    if not args.skip_mjx:
        row |= mjx_rate(variant_of, args.envs, args.seconds, args.seed)
    row |= cpu_rate(variant_of, args.seconds, args.seed)
    if variant != "declared":
        row["deviation"] = deviation(reference, variant_of, args.deviation_steps, args.seed)
    else:  # the noise floor of variants rebuilt from the MJCF text (the exclusion ones)
        row["xml_round_trip_deviation"] = deviation(
            reference, BodyGraph.from_mjcf(body.xml, None, body.name), args.deviation_steps,
            args.seed)
    return row


def _flag_names(bits: int) -> list[str]:
    return [name.removeprefix("mjDSBL_").lower()
            for name, bit in mujoco.mjtDisableBit.__members__.items()
            if name != "mjNDISABLE" and bits & bit.value]


def measure(args: argparse.Namespace, write: Callable[[dict], None]) -> None:
    """Every body's rows, case by case, until the budget is spent."""
    deadline = time.perf_counter() + args.budget_s
    for name in args.bodies:
        if time.perf_counter() > deadline:
            break
        body = load_body(name)
        contacts = contact_row(body, args.contact_steps, args.seed, args.episode_length)
        write(contacts)
        reference = rollout(body, args.deviation_steps, args.seed)
        for variant in args.variants:
            variant_of = variant_body(body, variant, contacts)
            if variant_of is None:
                continue
            if time.perf_counter() > deadline:
                write({"row": "skipped", "body": name, "variant": variant, "why": "budget"})
                continue
            write(setting_row(body, variant, variant_of, contacts, reference, args))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bodies", nargs="+", default=list(BODIES))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS),
                        help='"declared", "without-exclusions", "exclude-untouched" or '
                        'physics_options words, one variant per argument ("solver=CG iterations=4")')
    parser.add_argument("--envs", type=int, default=64, help="MJX batch size")
    parser.add_argument("--skip-mjx", action="store_true", help="no MJX rates (C ones only)")
    parser.add_argument("--seconds", type=float, default=1.0, help="timing per rate, after compiling")
    parser.add_argument("--budget-s", type=float, default=600.0, help="start no case after this")
    parser.add_argument("--contact-steps", type=int, default=5000,
                        help="control steps of each contact rollout kind")
    parser.add_argument("--episode-length", type=int, default=1000)
    parser.add_argument("--deviation-steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="append the rows to this JSONL file too")
    args = parser.parse_args(argv)
    meta = {"date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "device": jax.devices()[0].device_kind, "command": " ".join(sys.argv)}
    out = args.out.open("a") if args.out else None

    def write(row: dict) -> None:
        line = json.dumps(row | meta | {"load_1min": os.getloadavg()[0]})
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()

    measure(args, write)


if __name__ == "__main__":
    main()
