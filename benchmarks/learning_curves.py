"""Learning curves of a modular_ppo run against Brax PPO, by wall time and by env steps.

Reads our run's metrics.jsonl (eval rows: eval/team_return, eval/forward_velocity,
time/elapsed_s) and the JSON written by benchmarks/brax_ppo.py, prints a table of eval return
and forward velocity at fixed wall-clock minutes for both, and appends it to BENCHMARKS.md.

    python benchmarks/learning_curves.py --run runs/ant-modular/<run> \
        --brax benchmarks/results/brax_ant.json --minutes 5 10 15 20 25 30 --note "..."
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
from pathlib import Path


def our_curve(run_dir: Path) -> list[dict[str, float]]:
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()
            if line.strip()]
    return [
        {"steps": r["step"], "wall_s": r["time/elapsed_s"], "eval_return": r["eval/team_return"],
         "eval_forward_velocity": r.get("eval/forward_velocity", float("nan"))}
        for r in rows if "eval/team_return" in r and "time/elapsed_s" in r
    ]


def brax_curve(path: Path) -> list[dict[str, float]]:
    return json.loads(path.read_text())["curve"]


def at_minute(curve: list[dict[str, float]], minute: float) -> dict[str, float] | None:
    """The last eval done by `minute` minutes of wall time."""
    done = [row for row in curve if row["wall_s"] <= minute * 60]
    return done[-1] if done else None


def _fmt(row: dict[str, float] | None) -> str:
    if row is None:
        return "— | — | —"
    return (f"{row['steps'] / 1e6:.2f}M | {row['eval_return']:.0f} | "
            f"{row['eval_forward_velocity']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--brax", type=Path, required=True)
    parser.add_argument("--minutes", type=float, nargs="+", default=[5, 10, 15, 20, 25, 30])
    parser.add_argument("--note", default="", help="load conditions and anything unusual")
    parser.add_argument("--out", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args()

    ours, brax = our_curve(args.run), brax_curve(args.brax)
    config = json.loads((args.run / "config.json").read_text())["config"]
    lines = [
        f"### Learning, ant-modular vs Brax PPO ({dt.date.today()})",
        "",
        f"Host: {platform.machine()}, {platform.processor() or 'CPU'}; {args.note}",
        f"Ours: `{args.run}` arch={config['network']['arch']}, n_envs={config['ppo']['n_envs']}, "
        f"rollout={config['ppo']['rollout_length']}. Brax: `{args.brax}`.",
        "",
        "| wall min | ours steps | ours eval return | ours fwd vel | Brax steps | Brax eval return | Brax fwd vel |",
        "|---|---|---|---|---|---|---|",
    ]
    for minute in args.minutes:
        lines.append(f"| {minute:g} | {_fmt(at_minute(ours, minute))} | {_fmt(at_minute(brax, minute))} |")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "a") as f:
        f.write("\n" + text)


if __name__ == "__main__":
    main()
