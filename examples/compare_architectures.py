"""Train one body with several architectures and compare their per-module critics.

Writes one run per architecture and a PNG with the runs overlaid (critic loss and explained
variance per module), then names each run's lagging critic.

    python examples/compare_architectures.py --body ant-modular --archs separate shared --steps 500000
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
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--archs", nargs="+", default=["separate", "shared"])
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--out", type=Path, default=Path("runs"))
    args = parser.parse_args()

    runs = []
    for arch in args.archs:
        config = TrainRunConfig(
            body=args.body,
            network=NetworkConfig(arch=arch),
            ppo=PPOConfig(n_envs=64, rollout_length=16, total_steps=args.steps),
            eval_every_steps=0,
            checkpoint_every_steps=args.steps,
            video=False,
            runs_root=args.out,
            run_name=f"compare-{arch}",
        )
        runs.append(analysis.load_run(run_training(config)))
    png = analysis.plot_runs(runs, args.out / f"compare-{args.body}.png")
    for run in runs:
        print(f"{run.label}: lagging critic {analysis.lagging_module(run)}")
    print(f"plot: {png}")


if __name__ == "__main__":
    main()
