"""Joining a training run of several processes (hosts) through `jax.distributed`."""

from __future__ import annotations

import dataclasses
import math
import time

import jax

from modular_ppo.ppo.errors import DistributedSetupError
from modular_ppo.ppo.rendezvous import (
    Report,
    rendezvous,
    report_to_stderr,
    resolve_host,
    seconds_left,
    split_address,
)

MAX_TIMEOUT_S = 86_400.0
"""The longest --distributed.timeout-s (a day)."""


@dataclasses.dataclass(frozen=True)
class DistributedConfig:
    """Several processes (one per host, or per GPU) training one run on JAX's distributed
    runtime: every process runs the same command with its own process id."""

    coordinator_address: str | None = None
    """"host:port" where process 0 listens, the same in every process (e.g.
    "10.0.0.1:1234"). Unset: one process, unless --distributed.auto."""
    num_processes: int | None = None
    """How many processes take part (with --distributed.coordinator-address)."""
    process_id: int | None = None
    """This process's rank, 0 .. num_processes - 1 (with --distributed.coordinator-address);
    process 0 writes the run directory."""
    auto: bool = False
    """Let JAX read the cluster's own settings (SLURM, Open MPI, Kubernetes, Cloud TPU):
    start every process the same way, e.g. `srun python cli.py train ... --distributed.auto`;
    JAX_COORDINATOR_ADDRESS, if set, names the coordinator."""
    timeout_s: float = 60.0
    """Seconds every process waits for the others to join (process 0 prints who joined);
    then the run ends with an error naming the missing process ids."""

    def __post_init__(self) -> None:
        """The settings agree before anything connects (DistributedSetupError if not)."""
        if not (isinstance(self.timeout_s, (int, float)) and not isinstance(self.timeout_s, bool)
                and math.isfinite(self.timeout_s) and 0 < self.timeout_s <= MAX_TIMEOUT_S):
            raise DistributedSetupError(
                f"--distributed.timeout-s {self.timeout_s!r}: give the seconds to wait for the "
                f"other processes, a number > 0 and at most {MAX_TIMEOUT_S:g}."
            )
        given = {"--distributed.coordinator-address": self.coordinator_address,
                 "--distributed.num-processes": self.num_processes,
                 "--distributed.process-id": self.process_id}
        named = " and ".join(f"{flag} {value}" for flag, value in given.items()
                             if value is not None)
        if self.auto and named:
            raise DistributedSetupError(
                f"--distributed.auto takes the cluster's settings: drop {named}, or drop "
                "--distributed.auto to give them yourself."
            )
        if self.coordinator_address is None and named:
            raise DistributedSetupError(
                f"{named} without --distributed.coordinator-address: a run of several "
                "processes needs the 'host:port' of process 0 in every process, with "
                "--distributed.num-processes and each its own --distributed.process-id. "
                "Give all three, or none to train in one process."
            )
        if self.coordinator_address is not None:
            _check(self.coordinator_address, self.num_processes, self.process_id)

    @property
    def enabled(self) -> bool:
        return self.auto or self.coordinator_address is not None


def initialize_distributed(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    timeout_s: float = 60.0,
    report: Report = report_to_stderr,
) -> None:
    """Join a run of several processes; call it in each, before any other JAX call.

    coordinator_address: "host:port" where process 0 listens, the same in every process.
    process_id: this process's rank, 0 <= process_id < num_processes.
    All three None: JAX detects them from the cluster (SLURM, Open MPI, Kubernetes, Cloud
    TPU; `jax.distributed.initialize()`).
    timeout_s: how long the processes wait for each other; given the three, they first
    meet at the coordinator's port (`rendezvous`: settings that disagree, a host that does
    not resolve, a port in use or a process that never comes end in DistributedSetupError
    within it, `report` saying who joined while they wait).

    Afterwards `jax.devices()` lists the devices of every process, and training with
    `PPOConfig(data_parallel=True)` splits the environments over all of them. Every process
    runs the same program with the same configs and seed. Devices of the CPU platform talk
    through gloo (the setting has no effect on GPUs or TPUs).
    """
    left_s: float = timeout_s  # for JAX's own join, after the meeting
    given = (coordinator_address, num_processes, process_id)
    if any(value is not None for value in given):
        _check(coordinator_address, num_processes, process_id)
        host, port = split_address(coordinator_address)
        start = time.monotonic()
        resolve_host(host, timeout_s)
        rendezvous(host, port, num_processes, process_id, timeout_s, report, start)
        left_s = seconds_left(start + timeout_s)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id,
                                   initialization_timeout=max(5, math.ceil(left_s)))
    except (RuntimeError, ValueError) as error:
        raise DistributedSetupError(
            f"joining the run of several processes failed: {error}. Give every process "
            "the same --distributed.coordinator-address and --distributed.num-processes "
            "and its own --distributed.process-id, or --distributed.auto inside a SLURM, "
            "Open MPI or Kubernetes job."
        ) from None


_joined: list[DistributedConfig] = []
"""The settings this process joined a run with (at most one)."""


def start_distributed(config: DistributedConfig) -> None:
    """`initialize_distributed` as `config` says: nothing when it is not enabled, nor when
    this process has already joined with the same settings (the CLI joins before it
    parses the rest of the command line)."""
    if not config.enabled or _joined == [config]:
        return
    if _joined:
        raise DistributedSetupError(
            f"this process already joined a run of several processes with {_joined[0]}; "
            f"it cannot join again with {config}. Start a new process to join another run."
        )
    if config.auto:
        initialize_distributed(timeout_s=config.timeout_s)
    else:
        initialize_distributed(config.coordinator_address, config.num_processes,
                               config.process_id, config.timeout_s)
    _joined.append(config)


def _check(coordinator_address: object, num_processes: object, process_id: object) -> None:
    if not isinstance(coordinator_address, str):
        raise DistributedSetupError(
            f"coordinator_address = {coordinator_address!r}: give the host and port of "
            "process 0 as 'host:port', e.g. 'localhost:1234'."
        )
    split_address(coordinator_address)
    if (not isinstance(num_processes, int) or isinstance(num_processes, bool)
            or num_processes < 1):
        raise DistributedSetupError(
            f"num_processes = {num_processes!r}: give the number of processes in the run "
            "(--distributed.num-processes), a positive integer."
        )
    if (not isinstance(process_id, int) or isinstance(process_id, bool)
            or not 0 <= process_id < num_processes):
        raise DistributedSetupError(
            f"process_id = {process_id!r}: give each process its own rank "
            f"(--distributed.process-id) from 0 to num_processes - 1 = {num_processes - 1}."
        )
