"""Crash safety, with real signals sent to real processes: a checkpoint write killed midway
leaves the previous checkpoint loadable; a training run killed with SIGKILL resumes with
`--resume` and loses at most one checkpoint interval; Ctrl-C (SIGINT) saves a checkpoint,
exits with 130 and says how to resume; SIGTERM asks for the same."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from reliability_tools import ROOT, STEPS_PER_ITERATION, TINY, plain

from modular_ppo.runs.build import restore_run
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.errors import TrainingInterrupted
from modular_ppo.runs.interrupts import StopRequests
from modular_ppo.runs.run_dir import read_metrics

TIMEOUT_S = 600
"""Per wait: a loaded CI machine may take minutes to start a process and load a compiled
training step."""

CHECKPOINT_EVERY = 2 * STEPS_PER_ITERATION

WRITER = """
import sys
import time
import numpy as np
from orbax.checkpoint._src.path import atomicity
from modular_ppo.runs.checkpoint import Checkpointer

commit = atomicity.AtomicRenameTemporaryPath.finalize

async def commit_all_but_the_third(self):
    if self.get().name.startswith("3."):
        print("holding the commit of 3", flush=True)
        time.sleep(3600)
    await commit(self)

atomicity.AtomicRenameTemporaryPath.finalize = commit_all_but_the_third
checkpointer = Checkpointer(sys.argv[1], {"body": "b"}, max_to_keep=5)
for step in range(1, 100):
    state = {"w": np.full(1_000_000, step, np.float32), "step": np.asarray(step, np.int32)}
    checkpointer.save(step, state)
"""
"""Saves checkpoints until the third, whose write it holds just before orbax's commit
(the rename of the temporary folder): killed there, the write is torn for certain,
whatever the load on the machine."""


def _wait_for(condition, process: subprocess.Popen, what: str, poll_s: float = 0.05) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while not condition():
        if process.poll() is not None:
            raise AssertionError(f"the process ended (exit {process.returncode}) before {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(poll_s)


def _template(step: int) -> dict:
    return {"w": np.zeros(1_000_000, np.float32), "step": np.asarray(step, np.int32)}


def test_a_checkpoint_write_killed_midway_leaves_the_previous_one_loadable(tmp_path):
    directory = tmp_path / "checkpoints"
    writing_third = directory / "3.orbax-checkpoint-tmp"
    log = tmp_path / "writer.txt"
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(directory)], cwd=ROOT,
                              stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: "holding the commit of 3" in log.read_text(), writer,
                  "the third checkpoint's data was written")
    finally:
        writer.kill()
        writer.wait()
    # Killed while the temporary folder held the written data, before its commit.
    assert (writing_third / "state").is_dir() and not (directory / "3").exists()

    checkpointer = Checkpointer(directory, {"body": "b"}, max_to_keep=5)
    assert checkpointer.steps() == [1, 2]
    step, state = checkpointer.restore_latest(_template(0))
    assert step == 2 and state["step"] == 2 and np.all(np.asarray(state["w"]) == 2)
    checkpointer.save(3, _template(3))  # the torn write does not block the next one
    assert checkpointer.restore_latest(_template(0))[0] == 3
    checkpointer.close()


def _checkpoints(run_dir: Path) -> list[int]:
    folder = run_dir / "checkpoints"
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def _logged(run_dir: Path) -> int:
    return max((row["step"] for row in read_metrics(run_dir)), default=0)


def _start(args: list, log: Path, compile_cache: Path) -> subprocess.Popen:
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(compile_cache), "COLUMNS": "400"}
    return subprocess.Popen([sys.executable, "cli.py", *map(str, args)], cwd=ROOT, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def killed_then_interrupted(compile_cache, tiny_body, runs_root, tmp_path_factory):
    """A run killed with SIGKILL once it has logged past a checkpoint, resumed with
    `--resume`, then stopped with SIGINT once the resumed process has trained past the
    point of the kill."""
    logs = tmp_path_factory.mktemp("logs")
    run_dir = runs_root / "tiny" / "crash"
    first = _start(["train", "--body", tiny_body, *TINY, "--ppo.total-steps", 10**6,
                    "--checkpoint-every-steps", CHECKPOINT_EVERY, "--runs-root", runs_root,
                    "--run-name", "crash"], logs / "first.txt", compile_cache)
    second = None
    try:
        _wait_for(lambda: _checkpoints(run_dir) and _logged(run_dir) > _checkpoints(run_dir)[-1],
                  first, "a checkpoint, and training past it")
        first.kill()
        first.wait()
        killed = {"checkpoint": _checkpoints(run_dir)[-1], "logged": _logged(run_dir)}
        second = _start(["train", "--resume", run_dir, "--ppo.total-steps", 10**6],
                        logs / "second.txt", compile_cache)
        _wait_for(lambda: _logged(run_dir) > killed["logged"], second,
                  "the resumed run trained past the kill")
        second.send_signal(signal.SIGINT)
        second.wait(timeout=TIMEOUT_S)
    finally:
        for process in (first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
    return run_dir, killed, second.returncode, (logs / "second.txt").read_text()


def test_sigkill_then_resume_loses_at_most_one_checkpoint_interval(killed_then_interrupted):
    run_dir, killed, _, out = killed_then_interrupted
    assert 0 < killed["logged"] - killed["checkpoint"] <= CHECKPOINT_EVERY
    assert f"resuming {run_dir} from its checkpoint at step {killed['checkpoint']:,}" in plain(out)
    # The rows the killed process logged after its checkpoint were dropped and redone once.
    steps = [row["step"] for row in read_metrics(run_dir)]
    assert steps == list(range(STEPS_PER_ITERATION, steps[-1] + 1, STEPS_PER_ITERATION))


def test_ctrl_c_saves_exits_130_and_says_how_to_resume(killed_then_interrupted):
    run_dir, _, exit_code, out = killed_then_interrupted
    stopped_at = _logged(run_dir)
    assert exit_code == 130, out
    assert "Traceback" not in out
    assert (f"interrupted (SIGINT): checkpoint saved at step {stopped_at:,}. Continue with "
            f"`python cli.py train --resume {run_dir}`") in plain(out)
    assert _checkpoints(run_dir)[-1] == stopped_at
    run, step = restore_run(run_dir)
    assert step == stopped_at == int(run.state.steps)


def test_sigterm_asks_to_stop_like_ctrl_c_and_a_second_signal_stops_at_once():
    """Job schedulers send SIGTERM before they kill: it saves and stops like Ctrl-C."""
    previous = signal.getsignal(signal.SIGTERM)
    with StopRequests(Console(quiet=True)) as stop:
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.requested and stop.signum == signal.SIGTERM
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) is previous
    interrupted = TrainingInterrupted(Path("runs/b/1"), 32, True, signal.SIGTERM)
    assert interrupted.exit_code == 143 and "--resume runs/b/1" in interrupted.message
