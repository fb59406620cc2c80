"""Several processes misconfigured, on localhost (127.0.0.1) only: each ends in one clear
line within the --distributed.timeout-s it was given, never a hang or an abort, and no run
directory is made. Processes are threads here: the meeting at the coordinator's port
(`ppo.rendezvous`) runs before JAX's distributed runtime, which these cases never reach."""

from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reliability_tools import TINY, cli_main, plain

from modular_ppo.ppo.errors import DistributedSetupError
from modular_ppo.ppo.rendezvous import rendezvous

HOST = "127.0.0.1"
GUARD_S = 60
"""A case that takes longer has hung: the test fails instead of waiting forever."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def _train(tmp: Path, rank: int, count: int, port: int, timeout_s: float) -> tuple[int, str]:
    return cli_main("train", "--body", "ant-modular", *TINY, "--runs-root", tmp / "runs",
                    "--distributed.coordinator-address", f"{HOST}:{port}",
                    "--distributed.num-processes", count, "--distributed.process-id", rank,
                    "--distributed.timeout-s", timeout_s)


def _in_threads(*calls):
    with ThreadPoolExecutor(len(calls)) as pool:
        futures = [pool.submit(call) for call in calls]
        return [future.result(timeout=GUARD_S) for future in futures]


def test_a_process_whose_coordinator_never_comes(tmp_path):
    code, out = _in_threads(lambda: _train(tmp_path, 1, 2, _free_port(), 1.5))[0]
    text = plain(out)
    assert code == 2, out
    assert "waiting for process 0 at 127.0.0.1:" in text
    assert "process 0 did not answer" in text and "--distributed.timeout-s 1.5" in text
    assert "Traceback" not in out and not (tmp_path / "runs").exists()


def test_process_zero_names_the_processes_that_never_join(tmp_path):
    code, out = _in_threads(lambda: _train(tmp_path, 0, 3, _free_port(), 1.5))[0]
    text = plain(out)
    assert code == 2, out
    assert "waiting for 3 processes at 127.0.0.1:" in text and "1 joined (process 0)" in text
    assert "only 1 of 3 processes joined" in text and "missing process ids: 1, 2" in text
    assert not (tmp_path / "runs").exists()


def test_a_port_in_use_is_named(tmp_path):
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        code, out = _train(tmp_path, 0, 2, taken.getsockname()[1], 5)
    assert code == 2, out
    assert "process 0 cannot listen at port" in plain(out) and "free port" in plain(out)


def _meet(port: int, count: int, rank: int, timeout_s: float, said: list[str]):
    def call():
        try:
            rendezvous(HOST, port, count, rank, timeout_s, said.append)
        except DistributedSetupError as error:
            return str(error)
        return "joined"
    return call


def test_all_processes_meet_and_process_zero_reports_each():
    port, said = _free_port(), []
    results = _in_threads(*(_meet(port, 3, rank, 20, said) for rank in (0, 1, 2)))
    assert results == ["joined"] * 3
    assert f"waiting for 3 processes at {HOST}:{port}: 3 joined" in said
    with socket.socket() as again:  # the port is free again for JAX's coordinator
        again.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        again.bind(("", port))


def test_a_rank_given_twice_is_refused_and_the_run_times_out_naming_the_missing_one():
    port, said = _free_port(), []
    zero, first, second = _in_threads(
        _meet(port, 3, 0, 3, said), _meet(port, 3, 1, 3, said), _meet(port, 3, 1, 3, said))
    refused = [r for r in (first, second) if "refused this process" in r]
    assert len(refused) == 1 and "process id 1 has joined already" in refused[0]
    assert "missing process ids: 2" in zero


def test_another_process_count_is_refused():
    port, said = _free_port(), []
    zero, other = _in_threads(_meet(port, 2, 0, 3, said), _meet(port, 3, 1, 3, said))
    assert "it has --distributed.num-processes 3, process 0 has 2" in other
    assert "missing process ids: 1" in zero


FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

addresses = st.one_of(
    st.builds(lambda port: f"{HOST}:{port}", st.integers(-5, 70_000)),
    st.sampled_from(["localhost", ":1234", "127.0.0.1:", "[::1]:0", "no-such-host.invalid:1",
                     "127.0.0.1:12a", "127.0.0.1:1234:5", "", "host name:80"]),
    st.text(max_size=12),
)
numbers = st.one_of(st.integers(-3, 5).map(str), st.sampled_from(["1.5", "x", "", "99999"]))


def _check_flags(tmp: Path, address: str, count: str, rank: str, timeout: str) -> None:
    assume(not (count == "1" and rank == "0"))  # a valid one-process run joins JAX's runtime
    code, out = _in_threads(lambda: cli_main(
        "train", "--body", "ant-modular", *TINY, "--runs-root", tmp / "runs",
        "--distributed.coordinator-address", address, "--distributed.num-processes", count,
        "--distributed.process-id", rank, "--distributed.timeout-s", timeout))[0]
    assert code == 2, out
    assert "Traceback" not in out, out
    assert plain(out).count("error:") + plain(out).count("For full helptext") == 1, out
    assert not (tmp / "runs").exists()


@settings(max_examples=40, **FUZZ)
@given(address=addresses, count=numbers, rank=numbers,
       timeout=st.sampled_from(["0.05", "0.2", "0", "-1", "nan", "inf", "1e9"]))
def test_generated_flags_end_in_one_clear_line(tmp_path, address, count, rank, timeout):
    _check_flags(tmp_path, address, count, rank, timeout)


@pytest.mark.benchmark
@settings(max_examples=1000, **FUZZ)
@given(address=addresses, count=numbers, rank=numbers,
       timeout=st.sampled_from(["0.05", "0.2", "0", "-1", "nan", "inf", "1e9"]))
def test_generated_flags_end_in_one_clear_line_many(tmp_path, address, count, rank, timeout):
    _check_flags(tmp_path, address, count, rank, timeout)


def test_no_thread_is_left_waiting():
    assert not [t for t in threading.enumerate() if t.name.startswith("ThreadPoolExecutor")
                and t.is_alive()]
