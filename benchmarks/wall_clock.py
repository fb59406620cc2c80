"""The team return a training command reaches within a wall-clock budget, counted from the
command (imports, compile and evaluations included): issue 42's "team return >= 6,000
within 5 minutes of the command" on the accelerator.

    python benchmarks/wall_clock.py --budget-s 300 --out DIR -- --body ant-modular --backend cpu-pipelined
    python benchmarks/wall_clock.py --budget-s 300 -- --body ant-modular --eval-every-steps 5000000
                                        # the chip's records: an evaluation every 5M steps
    python benchmarks/wall_clock.py --budget-s 300 -- --body ant-modular --eval-every-steps 5000000 --seed 1
                                        # another seed (one run per seed: one per device call)

runs `cli.py train FLAGS` (video off) until the budget, then kills it, and writes
DIR/wall_clock.json: every evaluation with its step and its wall seconds from the command,
training throughput, the first progress line's time, and the best evaluation within the
budget.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from cli_runs import PROGRESS_PREFIX, run_cli
from report import environment_facts


def evaluations(rows: list[dict], offset_s: float) -> list[dict]:
    """Each row with an evaluation: step, team return and wall seconds from the command
    (`time/elapsed_s` counts from the run's start; `offset_s` is the command's time before)."""
    return [{"step": row["step"], "eval_team_return": round(row["eval/team_return"], 1),
             "wall_s": round(row["time/elapsed_s"] + offset_s, 1)}
            for row in rows if "eval/team_return" in row]


def summary(rows: list[dict], first_progress_s: float | None, budget_s: float) -> dict:
    """What a run's metrics rows say about the budget (see the module docstring): only the
    rows logged within it count."""
    if not rows or first_progress_s is None:
        return {"error": "no progress line within the budget"}
    offset_s = first_progress_s - rows[0]["time/elapsed_s"]
    rows = [row for row in rows if row["time/elapsed_s"] + offset_s <= budget_s]
    evals = evaluations(rows, offset_s)
    rates = sorted(row["throughput/env_steps_per_s"] for row in rows
                   if "throughput/env_steps_per_s" in row)
    return {
        "first_progress_s": round(first_progress_s, 1),
        "steps_within_budget": rows[-1]["step"],
        "training_env_steps_per_s_median": round(rates[len(rates) // 2]) if rates else None,
        "evaluation_s_total": round(sum(row.get("time/eval_s", 0.0) for row in rows), 1),
        "best_eval_team_return": max((e["eval_team_return"] for e in evals), default=None),
        "last_eval_team_return": evals[-1]["eval_team_return"] if evals else None,
        "evaluations": evals,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=300.0)
    parser.add_argument("--out", type=Path, default=Path("."))
    parser.add_argument("train_flags", nargs="*", help="flags for cli.py train (after --)")
    args = parser.parse_args()
    flags = [*args.train_flags, "--no-video"]
    with tempfile.TemporaryDirectory() as runs_root:
        run = run_cli(flags, Path(runs_root), args.budget_s,
                      mark=lambda line: line.startswith(PROGRESS_PREFIX))
    record = {"command": "cli.py train " + " ".join(flags), "budget_s": args.budget_s,
              **environment_facts(), **summary(run.rows, run.marked_s, args.budget_s)}
    if run.returncode not in (None, 0, -9):
        record["tail"] = run.lines[-20:]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "wall_clock.json").write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "evaluations"}, indent=1))


if __name__ == "__main__":
    main()
