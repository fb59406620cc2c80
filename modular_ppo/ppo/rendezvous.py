"""Before JAX's distributed runtime starts: the coordinator's host resolved and every
process of the run met at the coordinator's port, so a misconfigured run ends in one clear
line within the user's timeout instead of JAX's wait of minutes or an abort in its C++.

Process 0 listens at the port (in use: a clear error), every other process connects and
says its rank and the run's process count; process 0 refuses a rank given twice or another
count, prints "waiting for N processes at host:port: k joined" as they come, and when all
have joined tells them to go on and closes the port, which JAX's coordinator then takes.
"""

from __future__ import annotations

import json
import math
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable

from modular_ppo.ppo.errors import DistributedSetupError

Report = Callable[[str], None]


def report_to_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def split_address(address: str) -> tuple[str, int]:
    """"host:port" -> (host, port); "[::1]:1234" -> ("::1", 1234). DistributedSetupError
    unless the port is a whole number from 1 to 65535 and the host is given."""
    host, _, port = address.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise DistributedSetupError(
            f"coordinator_address = {address!r}: give the host and port of process 0 as "
            "'host:port', the port a whole number from 1 to 65535, e.g. 'localhost:1234'."
        )
    return host, int(port)


def resolve_host(host: str, timeout_s: float) -> None:
    """DistributedSetupError unless `host` resolves to an address within `timeout_s`."""
    answer: queue.Queue = queue.Queue()

    def lookup() -> None:
        try:
            answer.put(socket.getaddrinfo(host, None, type=socket.SOCK_STREAM))
        except OSError as error:
            answer.put(error)

    threading.Thread(target=lookup, daemon=True).start()
    try:
        result = answer.get(timeout=timeout_s)
    except queue.Empty:
        result = TimeoutError(f"no answer within {timeout_s:g} s")
    if isinstance(result, BaseException):
        raise DistributedSetupError(
            f"--distributed.coordinator-address: the host {host!r} cannot be resolved "
            f"({result}). Give the name or IP address of the machine of process 0, as every "
            "process can reach it."
        )


def rendezvous(host: str, port: int, num_processes: int, process_id: int, timeout_s: float,
               report: Report = report_to_stderr, started: float | None = None) -> None:
    """Meet the run's other processes at host:port (process 0 listens there); returns when
    all `num_processes` have joined, DistributedSetupError when a setting disagrees or
    `timeout_s` passes first, counted from `started` (time.monotonic(); default: now)."""
    deadline = (time.monotonic() if started is None else started) + timeout_s
    if process_id == 0:
        _gather(host, port, num_processes, deadline, timeout_s, report)
    else:
        _join(host, port, num_processes, process_id, deadline, timeout_s, report)


def _listener(port: int) -> socket.socket:
    try:
        if socket.has_dualstack_ipv6():
            return socket.create_server(("", port), family=socket.AF_INET6, dualstack_ipv6=True)
        return socket.create_server(("", port))
    except OSError as error:
        raise DistributedSetupError(
            f"--distributed.coordinator-address: process 0 cannot listen at port {port} "
            f"({error.strerror or error}): another program, or another process 0 of this run, "
            "uses it. Give every process another free port."
        ) from None


def _gather(host: str, port: int, count: int, deadline: float, timeout_s: float,
            report: Report) -> None:
    joined: dict[int, socket.socket] = {}
    with _listener(port) as listener:
        report(f"waiting for {count} processes at {host}:{port}: 1 joined (process 0)")
        while len(joined) < count - 1:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                for connection in joined.values():
                    connection.close()
                missing = sorted(set(range(1, count)) - set(joined))
                raise DistributedSetupError(
                    f"only {len(joined) + 1} of {count} processes joined at {host}:{port} within "
                    f"--distributed.timeout-s {timeout_s:g}; missing process ids: "
                    f"{', '.join(map(str, missing))}. Start them with the same "
                    "--distributed.coordinator-address and --distributed.num-processes, or "
                    "raise --distributed.timeout-s."
                )
            listener.settimeout(min(remaining, 1.0))
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            rank = _admit(connection, count, joined, min(remaining, 5.0), report)
            if rank is not None:
                joined[rank] = connection
                report(f"waiting for {count} processes at {host}:{port}: "
                       f"{len(joined) + 1} joined")
        for connection in joined.values():
            _send(connection, {"ok": True})
        for connection in joined.values():  # they close first: the port stays free for JAX
            connection.settimeout(5.0)
            try:
                connection.recv(1)
            except OSError:
                pass
            connection.close()


def _admit(connection: socket.socket, count: int, joined: dict[int, socket.socket],
           timeout_s: float, report: Report) -> int | None:
    """The rank a connecting process states, or None (told why, and closed) if refused."""
    connection.settimeout(timeout_s)
    try:
        hello = json.loads(connection.makefile("r").readline())
        rank, their_count = int(hello["rank"]), int(hello["count"])
    except (OSError, ValueError, KeyError, TypeError):
        connection.close()
        return None
    if their_count != count:
        problem = (f"it has --distributed.num-processes {their_count}, process 0 has "
                   f"{count}; give every process the same count")
    elif rank in joined or not 0 < rank < count:
        problem = (f"process id {rank} has joined already; give each process its own "
                   f"--distributed.process-id from 0 to {count - 1}")
    else:
        return rank
    report(f"refused a process: {problem}.")
    _send(connection, {"error": problem})
    connection.close()
    return None


def _join(host: str, port: int, count: int, rank: int, deadline: float, timeout_s: float,
          report: Report) -> None:
    report(f"waiting for process 0 at {host}:{port} (this is process {rank} of {count})")
    met = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 and met:
            raise DistributedSetupError(
                f"process 0 at {host}:{port} still waited for other processes after "
                f"--distributed.timeout-s {timeout_s:g} (its output names the missing ones). "
                "Start every process of the run, or raise --distributed.timeout-s."
            )
        if remaining <= 0:
            raise DistributedSetupError(
                f"process 0 did not answer at {host}:{port} within --distributed.timeout-s "
                f"{timeout_s:g}. Start process 0 (--distributed.process-id 0) with the same "
                "--distributed.coordinator-address, check that this machine reaches that "
                "host and port, or raise --distributed.timeout-s."
            )
        try:
            connection = socket.create_connection((host, port), timeout=min(remaining, 2.0))
        except OSError:
            time.sleep(min(0.2, max(remaining, 0)))
            continue
        met = True
        with connection:
            connection.settimeout(max(deadline - time.monotonic(), 0.1))
            _send(connection, {"rank": rank, "count": count})
            try:
                answer = json.loads(connection.makefile("r").readline() or "{}")
            except (OSError, ValueError):
                answer = {}
        if answer.get("ok"):
            return
        if "error" in answer:
            raise DistributedSetupError(
                f"process 0 at {host}:{port} refused this process (--distributed.process-id "
                f"{rank}): {answer['error']}."
            )
        # No answer: process 0 went away or the deadline passed; try again until it does.


def _send(connection: socket.socket, message: dict) -> None:
    try:
        connection.sendall((json.dumps(message) + "\n").encode())
    except OSError:
        pass


def seconds_left(deadline: float) -> int:
    """Whole seconds until `deadline` (time.monotonic), at least 1."""
    return max(1, math.ceil(deadline - time.monotonic()))
