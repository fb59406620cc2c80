"""The accelerator machine in one command, within a wall-time budget: raw MJX physics,
training (first- and second-run compile), MuJoCo's C simulator on the host cores, the
largest env count that fits in the chip's memory and Brax PPO; JSON rows and a Markdown
table naming the device it ran on, the host, the date and the load.

    bash benchmarks/accelerator.sh                          # PLAN, --budget-s 540
    bash benchmarks/accelerator.sh --budget-s 120 --out DIR
    python benchmarks/accelerator.py --table DIR/accelerator.json   # the table again
    python benchmarks/accelerator.py --budget-s 3000 --time-scale 10 --plan raw/8 \\
        train-first/8 train-second/8 host/8 -- --backend cpu --ppo.n-minibatches 2
                                       # a check on CPU with tiny shapes (the test's)

Each part runs in a process of its own with its own timeout, so one that fails or runs
over costs only itself; parts run in the order given while the budget lasts, and a part
is skipped (a row saying so) when less is left than it needs to give a figure
(`PART_KINDS`' need_s). The parts (body ant-modular, its own physics settings):
- raw/<n>: vmap(mjx.step) x frame skip, random controls, n envs (cases.py `mjx-step`), with
  XLA's memory analysis of the program: the bytes per env give the largest env count
  that fits in the chip's memory (the table's "fits" line; an estimate, raw physics only);
- train-first/<n>: `cli.py train --ppo.n-envs n --backend mjx` (the CLI's accelerator
  defaults otherwise, plus the flags after `--`) with an empty compile cache, stopped after
  `TIMED_CALLS` training calls after the first: compile s (`time/compile_s`), seconds to
  the first progress line, training env-steps/s (median of the calls after the first);
- train-second/<n>: the same command again on the cache the first run filled;
- backend/<name>/<n>: the train-first command with `--backend <name>` (after the flags
  after `--`), on the cache the parts before filled: e.g. backend/cpu-pipelined/4096, the
  host's C simulator and the chip overlapped (docs/backends.md; `-- --device-share S`
  sets the share of envs MJX steps beside it), or backend/cpu/4096;
- host/<n>: MuJoCo's C simulator on the host's cores (cases.py `mujoco-batch`);
- split/<n>/<h>: both engines at once, raw physics: the C simulator on the host's cores
  steps h envs while MJX steps the other n - h on the chip (cases.py `split-step`; a draft
  of the issue's two-engine split, 11,776 of 16,384: the host's share of the two engines'
  raw rates measured before, 266k and 106k env-steps/s);
- brax/<shape>: Brax PPO on the same MJCF (cases.py `brax-ppo`; "current": its current
  published ant settings, 4,096 envs, batch 2,048, unroll 5, 32 minibatches, 4 epochs).
Writes <out>/accelerator.json and <out>/accelerator.md (--out, default
benchmarks/results/accelerator). Exits 0 when every part that ran gave its figures, 1 when
one failed, 2 when JAX does not start.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from modular_ppo.headless import prepare_process

prepare_process()  # an entry point: MUJOCO_GL and MJX's quiet import before anything imports MuJoCo

from cli_runs import PROGRESS_PREFIX, ROOT, metrics_rows, run_cli  # noqa: E402
from report import environment_facts  # noqa: E402
from throughput import run_case_process  # noqa: E402

BODY = "ant-modular"
PLAN = ("raw/4096", "raw/8192", "train-first/4096", "train-second/4096",
        "backend/cpu-pipelined/4096", "host/4096", "split/16384/11776", "raw/16384",
        "raw/2048", "brax/current")
"""The default parts in priority order: raw physics, then training with both compiles and
with both engines (the host's C simulator and the chip, docs/backends.md), then the rest
if time is left."""
BUDGET_S = 540.0
"""The default budget: the whole run, start-up included, within one `device` call of 10
minutes with a minute to spare for the machine's set-up."""
TIMED_CALLS = 5
"""Training calls after the first (the one that compiles) that a train part times."""


@dataclasses.dataclass(frozen=True)
class PartKind:
    what: str
    need_s: float
    """Seconds a part needs to give a figure on the TPU (start-up and compile included):
    with less left of the budget it is skipped."""
    cap_s: float
    """Its timeout when the budget has more left."""


PART_KINDS = {
    "raw": PartKind("vmap(mjx.step) x frame skip, random ctrl (cases.py mjx-step)", 40, 75),
    "train-first": PartKind("cli.py train, empty compile cache", 100, 160),
    "train-second": PartKind("cli.py train again, on the first run's compile cache", 35, 90),
    "backend": PartKind("cli.py train --backend NAME, on the compile cache so far", 60, 120),
    "host": PartKind("MuJoCo's C simulator on the host's cores (mujoco-batch)", 12, 45),
    "split": PartKind("both engines at once: C simulator on the host's cores for the second "
                      "count of envs, MJX for the rest (split-step)", 45, 90),
    "brax": PartKind("Brax PPO on the same MJCF (cases.py brax-ppo)", 120, 300),
}
CASES = {"raw": "mjx-step/{}", "host": "mujoco-batch/{}", "split": "split-step/{}",
         "brax": "brax-ppo/{}"}
"""The cases.py case behind each kind that is one."""

PREFLIGHT = """
import json, os, jax
stats = jax.devices()[0].memory_stats() or {}
print(json.dumps(dict(device=jax.devices()[0].device_kind, device_count=jax.device_count(),
                      platform=jax.default_backend(), host_cores=len(os.sched_getaffinity(0)),
                      device_bytes_limit=stats.get("bytes_limit"))))
"""
"""Printed by a fresh process (this one never holds the chip: one process at a time can)."""


def preflight(timeout_s: float) -> dict:
    """The device JAX sees here, from a process of its own."""
    done = subprocess.run([sys.executable, "-c", PREFLIGHT], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout_s)
    if done.returncode != 0:
        return dict(error=done.stderr.strip() or f"exit {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def parse_part(name: str) -> tuple[str, str]:
    """(kind, argument) of a part name such as "raw/4096"; SystemExit naming the fix."""
    kind, _, argument = name.partition("/")
    if kind not in PART_KINDS or not argument:
        raise SystemExit(f"error: --plan {name!r}: a part is KIND/ARG with KIND one of "
                         f"{', '.join(PART_KINDS)} (e.g. raw/4096, brax/current).")
    counts = argument.split("/")
    if kind == "split" and not (len(counts) == 2 and all(c.isdigit() for c in counts)):
        raise SystemExit(f"error: --plan {name!r}: split/ takes the env count and the host's "
                         "share of it, e.g. split/16384/11776.")
    if kind == "backend" and not (len(counts) == 2 and counts[1].isdigit()):
        raise SystemExit(f"error: --plan {name!r}: backend/ takes a --backend value and an env "
                         "count, e.g. backend/cpu-pipelined/4096.")
    if kind not in ("brax", "split", "backend") and not argument.isdigit():
        raise SystemExit(f"error: --plan {name!r}: {kind}/ takes an env count, e.g. {kind}/4096.")
    return kind, argument


def case_part(kind: str, argument: str, body: str, timeout_s: float) -> dict:
    return run_case_process(CASES[kind].format(argument), timeout_s, body)


def train_part(n_envs: int, body: str, cache: Path, flags: list[str], timeout_s: float) -> dict:
    """`cli.py train` at n_envs with the compile cache `cache`, until `TIMED_CALLS` calls
    after the first or `timeout_s`: its compile and first progress seconds, env-steps/s."""

    def enough(line: str, root: Path) -> bool:
        return (line.startswith(PROGRESS_PREFIX)
                and len(_timed_rows(metrics_rows(root))) > TIMED_CALLS)

    load_before = os.getloadavg()[0]
    command = ["--body", body, "--ppo.n-envs", str(n_envs), "--eval-every-steps", "0",
               "--checkpoint-every-steps", "0", "--no-video", "--compile-cache-dir", str(cache),
               "--backend", "mjx", *flags]  # MJX unless the flags say otherwise (last wins)
    with tempfile.TemporaryDirectory(prefix="accelerator_runs_") as runs:
        run = run_cli(command, Path(runs), timeout_s, until=enough,
                      mark=lambda line: line.startswith(PROGRESS_PREFIX))
    rows = _timed_rows(run.rows)
    result = dict(n_envs=n_envs, flags=command, load_before=load_before,
                  load_after=os.getloadavg()[0], case_wall_s=run.stopped_s or timeout_s,
                  started_s=run.first_line_s, first_progress_s=run.marked_s, calls=len(rows))
    if rows:  # the compile is a figure even where the timeout came before a second call
        result["compile_s"] = rows[0]["time/compile_s"]
    if len(rows) < 2:
        tail = " / ".join(line for line in run.lines[-3:] if line.strip())
        what = f"timed out after {timeout_s:.0f} s" if run.cut else f"exit {run.returncode}"
        return dict(result, error=f"fewer than two training calls ({what}): "
                                  f"{tail or 'no output'}")
    return dict(result, steps_per_s=statistics.median(r["throughput/env_steps_per_s"]
                                                      for r in rows[1:]))


def _timed_rows(rows: list[dict]) -> list[dict]:
    return [row for row in rows if "throughput/env_steps_per_s" in row]


def run_plan(plan: list[str], budget_s: float, started: float, flags: list[str],
             cache: Path, report, time_scale: float = 1.0, body: str = BODY) -> None:
    """Run the parts of `plan` on `body` in order while `budget_s` seconds from `started`
    last, each part's need and cap times `time_scale`; `report(row)` each one's row as it
    ends."""
    for name in plan:
        kind, argument = parse_part(name)
        need_s, cap_s = (PART_KINDS[kind].need_s * time_scale,
                         PART_KINDS[kind].cap_s * time_scale)
        left = budget_s - (time.perf_counter() - started)
        row = dict(part=name, kind=kind)
        if left < need_s:
            report(dict(row, skipped=f"{left:.0f} s of the budget left, it needs about "
                                     f"{need_s:.0f} s"))
            continue
        timeout_s = min(cap_s, left)
        tried = time.perf_counter()
        result = _run_part(kind, argument, timeout_s, flags, cache, body)
        quick = time.perf_counter() - tried < QUICK_FAILURE_S
        retry_s = budget_s - (time.perf_counter() - started) - RETRY_WAIT_S
        if "error" in result and quick and retry_s >= need_s:
            row["first_try_error"] = result["error"]
            time.sleep(RETRY_WAIT_S)
            timeout_s = min(cap_s, retry_s)
            result = _run_part(kind, argument, timeout_s, flags, cache, body)
        report(dict(row, timeout_s=timeout_s, **result))


QUICK_FAILURE_S, RETRY_WAIT_S = 30.0, 5.0
"""A part that fails within QUICK_FAILURE_S is tried once more after RETRY_WAIT_S: a TPU can
refuse a program started just after another one ended."""


def _run_part(kind: str, argument: str, timeout_s: float, flags: list[str], cache: Path,
              body: str) -> dict:
    if kind.startswith("train"):
        return train_part(int(argument), body, cache, flags, timeout_s)
    if kind == "backend":
        backend, n_envs = argument.split("/")
        return train_part(int(n_envs), body, cache, [*flags, "--backend", backend], timeout_s)
    return case_part(kind, argument, body, timeout_s)


def largest_fit(rows: list[dict]) -> dict | None:
    """From the raw parts' memory analyses: the bytes per env (the largest raw part's) and
    the largest power-of-two env count whose raw program fits in the device's memory."""
    measured = [r for r in rows if r["kind"] == "raw" and r.get("program_bytes")
                and r.get("device_bytes_limit")]
    if not measured:
        return None
    row = max(measured, key=lambda r: r["n_envs"])
    per_env = row["program_bytes"] / row["n_envs"]
    fits = 2 ** int(math.log2(row["device_bytes_limit"] / per_env))
    return dict(from_part=row["part"], bytes_per_env=per_env,
                device_bytes_limit=row["device_bytes_limit"], largest_envs=fits)


def markdown(record: dict) -> str:
    """The run's Markdown section: command, hardware, versions, the table, the fit line."""
    facts, devices = record["facts"], record["devices"]
    versions = ", ".join(f"{k} {v}" for k, v in facts["versions"].items())
    lines = [
        f"## Accelerator run of {facts['date']} ({record.get('body', BODY)})",
        "",
        f"- Command: `{record['command']}` (budget {record['budget_s']:.0f} s, whole run "
        f"{record['wall_s']:.0f} s)",
        f"- Device: {devices['device']} x {devices['device_count']} (JAX platform "
        f"{devices['platform']}); host {facts['cpu']}, {devices['host_cores']} cores, "
        f"{facts['memory_gib']} GiB; load average {facts['load_average'][0]:.1f} at the start.",
        f"- Versions: Python {facts['python']}, {versions}; git {facts['git']}.",
        "",
        "| part | what | envs | env steps/s | compile s | first progress s | wall s (timeout) "
        "| load before / after | note |",
        "|---|---|---:|---:|---:|---:|---:|---|---|",
    ]
    lines += [_table_row(row) for row in record["rows"]]
    fit = largest_fit(record["rows"])
    if fit is not None:
        lines += ["", f"- Largest env count whose raw MJX program fits in the device's "
                      f"{fit['device_bytes_limit'] / 2**30:.1f} GiB (XLA's memory analysis of "
                      f"{fit['from_part']}: {fit['bytes_per_env']:,.0f} bytes per env): "
                      f"{fit['largest_envs']:,} (an estimate; training needs more)."]
    return "\n".join(lines) + "\n"


def _table_row(row: dict) -> str:
    what = PART_KINDS[row["kind"]].what
    if "skipped" in row:
        return f"| {row['part']} | {what} | | | | | | | skipped: {row['skipped']} |"
    timing = f"{row['case_wall_s']:.0f} ({row['timeout_s']:.0f})" if "case_wall_s" in row \
        else f"({row['timeout_s']:.0f})"
    load = (f"{row['load_before']:.1f} / {row['load_after']:.1f}" if "load_before" in row
            else "")
    figures = [_figure(row.get("steps_per_s"), ",.0f"), _figure(row.get("compile_s"), ".1f"),
               _figure(row.get("first_progress_s"), ".1f")]
    note = f"failed: {row['error']}" if "error" in row else ""
    return (f"| {row['part']} | {what} | {row.get('n_envs', '')} | {' | '.join(figures)} | "
            f"{timing} | {load} | {note} |")


def _figure(value: float | None, spec: str) -> str:
    return "" if value is None else format(value, spec)


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget-s", type=float, default=BUDGET_S,
                        help="wall seconds for the whole run, start-up included")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/accelerator",
                        help="folder for accelerator.json and accelerator.md")
    parser.add_argument("--plan", nargs="+", default=list(PLAN),
                        help="parts in priority order (KIND/ARG: raw/N, train-first/N, "
                             "train-second/N, backend/NAME/N, host/N, split/N/HOST_N, "
                             "brax/SHAPE)")
    parser.add_argument("--body", default=BODY,
                        help="the body every part steps or trains (its own physics settings)")
    parser.add_argument("--time-scale", type=float, default=1.0,
                        help="multiplies each part's need and cap (set for the TPU machine): "
                             "more on a slow or busy machine")
    parser.add_argument("--table", type=Path, help="print the table of this accelerator.json "
                                                   "and exit")
    parser.add_argument("train_flags", nargs="*", help="flags for cli.py train (after --)")
    return parser.parse_args()


