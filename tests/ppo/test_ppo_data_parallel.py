"""Data parallel training gives the update of one device with the same global batch: over
two devices of one process, and over two processes joined by jax.distributed (gloo)."""

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import jax
import numpy as np
import pytest
from ppo_data_parallel_worker import CONFIG, VARIANTS, one_call, to_numpy

from modular_ppo.ppo import (
    DistributedConfig,
    DistributedSetupError,
    initialize_distributed,
    start_distributed,
)

WORKER = Path(__file__).with_name("ppo_data_parallel_worker.py")
# Float rounding only: sums over environments are split differently across devices. The
# parameters move by far more than this (checked below).
RTOL, ATOL = 1e-4, 1e-5


class Worker(NamedTuple):
    process: subprocess.Popen
    out: Path
    """The .npz it saves."""
    log: Path
    """Its stdout and stderr."""


def launch(directory: Path, name: str, *distributed: str, devices: int) -> Worker:
    out, log = directory / f"{name}.npz", directory / f"{name}.log"
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={devices}"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, str(WORKER), str(out), *distributed],
            env={**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": flags},
            stdout=log_file, stderr=subprocess.STDOUT,
        )
    return Worker(process, out, log)


def results(worker: Worker) -> dict[str, np.ndarray]:
    try:
        worker.process.wait(timeout=600)
    except subprocess.TimeoutExpired:
        worker.process.kill()
        worker.process.wait()
    assert worker.process.returncode == 0, worker.log.read_text()[-3000:]
    with np.load(worker.out) as saved:
        return dict(saved)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def workers(tmp_path_factory):
    """All three worker processes start at once, so their compiles overlap each other's
    and the reference's."""
    directory = tmp_path_factory.mktemp("data_parallel")
    coordinator = f"localhost:{free_port()}"
    started = {
        "two devices": launch(directory, "devices", devices=2),
        **{f"process {rank}": launch(directory, f"process{rank}", coordinator, "2", str(rank),
                                     devices=1)
           for rank in range(2)},
    }
    yield started
    for worker in started.values():
        if worker.process.poll() is None:
            worker.process.kill()
            worker.process.wait()


@pytest.fixture(scope="module", params=VARIANTS)
def reference(workers, request):
    """The same call on one device, without data parallelism, and how far it moved the
    parameters: for one body, and for two bodies sharing the network."""
    variant = request.param
    before, after, metrics = one_call(CONFIG, variant)
    moved = max(float(np.max(np.abs(a - b)))
                for a, b in zip(*(jax.tree.leaves(s.params) for s in (before, after))))
    return variant, {**to_numpy(after, f"{variant}/state"),
                     **to_numpy(metrics, f"{variant}/metrics")}, moved


def assert_same_update(reference, parallel):
    variant, expected, moved = reference
    assert moved > 100 * RTOL  # the comparison tells this update from none
    assert set(expected) <= set(parallel)
    for name, value in expected.items():
        np.testing.assert_allclose(parallel[name], value, rtol=RTOL, atol=ATOL, err_msg=name)
    if variant == "two bodies":  # each body's metrics under its name
        assert f"{variant}/metrics['losses/critic/toy-b/left']" in expected


def test_two_devices_give_the_single_device_update(workers, reference):
    parallel = results(workers["two devices"])
    variant = reference[0]
    assert int(parallel[f"{variant}/layout/devices"]) == 2
    half = CONFIG.n_envs // 2 // (2 if variant == "two bodies" else 1)  # of the first body
    assert parallel[f"{variant}/layout/env_rows"].tolist() == [half, half]
    assert parallel[f"{variant}/layout/recurrent_rows"].tolist() == [half, half]
    assert bool(parallel[f"{variant}/layout/network_replicated"])
    assert_same_update(reference, parallel)


def test_two_processes_give_the_single_process_update(workers, reference):
    for rank in range(2):
        parallel = results(workers[f"process {rank}"])
        variant = reference[0]
        assert int(parallel[f"{variant}/layout/devices"]) == 2
        rows = CONFIG.n_envs // 2 // (2 if variant == "two bodies" else 1)
        assert parallel[f"{variant}/layout/env_rows"].tolist() == [rows]  # its own device
        assert_same_update(reference, parallel)


def test_n_envs_that_do_not_split_over_devices_are_refused(workers):
    message = str(results(workers["two devices"])["error/indivisible"])
    assert message.startswith("PPOConfig.n_envs = 6: ")
    assert "multiple of 4" in message and "fewer minibatches" in message


@pytest.mark.parametrize(
    "arguments, named",
    [
        (("localhost", 2, 0), "coordinator_address"),
        (("localhost:1234", 0, 0), "num_processes"),
        (("localhost:1234", 2, 2), "process_id"),
    ],
)
def test_initialize_distributed_names_the_bad_argument(arguments, named):
    with pytest.raises(DistributedSetupError, match=rf"^{named} = "):
        initialize_distributed(*arguments)


@pytest.mark.parametrize("given", [{"process_id": 0}, {"num_processes": 2},
                                   {"coordinator_address": "localhost:1234"}])
def test_auto_refuses_settings_given_by_hand(given):
    """Rank 0 is a setting too: --distributed.auto --distributed.process-id 0 is refused."""
    with pytest.raises(DistributedSetupError, match="--distributed.auto takes the cluster's"):
        start_distributed(DistributedConfig(auto=True, **given))


def test_leaves_without_elements_stay_replicated():
    """A jitted step hands empty leaves (MuJoCo's `act` of a body without activations)
    back replicated; asking for them split would make the next call refuse the state."""
    from jax.sharding import PartitionSpec

    from modular_ppo.ppo.sharding import DATA_AXIS, along_envs, data_mesh

    shardings = along_envs({"qpos": np.zeros((4, 3)), "act": np.zeros((4, 0))}, 0, data_mesh())
    assert shardings["qpos"].spec == PartitionSpec(DATA_AXIS)
    assert shardings["act"].spec == PartitionSpec()
