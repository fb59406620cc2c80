"""Brax PPO on the same ant MJCF and physics as `ant-modular`, for side-by-side figures.

Needs the `bench` extra (`pip install -e '.[bench]'`). Trains Brax's PPO (its MJX ant task:
same reward formula and episode rules) on bodies/ant-modular.xml with the solver settings
from that file, for a wall-time budget, and writes a JSON learning curve:
env steps, wall seconds (compile included), eval return and mean forward velocity.

    python benchmarks/brax_ppo.py --minutes 30 --out benchmarks/results/brax_ant.json

`make_env` and `brax_ppo_settings` are shared with the throughput benchmark (cases.py).
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from pathlib import Path

BODY = Path(__file__).resolve().parents[1] / "bodies" / "ant-modular.xml"


class _Deadline(Exception):
    pass


def brax_ppo_settings(
    num_envs: int = 2048,
    batch_size: int = 1024,
    unroll_length: int = 5,
    num_minibatches: int = 32,
    num_updates_per_batch: int = 4,
    seed: int = 0,
) -> dict:
    """Brax's published PPO settings for its MJX ant (keyword arguments of ppo.train)."""
    return dict(
        reward_scaling=10,
        episode_length=1000,
        normalize_observations=True,
        action_repeat=1,
        unroll_length=unroll_length,
        num_minibatches=num_minibatches,
        num_updates_per_batch=num_updates_per_batch,
        discounting=0.97,
        learning_rate=3e-4,
        entropy_cost=1e-2,
        num_envs=num_envs,
        batch_size=batch_size,
        seed=seed,
    )


def install_jax_compatibility() -> None:
    """Brax 0.14.2's PPO calls `jax.device_put_replicated`, which JAX 0.10 removed: give it
    the replacement (a leading axis of one copy per device, as pmap expects)."""
    import jax
    import jax.numpy as jnp

    def device_put_replicated(tree, devices):
        return jax.tree.map(lambda x: jnp.stack([jnp.asarray(x)] * len(devices)), tree)

    jax.device_put_replicated = device_put_replicated


def make_env():
    """Brax's Ant task on bodies/ant-modular.xml (timestep, solver and iterations taken from
    the file; 5 physics steps per control step, as Brax's ant and `ant-modular`)."""
    import mujoco
    from brax.envs.ant import Ant
    from brax.io import mjcf

    class ModularAntMJCF(Ant):
        def __init__(self, **kwargs):
            super().__init__(backend="mjx", **kwargs)
            model = mujoco.MjModel.from_xml_path(str(BODY))
            sys = mjcf.load_model(model)
            self._sys = sys
            self.sys = sys

    return ModularAntMJCF()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--num-envs", type=int, default=2048)
    parser.add_argument("--batch-size", type=int, default=1024)
    parser.add_argument("--unroll-length", type=int, default=5)
    parser.add_argument("--num-minibatches", type=int, default=32)
    parser.add_argument("--num-updates-per-batch", type=int, default=4)
    parser.add_argument("--num-evals", type=int, default=40)
    parser.add_argument("--num-timesteps", type=int, default=30_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/brax_ant.json"))
    args = parser.parse_args()

    from brax.training.agents.ppo import train as ppo

    install_jax_compatibility()
    env = make_env()
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
        **brax_ppo_settings(args.num_envs, args.batch_size, args.unroll_length,
                            args.num_minibatches, args.num_updates_per_batch, args.seed),
    )
    try:
        train(environment=env)
    except _Deadline:
        pass
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
