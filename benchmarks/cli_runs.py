"""`python cli.py train ...` in a process of its own, timed from the outside and stopped by a
condition or a wall-time budget (benchmarks/compile_cache.py, benchmarks/accelerator.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRESS_PREFIX = "step "
"""The CLI's progress lines (outside a terminal) start with "step N/TOTAL"."""


@dataclasses.dataclass
class CliRun:
    lines: list[str]
    """Everything the command printed (stdout and stderr)."""
    line_s: list[float]
    """Wall seconds from starting the command to each of `lines`."""
    rows: list[dict]
    """Its run's metrics.jsonl rows."""
    first_line_s: float | None
    """Wall seconds from starting the command to its first line ("building ...", printed
    as the run starts: what imports and start-up took)."""
    stopped_s: float | None
    """Wall seconds from starting the command to the line at which `until` said stop."""
    stopped_cpu_s: float | None
    """The command's CPU seconds (user + system, all threads) by then."""
    marked_s: float | None
    """Wall seconds from starting the command to the first line `mark` picked out."""
    marked_cpu_s: float | None
    """The command's CPU seconds by then."""
    cut: bool
    """Whether the budget ran out first (the command was killed)."""
    returncode: int | None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a running process has used (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def metrics_rows(runs_root: Path) -> list[dict]:
    """The metrics.jsonl rows of the one run under `runs_root` (none before it has any)."""
    files = list(runs_root.glob("*/*/metrics.jsonl"))
    if not files:
        return []
    return [json.loads(line) for line in files[0].read_text().splitlines() if line.strip()]


def run_cli(train_flags: list[str], runs_root: Path, budget_s: float,
            until: Callable[[str, Path], bool] | None = None,
            mark: Callable[[str], bool] | None = None) -> CliRun:
    """`cli.py train *train_flags --runs-root runs_root`, killed at the first output line
    for which until(line, runs_root) is true, or when `budget_s` seconds have passed; the
    first line for which mark(line) is true is timed on the way."""
    command = [sys.executable, "cli.py", "train", *train_flags, "--runs-root", str(runs_root)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    cut = threading.Event()

    def out_of_time() -> None:
        cut.set()
        process.kill()

    watchdog = threading.Timer(budget_s, out_of_time)
    watchdog.start()
    lines: list[str] = []
    line_s: list[float] = []
    first_line_s = stopped_s = stopped_cpu_s = marked_s = marked_cpu_s = None
    try:
        for line in process.stdout:
            lines.append(line.rstrip())
            line_s.append(time.perf_counter() - started)
            first_line_s = first_line_s or line_s[-1]
            if marked_s is None and mark is not None and mark(line):
                marked_s = time.perf_counter() - started
                marked_cpu_s = cpu_seconds(process.pid)
            if until is not None and until(line, runs_root):
                stopped_s = time.perf_counter() - started
                stopped_cpu_s = cpu_seconds(process.pid)
                process.kill()
                break
        process.communicate()
    finally:
        watchdog.cancel()
    return CliRun(lines, line_s, metrics_rows(runs_root), first_line_s, stopped_s, stopped_cpu_s,
                  marked_s, marked_cpu_s, cut.is_set(), process.returncode)
