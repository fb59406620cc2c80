"""Compile once: a first run (empty compile cache) and a second run of the same shape.

    taskset -c 1 python benchmarks/compile_cache.py                  # ant-modular, CLI defaults
    taskset -c 1 python benchmarks/compile_cache.py --pairs 1 -- --body tiny.xml --backend mjx
    python benchmarks/compile_cache.py --pairs 1 -- --body ant-modular --backend cpu-pipelined \
        --device-share 0.4 --ppo.n-envs 64          # the pipelined backend's stored programs

Each pair starts `python cli.py train --body ant-modular` (plus the flags after `--`) twice
with a fresh, empty --compile-cache-dir shared by the two, and stops each run once its first
metrics row is written (after the first training call and the first evaluation). Per run
it records the wall time from starting the command to its first progress line (printed
as the first training call returns, before the evaluation) and the command's CPU seconds
by then (a figure that other processes on the same core slow less), the wall time to its
first output line (imports and start-up), from its first metrics row `time/compile_s`
(tracing, lowering and compiling or loading the training step), `time/elapsed_s` (from
building the run to the end of the first training call) and `time/eval_s` (the first
evaluation, whose results the progress shows that much later), and the cache folder's
entries after it (compiled programs, and exported training steps or, with --backend
cpu-pipelined, programs in its `exported/`).
With --log-compiles (JAX_LOG_COMPILES=1 in the command) each run also records where its
start went: the seconds from the command to its "building", "run dir" and "compiling"
lines, and each program that took at least 0.5 s to trace or to compile (by JAX's log;
programs compiled side by side overlap), e.g. on an accelerator:
`python benchmarks/compile_cache.py --pairs 1 --log-compiles -- --body ant-modular --no-video`.
Writes benchmarks/results/compile_cache/results.json (--out) and prints a Markdown table;
`--report FILE...` prints the tables of results files written earlier.
The target (issue 15): the second run's first progress line within 10 s.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
from pathlib import Path

from cli_runs import PROGRESS_PREFIX, ROOT, CliRun, metrics_rows, run_cli
from modular_ppo.compile_cache import EXPORTED
from modular_ppo.ppo import ahead, exported_step
from report import environment_facts

TARGET_S = 10.0


def timed_run(flags: list[str], runs_root: Path, cache: Path, timeout_s: float,
              log_compiles: bool = False) -> dict:
    """One `cli.py train` until its first metrics row; its timings (log_compiles: the
    command's environment has JAX_LOG_COMPILES=1, and `start_breakdown` is added)."""
    load_before = os.getloadavg()[0]
    run = run_cli([*flags, "--compile-cache-dir", str(cache)], runs_root, timeout_s,
                  mark=lambda line: line.startswith(PROGRESS_PREFIX),
                  until=lambda _, root: bool(metrics_rows(root)))
    if run.stopped_s is None or run.marked_s is None:
        raise RuntimeError(f"no progress line within {timeout_s:.0f} s from cli.py train "
                           f"{' '.join(flags)} (exit {run.returncode}):\n"
                           + "\n".join(run.lines[-20:]))
    first_row = run.rows[0]
    entries = list(cache.glob("*-cache"))
    exported = [path for path in (cache / EXPORTED).glob("*")
                if path.suffix in (exported_step.SUFFIX, ahead.SUFFIX)]
    return dict(first_progress_s=run.marked_s, first_progress_cpu_s=run.marked_cpu_s,
                started_s=run.first_line_s, compile_s=first_row["time/compile_s"],
                first_call_elapsed_s=first_row["time/elapsed_s"],
                eval_s=first_row.get("time/eval_s", 0.0),
                cache_entries=len(entries),
                cache_mib=sum(p.stat().st_size for p in entries) / 2**20,
                exported_steps=len(exported),
                load_before=load_before, load_after=os.getloadavg()[0],
                progress_line=next(line for line in run.lines
                                   if line.startswith(PROGRESS_PREFIX)),
                **(start_breakdown(run) if log_compiles else {}))


STAGES = {"building_s": "building ", "run_dir_s": "run dir: ",
          "compiling_s": "compiling the training step"}
"""The CLI's lines that mark a run's start: building the run, its run dir written, the
training step's compile begun."""
LOGGED = re.compile(r"Finished (tracing|XLA compilation of) (?:jit\()?(\w+)\)?(?: for jit)? "
                    r"in ([0-9.]+) sec")


def start_breakdown(run: CliRun, at_least_s: float = 0.5) -> dict:
    """Seconds from the command to each of `STAGES`' lines, and the programs JAX's log says
    took at least `at_least_s` to trace or to compile (the longest of each name)."""
    stages = {key: next((s for line, s in zip(run.lines, run.line_s) if text in line), None)
              for key, text in STAGES.items()}
    took: dict[str, dict[str, float]] = {"trace_s": {}, "compile_s_by_program": {}}
    for line in run.lines:
        if (found := LOGGED.search(line)) and float(found[3]) >= at_least_s:
            kind = "trace_s" if found[1] == "tracing" else "compile_s_by_program"
            took[kind][found[2]] = max(took[kind].get(found[2], 0.0), float(found[3]))
    return {**stages, **{kind: dict(sorted(seconds.items(), key=lambda kv: -kv[1]))
                         for kind, seconds in took.items()}}


def markdown(results: dict) -> str:
    rows = ["| pair | run | first progress line s (CPU s) | start-up s | time/compile_s "
            "| first call done s | first eval s | cache entries (MiB) | exported steps |",
            "|---:|---|---:|---:|---:|---:|---:|---|---:|"]
    for i, pair in enumerate(results["pairs"], 1):
        for which in ("first", "second"):
            r = pair[which]
            rows.append(f"| {i} | {which} | {r['first_progress_s']:.1f} "
                        f"({r['first_progress_cpu_s']:.1f}) | {r['started_s']:.1f} "
                        f"| {r['compile_s']:.1f} "
                        f"| {r['first_call_elapsed_s']:.1f} | {r['eval_s']:.1f} "
                        f"| {r['cache_entries']} ({r['cache_mib']:.1f}) "
                        f"| {r.get('exported_steps', 0)} |")
    worst = max(pair["second"]["first_progress_s"] for pair in results["pairs"])
    verdict = "met" if worst <= TARGET_S else "missed"
    return "\n".join(rows + ["", f"Second run's first progress line: at most {worst:.1f} s "
                             f"(target <= {TARGET_S:.0f} s): {verdict}."])


def report(paths: list[Path]) -> str:
    """Each results file's table under a line naming its command, date, machine and load."""
    parts = []
    for path in paths:
        results = json.loads(path.read_text())
        facts = results["facts"]
        load = facts.get("load_average")
        parts.append(f"`{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}`: "
                     f"`{results['command']}`, {facts['date']}, {facts['cpu']}, "
                     f"{facts['cores']} core(s), git {facts['git']}"
                     + (f", load {load[0]:.1f}" if load else "") + "\n\n" + markdown(results))
    return "\n\n".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, nargs="+",
                        help="print the tables of these results files instead of running")
    parser.add_argument("--pairs", type=int, default=2, help="first + second run pairs")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks/results/compile_cache/results.json")
    parser.add_argument("--timeout-s", type=float, default=600.0, help="per run")
    parser.add_argument("--log-compiles", action="store_true",
                        help="also record where each run's start went (JAX's compile log)")
    parser.add_argument("flags", nargs="*", default=["--body", "ant-modular"],
                        help="train flags (after --); default: --body ant-modular")
    args = parser.parse_args()
    if args.report:
        print(report([path.resolve() for path in args.report]))
        return 0
    if args.log_compiles:
        os.environ["JAX_LOG_COMPILES"] = "1"  # the commands' environment
    results = {"command": "python benchmarks/compile_cache.py " + " ".join(sys.argv[1:]),
               "train_flags": args.flags, "facts": environment_facts(), "pairs": []}
    for _ in range(args.pairs):
        with tempfile.TemporaryDirectory(prefix="compile_cache_bench_") as scratch:
            scratch = Path(scratch)
            pair = {which: timed_run(args.flags, scratch / which, scratch / "cache",
                                     args.timeout_s, args.log_compiles)
                    for which in ("first", "second")}
        results["pairs"].append(pair)
        print(json.dumps(pair), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(markdown(results))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
