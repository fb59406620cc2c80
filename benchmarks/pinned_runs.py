"""Runs training processes one per core (`taskset`), starting each as soon as a core is free
and the runs it waits on have finished; the load average is sampled beside the results.

The benchmark scripts that train many runs (every_body.py, transfer_table.py) share this
loop and differ only in how a run starts, which runs wait on others and what is kept when
one ends.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

Job = TypeVar("Job")


def run_pinned(
    jobs: Sequence[Job],
    cores: Sequence[int],
    results: Path,
    start: Callable[[Job, int], subprocess.Popen],
    *,
    ready: Callable[[Job, list[Job]], bool | None] = lambda job, busy: True,
    ended: Callable[[Job, int, list[Job]], None] = lambda job, returncode, busy: None,
    poll_s: float = 5.0,
) -> None:
    """Run every job, at most one per core of `cores`, in the order given where they can.

    start(job, core): the job's process, pinned to `core`.
    ready(job, busy): whether the job can start now, with `busy` the jobs still pending or
        running; None: never (it is dropped, e.g. the run it needs failed).
    ended(job, returncode, busy): called once the job's process has exited.
    The 1-min load average goes to <results>/load.jsonl every 30 s while jobs run.
    """
    pending, running, free = list(jobs), [], list(cores)
    stop = threading.Event()
    threading.Thread(target=sample_load, args=(stop, results), daemon=True).start()
    try:
        while pending or running:
            for proc, core, job in list(running):
                if proc.poll() is None:
                    continue
                running.remove((proc, core, job))
                free.append(core)
                ended(job, proc.returncode, pending + [j for _, _, j in running])
            for job in list(pending):
                busy = pending + [j for _, _, j in running]
                verdict = ready(job, busy)
                if verdict is None:
                    pending.remove(job)
                elif verdict and free:
                    pending.remove(job)
                    core = free.pop(0)
                    running.append((start(job, core), core, job))
            time.sleep(poll_s)
    finally:
        stop.set()


def sample_load(stop: threading.Event, results: Path) -> None:
    """Append {"time", "load1"} to <results>/load.jsonl every 30 s until `stop` is set."""
    results.mkdir(parents=True, exist_ok=True)
    with open(results / "load.jsonl", "a") as f:
        while not stop.wait(30):
            f.write(json.dumps({"time": time.time(), "load1": os.getloadavg()[0]}) + "\n")
            f.flush()