def main() -> int:
    args = _arguments()
    if args.table:
        print(markdown(json.loads(args.table.read_text())), end="")
        return 0
    started = time.perf_counter()
    for name in args.plan:
        parse_part(name)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "bash benchmarks/accelerator.sh " + " ".join(sys.argv[1:])
    facts = environment_facts()
    devices = preflight(timeout_s=min(120.0, args.budget_s))
    if "error" in devices:
        print(f"error: JAX does not start here:\n{devices['error']}", file=sys.stderr)
        return 2
    print(f"device: {devices['device']} x {devices['device_count']} (JAX platform "
          f"{devices['platform']}), {devices['host_cores']} host cores", flush=True)
    record = dict(command=command.strip(), facts=facts, devices=devices, body=args.body,
                  budget_s=args.budget_s, plan=args.plan, rows=[])
    figures = args.out / "accelerator.json"

    def report(row: dict) -> None:
        record["rows"].append(row)
        record["wall_s"] = time.perf_counter() - started
        figures.write_text(json.dumps(record, indent=1) + "\n")  # kept if the run is cut
        print(json.dumps(row), flush=True)

    with tempfile.TemporaryDirectory(prefix="accelerator_cache_") as cache:
        run_plan(args.plan, args.budget_s, started, args.train_flags, Path(cache), report,
                 args.time_scale, args.body)
    record["wall_s"] = time.perf_counter() - started
    figures.write_text(json.dumps(record, indent=1) + "\n")
    section = markdown(record)
    (args.out / "accelerator.md").write_text(section)
    print(section)
    print(f"figures in {figures}, table in {args.out / 'accelerator.md'}")
    return 1 if any("error" in row for row in record["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
