"""Per-module advantages against one team-summed advantage, on the same body and seed.

With per-module advantages each leg's policy is trained on its own reward stream; with
`combine_advantages` every policy is trained on the sum of all modules' advantages (the
team's). The script trains both and prints their final eval team returns side by side.

    python examples/team_vs_module_advantages.py --body ant-modular --steps 500000
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from modular_ppo.ppo import PPOConfig
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.train_run import run_training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular")
    parser.add_argument("--steps", type=int, default=65_536)
    parser.add_argument("--out", type=Path, default=Path("runs"))
    args = parser.parse_args()

    for combine in (False, True):
        name = "team-advantage" if combine else "module-advantages"
        config = TrainRunConfig(
            body=args.body,
            ppo=PPOConfig(n_envs=64, rollout_length=16, total_steps=args.steps,
                          combine_advantages=combine),
            eval_every_steps=0,
            checkpoint_every_steps=args.steps,
            video=False,
            runs_root=args.out,
            run_name=name,
        )
        final = json.loads((run_training(config) / "eval.json").read_text())
        print(f"{name:>18}: eval team return {final['eval/team_return']:.1f}, "
              f"forward velocity {final.get('eval/forward_velocity', float('nan')):.2f}")


if __name__ == "__main__":
    main()
