"""benchmarks/pinned_runs.py: the loop every_body.py and transfer_table.py start their training
runs with (one per core, waiting on the runs they need), on short stand-in processes."""

import subprocess
import sys
import time

from pinned_runs import run_pinned

NEEDS = {"b": "a", "d": "c"}
"""Job -> the job it waits on; "c" fails, so "d" never runs."""


def test_jobs_run_one_per_core_after_the_jobs_they_wait_on(tmp_path):
    log: list[tuple[str, str, int, float]] = []
    exit_codes = {"c": 1}

    def start(job: str, core: int) -> subprocess.Popen:
        log.append(("start", job, core, time.monotonic()))
        code = exit_codes.get(job, 0)
        return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(0.3); exit({code})"])

    def ready(job: str, busy: list[str]) -> bool | None:
        needed = NEEDS.get(job)
        if needed is None or needed in busy:
            return needed is None
        return True if exit_codes.get(needed, 0) == 0 else None

    def ended(job: str, returncode: int, busy: list[str]) -> None:
        log.append(("end", job, returncode, time.monotonic()))
        assert job not in busy

    run_pinned(["a", "b", "c", "d", "e"], [7, 9], tmp_path, start, ready=ready, ended=ended,
               poll_s=0.02)

    started = {job: core for kind, job, core, _ in log if kind == "start"}
    assert set(started) == {"a", "b", "c", "e"}  # "d" dropped: "c" failed
    assert set(started.values()) == {7, 9}
    assert {job: code for kind, job, code, _ in log if kind == "end"} == {
        "a": 0, "b": 0, "c": 1, "e": 0}
    at = {(kind, job): t for kind, job, _, t in log}
    assert at[("start", "b")] >= at[("end", "a")]
    # Never more processes than cores: every start but the first two follows an end.
    running = 0
    for kind, *_ in log:
        running += 1 if kind == "start" else -1
        assert 0 <= running <= 2
    assert (tmp_path / "load.jsonl").exists()
