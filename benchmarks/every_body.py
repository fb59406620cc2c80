"""Learning on every bundled body with the CLI defaults: eval return and forward velocity at
1M, 2M and 5M env steps and at 10 and 20 minutes wall, over seeds, beside published PPO figures.

    python benchmarks/every_body.py run --bodies hopper-modular walker2d-modular --seeds 0 1 2 \
        --total-steps 1000000 --minutes 20 --cores 0 1
    python benchmarks/every_body.py report          # table to stdout; --write: BENCHMARKS.md too

`run` trains each (body, seed) with `cli.py train --body BODY --seed SEED` (nothing else
changed: the body's own task and PPO preset), one process per core given (`taskset`),
each until --total-steps or --minutes, evaluating every 250k steps (32 episodes), and
keeps under benchmarks/results/every_body/<body>/seed<k> each run's summary.json
(benchmarks/records.py; its raw files stay out of git, checkpoints are dropped), the load
average sampled every 30 s beside them. `report` reads every run there (summary, or the raw
files of a run in progress): a
column is filled only where every seed reached it (steps or wall time), with the mean and
the spread (min-max) over seeds, the number of seeds, the load seen during the runs, and
the published anchors (same task definitions: Gymnasium MuJoCo v4/v5 rewards).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path

from pinned_runs import run_pinned  # beside this script
from records import has_record, load_record, load_summary, write_summary

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "every_body"
"""Default results folder: <results>/<body>/seed<k> run directories, load.jsonl."""
BODIES = ("ant-modular", "halfcheetah-modular", "hopper-modular", "walker2d-modular",
          "humanoid-modular", "swimmer-6", "centipede-6")
STEP_MARKS = (1_000_000, 2_000_000, 5_000_000)
"""Env-step columns: 1M for the published anchors, 2M for SB3 zoo's Walker2d figure."""
MINUTE_MARKS = (10, 20)
PUBLISHED_1M = {
    "halfcheetah-modular": "CleanRL 1,443; SB3 zoo 3,143",
    "hopper-modular": "CleanRL 2,383; SB3 zoo 3,578",
    "walker2d-modular": "CleanRL 2,288; SB3 zoo 4,384 (at 2M)",
    "humanoid-modular": "CleanRL 716",
}
"""Published PPO returns at 1M env steps, MuJoCo v4 (same reward definitions as v5)."""


def run(bodies: list[str], seeds: list[int], total_steps: int, minutes: float,
        cores: list[int], extra: list[str], results: Path) -> None:
    run_pinned(
        [(body, seed) for body in bodies for seed in seeds], cores, results,
        start=lambda job, core: _start(*job, total_steps, minutes, core, extra, results),
        ended=lambda job, returncode, busy: keep_records_only(
            results / job[0] / f"seed{job[1]}"),
    )


def _start(body: str, seed: int, total_steps: int, minutes: float, core: int,
           extra: list[str], results: Path) -> subprocess.Popen:
    out = results / body
    out.mkdir(parents=True, exist_ok=True)
    name = f"seed{seed}"
    if (out / name).exists():
        raise SystemExit(f"{out / name} exists: move it away to run it again.")
    command = [
        "taskset", "-c", str(core), "timeout", "--signal=INT", str(int(minutes * 60)),
        sys.executable, str(ROOT / "cli.py"), "train", "--body", body, "--seed", str(seed),
        "--ppo.total-steps", str(total_steps), "--eval-every-steps", "250000",
        "--eval.n-envs", "32", "--no-video", "--runs-root", str(results), "--run-name", name,
        *extra,
    ]
    # The run dir is <runs_root>/<body>/<run_name>; a file path body gets its stem.
    log = open(out / f"{name}.log", "w")
    log.write(" ".join(command) + "\n")  # the run's summary takes its command from here
    log.flush()
    print(" ".join(command), flush=True)
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def keep_records_only(run_dir: Path) -> None:
    """A finished benchmark run writes its summary.json (benchmarks/records.py: what the
    reports read, kept in the repository); its checkpoints and TensorBoard events go, its raw
    files stay on disk (.gitignore keeps them out)."""
    write_summary(run_dir)
    for name in ("checkpoints", "tensorboard"):
        shutil.rmtree(run_dir / name, ignore_errors=True)


