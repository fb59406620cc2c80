"""Brax PPO on the same MJCF and physics as a bundled body, for side-by-side figures.

Needs the `bench` extra (`pip install -e '.[bench]'`). Trains Brax's PPO with the settings
Brax publishes for the env (its MJX ant, halfcheetah or humanoid task: Brax's reward and
episode rules) on bodies/<body>-modular.xml with the solver settings from that file, for a
wall-time budget, and writes a JSON learning curve: env steps, wall seconds (compile
included), eval return and mean forward velocity.

    python benchmarks/brax_ppo.py --task ant --minutes 30 --out benchmarks/results/brax_ant.json

`make_env` and `brax_ppo_settings` are shared with the throughput benchmark (cases.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

from modular_ppo.interop.brax_env import install_jax_compatibility  # noqa: F401 (cases.py too)

BODIES = Path(__file__).resolve().parents[1] / "bodies"

PUBLISHED = {
    "ant": dict(reward_scaling=10, unroll_length=5, num_minibatches=32, num_updates_per_batch=4,
                discounting=0.97, entropy_cost=1e-2, num_envs=2048, batch_size=1024),
    "halfcheetah": dict(reward_scaling=1, unroll_length=20, num_minibatches=32,
                        num_updates_per_batch=8, discounting=0.95, entropy_cost=1e-3,
                        num_envs=2048, batch_size=512),
    "humanoid": dict(reward_scaling=0.1, unroll_length=10, num_minibatches=32,
                     num_updates_per_batch=8, discounting=0.97, entropy_cost=1e-3,
                     num_envs=2048, batch_size=1024),
}
"""Brax's published PPO settings per env (its training notebook). Brax publishes SAC, not
PPO, settings for hopper and walker2d, so those have no Brax PPO row."""

BRAX_BODIES = {"ant": "ant-modular", "halfcheetah": "halfcheetah-modular",
               "humanoid": "humanoid-modular"}
"""Brax env -> the bundled body whose MJCF (physics settings included) it is run on."""


class _Deadline(Exception):
    pass


def brax_ppo_settings(task: str = "ant", seed: int = 0, **shape: int) -> dict:
    """Keyword arguments of Brax's `ppo.train` for `task` with its published settings;
    `shape` overrides num_envs, batch_size, unroll_length, num_minibatches,
    num_updates_per_batch (the throughput benchmark's smoke shape)."""
    return dict(
        episode_length=1000,
        normalize_observations=True,
        action_repeat=1,
        learning_rate=3e-4,
        seed=seed,
        **{**PUBLISHED[task], **shape},
    )


def make_env(task: str = "ant"):
    """Brax's `task` env (its reward, termination and observations) on the bundled body's
    MJCF: timestep, solver and iterations from that file, Brax's frame skip (5)."""
    import importlib

    import mujoco
    from brax.io import mjcf

    module, cls = {"ant": ("ant", "Ant"), "halfcheetah": ("half_cheetah", "Halfcheetah"),
                   "humanoid": ("humanoid", "Humanoid")}[task]
    base = getattr(importlib.import_module(f"brax.envs.{module}"), cls)
    body = BODIES / f"{BRAX_BODIES[task]}.xml"

    class OnModularMJCF(base):
        def __init__(self, **kwargs):
            super().__init__(backend="mjx", **kwargs)
            sys = mjcf.load_model(mujoco.MjModel.from_xml_path(str(body)))
            self._sys = sys
            self.sys = sys

    return OnModularMJCF()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=sorted(PUBLISHED), default="ant")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--num-evals", type=int, default=40)
    parser.add_argument("--num-timesteps", type=int, default=30_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/brax_ant.json"))
    args = parser.parse_args()

    from brax.training.agents.ppo import train as ppo

    install_jax_compatibility()
    env = make_env(args.task)
    start = time.perf_counter()
    deadline = start + args.minutes * 60
    curve: list[dict[str, float]] = []

    def progress(num_steps: int, metrics: dict) -> None:
        length = float(metrics.get("eval/avg_episode_length", 0.0)) or 1.0
        row = {
            "steps": int(num_steps),
            "wall_s": time.perf_counter() - start,
            "eval_return": float(metrics.get("eval/episode_reward", float("nan"))),
            "eval_forward_velocity": float(metrics.get("eval/episode_x_velocity", 0.0)) / length,
            "eval_episode_length": length,
            "train_sps": float(metrics.get("training/sps", float("nan"))),
        }
        curve.append(row)
        print(json.dumps(row), flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"config": vars(args) | {"out": str(args.out)}, "curve": curve}, indent=1))
        if time.perf_counter() > deadline:
            raise _Deadline

    train = functools.partial(
        ppo.train,
        num_timesteps=args.num_timesteps,
        num_evals=args.num_evals,
        progress_fn=progress,
        **brax_ppo_settings(args.task, args.seed),
    )
    try:
        train(environment=env)
    except _Deadline:
        pass
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
