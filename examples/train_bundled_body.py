"""Train a bundled body from Python and read the per-module results back.

    python examples/train_bundled_body.py --body halfcheetah-modular --steps 200000
"""

from __future__ import annotations

import argparse
from pathlib import Path

from modular_ppo import analysis
from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import PPOConfig
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.train_run import run_training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="hopper-modular")
    parser.add_argument("--arch", default="shared")
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--out", type=Path, default=Path("runs"))
    args = parser.parse_args()

    config = TrainRunConfig(
        body=args.body,
        network=NetworkConfig(arch=args.arch),
        ppo=PPOConfig(n_envs=64, rollout_length=16, total_steps=args.steps),
        eval_every_steps=args.steps // 4,
        checkpoint_every_steps=args.steps // 2,
        video=False,
        runs_root=args.out,
    )
    run = analysis.load_run(run_training(config))
    for row in analysis.module_table(run):
        print(f"{row['module']:>14}: critic loss {row['critic loss (end)']:.3g}, "
              f"explained variance {row['explained var (end)']:.2f}, "
              f"return {row['return (end)']:.3g}")


if __name__ == "__main__":
    main()
