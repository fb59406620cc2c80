"""`cli.py train` with two processes on localhost (CPU devices talking through gloo): 2
iterations, a checkpoint, `--resume` for 2 more, and the parameters end as the session's
one-process straight run's (same global batch of 4 environments, split 2 + 2 over the
processes' devices), up to float rounding. Process 0 alone writes the run directory."""

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest
from reliability_tools import ROOT, STEPS_PER_ITERATION, TINY, plain

from modular_ppo.runs.build import build_run, restore_run

# Sums over environments are split differently across the processes' devices.
RTOL, ATOL = 1e-4, 1e-5


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def _train_in_two_processes(args: list, logs: Path, compile_cache: Path) -> list[str]:
    """Both processes of `cli.py train ARGS` run to the end; their outputs."""
    coordinator = f"localhost:{_free_port()}"
    env = {**os.environ, "JAX_COMPILATION_CACHE_DIR": str(compile_cache), "COLUMNS": "400",
           "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": f"{os.environ.get('XLA_FLAGS', '')} "
                        "--xla_force_host_platform_device_count=1"}
    processes = []
    for rank in range(2):
        log = logs / f"process{rank}.txt"
        processes.append((log, subprocess.Popen(
            [sys.executable, "cli.py", "train", *map(str, args),
             "--distributed.coordinator-address", coordinator,
             "--distributed.num-processes", "2", "--distributed.process-id", str(rank)],
            cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)))
    outputs = []
    for log, process in processes:
        try:
            process.wait(timeout=600)
        finally:
            if process.poll() is None:
                process.kill()
        outputs.append(log.read_text())
        assert process.returncode == 0, outputs[-1][-3000:]
    return outputs


@pytest.fixture(scope="module")
def distributed_run(compile_cache, tiny_body, runs_root, tmp_path_factory):
    """The run dir and both processes' outputs of the first half and of the resume."""
    logs = tmp_path_factory.mktemp("distributed")
    (logs / "first").mkdir()
    (logs / "resume").mkdir()
    first = _train_in_two_processes(
        ["--body", tiny_body, *TINY, "--backend", "mjx", "--ppo.total-steps", 32,
         "--checkpoint-every-steps", 32, "--runs-root", runs_root, "--run-name", "two-processes"],
        logs / "first", compile_cache)
    run_dir = runs_root / "tiny" / "two-processes"
    resumed = _train_in_two_processes(
        ["--resume", run_dir, "--ppo.total-steps", 64], logs / "resume", compile_cache)
    return run_dir, first, resumed


def _leaves(tree) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


def test_two_processes_train_resume_and_end_as_one_process(distributed_run, straight_runs):
    """Restored in this one process (as `cli.py eval` on one machine does), the parameters
    and optimizer state equal the one-process run's, up to float rounding."""
    (ours, step), (reference, reference_step) = (
        restore_run(distributed_run[0]), restore_run(straight_runs("mjx")))
    assert step == reference_step == 64
    for part in ("params", "opt_state"):
        for got, want in zip(_leaves(getattr(ours.state, part)),
                             _leaves(getattr(reference.state, part)), strict=True):
            np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL, err_msg=part)
    moved = max(float(np.max(np.abs(a - b))) for a, b in zip(
        _leaves(reference.state.params), _leaves(build_run(reference.config).state.params)))
    assert moved > 100 * ATOL  # the comparison tells this training from none


def test_process_zero_alone_writes_the_run_directory(distributed_run):
    run_dir, first, resumed = distributed_run
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    training = [row["step"] for row in rows if "losses/total" in row]
    assert training == [STEPS_PER_ITERATION * i for i in range(1, 5)]  # once, not per process
    assert "eval/team_return" in json.loads((run_dir / "eval.json").read_text())
    assert len(list((run_dir / "tensorboard").iterdir())) == 2  # one per session
    config = json.loads((run_dir / "config.json").read_text())["config"]
    assert config["ppo"]["data_parallel"] is True
    for outputs in (first, resumed):
        assert "run dir" in plain(outputs[0])
        assert "run dir" not in plain(outputs[1]) and "final eval" not in plain(outputs[1])
    assert "final eval at step 64" in plain(resumed[0])
    assert "resuming" in plain(resumed[0]) and "from its checkpoint at step 32" in plain(
        resumed[0])
