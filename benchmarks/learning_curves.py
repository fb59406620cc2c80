"""Learning curves of modular_ppo runs (and Brax PPO), by wall time and by env steps.

Reads each run's summary.json, or the raw files of a run in progress (eval rows: eval/team_return, eval/forward_velocity,
eval/length, time/elapsed_s, compile included) and, optionally, the JSON written by
benchmarks/brax_ppo.py. Prints a table of eval return, forward velocity and episode length
at fixed wall-clock minutes (--out: also appended to that file), and draws every curve against
wall time and against env steps in one PNG.

    python benchmarks/learning_curves.py --run runs/ant-modular/<run> \
        --brax benchmarks/results/brax_ant.json --minutes 5 10 15 20 25 30 \
        --png benchmarks/results/ant_curves.png --note "..."
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
from pathlib import Path

from records import load_record  # beside this script

Curve = list[dict[str, float]]


def our_curve(run_dir: Path) -> Curve:
    rows = load_record(run_dir).eval_rows
    return [
        {"steps": r["step"], "wall_s": r["time/elapsed_s"], "eval_return": r["eval/team_return"],
         "eval_forward_velocity": r.get("eval/forward_velocity", float("nan")),
         "eval_episode_length": r.get("eval/length", float("nan"))}
        for r in rows if "eval/team_return" in r and "time/elapsed_s" in r
    ]


def brax_curve(path: Path) -> Curve:
    return json.loads(path.read_text())["curve"]


def at_minute(curve: Curve, minute: float) -> dict[str, float] | None:
    """The last eval done by `minute` minutes of wall time."""
    done = [row for row in curve if row["wall_s"] <= minute * 60]
    return done[-1] if done else None


def _fmt(row: dict[str, float] | None) -> str:
    if row is None:
        return "— | — | — | —"
    return (f"{row['steps'] / 1e6:.2f}M | {row['eval_return']:.0f} | "
            f"{row['eval_forward_velocity']:.2f} | {row.get('eval_episode_length', float('nan')):.0f}")


def _label(run_dir: Path) -> str:
    config = load_record(run_dir).config["config"]
    ppo = config["ppo"]
    return (f"{run_dir.name}: {config['body']} {config['network']['arch']} "
            f"({config.get('backend', 'mjx')}, {ppo['n_envs']} envs x {ppo['rollout_length']})")


def plot(curves: dict[str, Curve], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharey="row")
    for label, curve in curves.items():
        minutes = [r["wall_s"] / 60 for r in curve]
        steps = [r["steps"] / 1e6 for r in curve]
        for row, key in enumerate(("eval_return", "eval_forward_velocity")):
            values = [r[key] for r in curve]
            axes[row][0].plot(minutes, values, marker=".", label=label)
            axes[row][1].plot(steps, values, marker=".", label=label)
    for row, name in enumerate(("eval return", "eval forward velocity (m/s)")):
        axes[row][0].set_ylabel(name)
    axes[1][0].set_xlabel("wall time, compile included (min)")
    axes[1][1].set_xlabel("env steps (M)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path, action="append", required=True,
                        help="a run directory; repeat for several runs")
    parser.add_argument("--brax", type=Path, help="JSON written by benchmarks/brax_ppo.py")
    parser.add_argument("--minutes", type=float, nargs="+", default=[5, 10, 15, 20, 25, 30])
    parser.add_argument("--title", default="Learning curves")
    parser.add_argument("--note", default="", help="load conditions and anything unusual")
    parser.add_argument("--png", type=Path, help="also draw the curves to this PNG")
    parser.add_argument("--out", type=Path, help="also append the table to this file")
    args = parser.parse_args()

    curves = {_label(run): our_curve(run) for run in args.run}
    if args.brax:
        curves["Brax PPO (ant, 2048 envs)"] = brax_curve(args.brax)
    columns = " | ".join(f"{label}: steps | return | fwd vel | ep length" for label in curves)
    lines = [
        f"### {args.title} ({dt.date.today()})",
        "",
        f"- Command: `python benchmarks/learning_curves.py "
        f"{' '.join('--run ' + str(r) for r in args.run)}"
        f"{' --brax ' + str(args.brax) if args.brax else ''}`",
        f"- Host: {platform.machine()}, {os.cpu_count()} cores. {args.note}",
        "- Each cell: env steps done, then the last evaluation by that minute (wall time from "
        "the start of the process, compile and evaluations included): team return, forward "
        "velocity (m/s), episode length.",
        "",
        f"| wall min | {columns} |",
        "|---|" + "---|" * (4 * len(curves)),
    ]
    for minute in args.minutes:
        cells = " | ".join(_fmt(at_minute(curve, minute)) for curve in curves.values())
        lines.append(f"| {minute:g} | {cells} |")
    if args.png:
        lines += ["", f"Curves against wall time and env steps: `{plot(curves, args.png)}`."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        with open(args.out, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