def _curve(run_dir: Path) -> tuple[list[dict], dict]:
    """The run's evaluation rows, and its last row (how far it got)."""
    record = load_record(run_dir)
    evaluations = [r for r in record.eval_rows
                   if "time/elapsed_s" in r and "eval/team_return" in r]
    return evaluations, record.last_row


def _at(curve: tuple[list[dict], dict], key: str, limit: float) -> dict | None:
    """The last evaluation at `limit` (steps or wall seconds; 1% over counts, as iterations
    end on whole batches), None if the run stopped before it (its last row, evaluated or
    not, short of the limit)."""
    evaluations, last = curve
    before = [r for r in evaluations if r[key] <= limit * 1.01]
    if not before or last.get(key, 0) < limit * 0.99:
        return None
    return before[-1]


def _cell(rows: list[dict | None]) -> str:
    if not rows or any(r is None for r in rows):
        return "-"
    returns = [r["eval/team_return"] for r in rows]
    speeds = [r.get("eval/forward_velocity", float("nan")) for r in rows]
    lengths = [r.get("eval/length", float("nan")) for r in rows]
    mean = sum(returns) / len(returns)
    spread = f" ({min(returns):,.0f}-{max(returns):,.0f})" if len(returns) > 1 else ""
    return (f"{mean:,.0f}{spread}, {sum(speeds) / len(speeds):.2f} m/s, episodes "
            f"{sum(lengths) / len(lengths):.0f} steps")


def _brax_cell(results: Path, body: str) -> str:
    """Brax PPO's eval return at 10 and 20 minutes from `brax_<task>.json` (seed 0) and
    `brax_<task>_seed<K>.json` in the results folder (benchmarks/brax_ppo.py, each run beside
    ours on the other core): mean over seeds (min-max) and mean env steps; '' without one."""
    task = body.removesuffix("-modular")
    paths = sorted(results.glob(f"brax_{task}.json")) + sorted(
        results.glob(f"brax_{task}_seed*.json"))
    if not paths:
        return ""
    curves = [json.loads(path.read_text())["curve"] for path in paths]
    cells = []
    for minutes in MINUTE_MARKS:
        last = [[r for r in curve if r["wall_s"] <= minutes * 60][-1:] for curve in curves]
        if not all(last):
            cells.append("-")
            continue
        returns = [r[0]["eval_return"] for r in last]
        steps = sum(r[0]["steps"] for r in last) / len(last)
        spread = f" ({min(returns):,.0f}-{max(returns):,.0f})" if len(returns) > 1 else ""
        cells.append(f"{sum(returns) / len(returns):,.0f}{spread} ({steps / 1e6:.2f}M steps)")
    return f"{len(paths)} seed(s): " + " / ".join(cells)


def report(write: bool, results: Path) -> str:
    """The table of every body in `results` (appended to BENCHMARKS.md if `write`)."""
    bodies = [(p, results) for p in sorted(results.iterdir()) if p.is_dir()]
    text = (f"\n### Every bundled body: run of {dt.date.today()} ({host_and_load(results)})"
            f"\n\n`python benchmarks/every_body.py report --results {shown(results)}` "
            "(runs: `python benchmarks/every_body.py run ...`, one core per run). "
            + CELLS_NOTE + BRAX_NOTE + "\n\n" + table(bodies) + "\n")
    if write:
        append_to_benchmarks(text)
    return text


CELLS_NOTE = ("Cells: eval team return, mean over seeds (min-max), mean forward velocity and "
              "episode length; '-' where not every seed got there.")
BRAX_NOTE = (" Brax: eval return of `benchmarks/brax_ppo.py --task TASK` run at the same time "
             "on the other core (its published settings for Brax's env of that name on the "
             "same MJCF), where a brax_TASK.json is in the results folder.")


def table(bodies: list[tuple[Path, Path]], steps: tuple[int, ...] = STEP_MARKS,
          minutes: tuple[float, ...] = MINUTE_MARKS) -> str:
    """One row per (body folder, its results folder) with runs, labelled "body (folder)"
    where a body comes from several folders; the published 1M anchors where 1M is a column,
    Brax's cells where minutes are."""
    columns = [f"{s / 1e6:g}M steps" for s in steps] + [f"{m:g} min" for m in minutes]
    extra = (["published PPO at 1M"] if 1_000_000 in steps else []) + (
        ["Brax PPO beside it, " + " / ".join(f"{m:g}" for m in MINUTE_MARKS) + " min"]
        if minutes else [])
    lines = ["| body | seeds | " + " | ".join(columns + extra) + " |",
             "|" + "---|" * (len(columns) + len(extra) + 2)]
    repeated = {b.name for b, _ in bodies if sum(c.name == b.name for c, _ in bodies) > 1}
    for body_dir, results in bodies:
        curves = [_curve(d) for d in sorted(body_dir.iterdir()) if d.is_dir() and has_record(d)]
        curves = [c for c in curves if c[0]]
        if not curves:
            continue
        cells = [_cell([_at(c, "step", s) for c in curves]) for s in steps]
        cells += [_cell([_at(c, "time/elapsed_s", m * 60) for c in curves]) for m in minutes]
        if 1_000_000 in steps:
            cells.append(PUBLISHED_1M.get(body_dir.name, ""))
        if minutes:
            cells.append(_brax_cell(results, body_dir.name))
        label = (f"{body_dir.name} ({results.name})"
                 if body_dir.name in repeated else body_dir.name)
        lines.append(f"| {label} | {len(curves)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rows_report(rows: list[str], root: Path, steps: tuple[int, ...] = STEP_MARKS,
                minutes: tuple[float, ...] = MINUTE_MARKS) -> str:
    """The table of the bodies named as BODY:FOLDER (a results folder under `root`, e.g. the
    folder whose runs used the body's current preset), one row each, and each folder's load."""
    pairs = [(root / folder / body, root / folder)
             for body, folder in (row.split(":", 1) for row in rows)]
    loads = {str(folder.relative_to(root)): host_and_load(folder) for _, folder in pairs}
    marks = ("" if (steps, minutes) == (STEP_MARKS, MINUTE_MARKS) else
             " --steps " + " ".join(map(str, steps))
             + (" --minutes " + " ".join(f"{m:g}" for m in minutes) if minutes else
                " --minutes"))
    command = "python benchmarks/every_body.py report --rows " + " ".join(rows) + marks
    return (f"`{command}` ({dt.date.today()}; "
            + "; ".join(f"{name}: {load}" for name, load in loads.items()) + "). "
            + CELLS_NOTE + (BRAX_NOTE if minutes else "") + "\n\n"
            + table(pairs, steps, minutes) + "\n")


def host_and_load(results: Path) -> str:
    """"<cpu>, <n> cores; load average during the runs A-B" (from <results>/load.jsonl,
    which `run` samples), for a report's heading."""
    load = load_summary(results)
    host = f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores"
    return host + (f"; load average during the runs {load['min']:.1f}-{load['max']:.1f}"
                   if load else "")


def shown(results: Path) -> Path:
    """The results folder as a report's command line names it: relative to the repository
    where it lies inside it."""
    return results.relative_to(ROOT) if results.is_relative_to(ROOT) else results


def append_to_benchmarks(text: str) -> None:
    with open(ROOT / "BENCHMARKS.md", "a") as f:
        f.write(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--bodies", nargs="+", default=list(BODIES))
    run_parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    run_parser.add_argument("--total-steps", type=int, default=5_000_000)
    run_parser.add_argument("--minutes", type=float, default=20.0)
    run_parser.add_argument("--cores", nargs="+", type=int, default=[0, 1])
    run_parser.add_argument("extra", nargs="*", help="more cli.py train flags, after --")
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--rows", nargs="+", metavar="BODY:FOLDER",
                               help="one row per body from that folder of benchmarks/results "
                                    "(instead of every body of --results)")
    report_parser.add_argument("--write", action="store_true",
                               help="also append the table to BENCHMARKS.md")
    report_parser.add_argument("--steps", nargs="+", type=int, default=list(STEP_MARKS),
                               help="env-step columns (with --rows)")
    report_parser.add_argument("--minutes", nargs="*", type=float, default=list(MINUTE_MARKS),
                               help="wall-minute columns (with --rows; none: no Brax column)")
    for sub_parser in (run_parser, report_parser):
        sub_parser.add_argument("--results", type=Path, default=RESULTS,
                                help="folder of the run directories")
    args = parser.parse_args()
    results = args.results.resolve()
    if args.command == "run":
        run(args.bodies, args.seeds, args.total_steps, args.minutes, args.cores, args.extra,
            results)
    elif args.rows:
        print(rows_report(args.rows, ROOT / "benchmarks" / "results", tuple(args.steps),
                          tuple(args.minutes)))
    else:
        print(report(args.write, results))


if __name__ == "__main__":
    main()
