"""Joining a training run of several processes (hosts) through `jax.distributed`."""

from __future__ import annotations

import dataclasses

import jax

from modular_ppo.ppo.errors import DistributedSetupError


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

    @property
    def enabled(self) -> bool:
        return self.auto or self.coordinator_address is not None


def initialize_distributed(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
) -> None:
    """Join a run of several processes; call it in each, before any other JAX call.

    coordinator_address: "host:port" where process 0 listens, the same in every process.
    process_id: this process's rank, 0 <= process_id < num_processes.
    All three None: JAX detects them from the cluster (SLURM, Open MPI, Kubernetes, Cloud
    TPU; `jax.distributed.initialize()`).

    Afterwards `jax.devices()` lists the devices of every process, and training with
    `PPOConfig(data_parallel=True)` splits the environments over all of them. Every process
    runs the same program with the same configs and seed. Devices of the CPU platform talk
    through gloo (the setting has no effect on GPUs or TPUs).
    """
    given = (coordinator_address, num_processes, process_id)
    if any(value is not None for value in given):
        _check(coordinator_address, num_processes, process_id)
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id)
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
        given = (config.coordinator_address, config.num_processes, config.process_id)
        if any(value is not None for value in given):
            raise DistributedSetupError(
                "--distributed.auto takes the cluster's settings: drop --distributed."
                "coordinator-address, --distributed.num-processes and --distributed."
                "process-id, or drop --distributed.auto to give them yourself."
            )
        initialize_distributed()
    else:
        initialize_distributed(config.coordinator_address, config.num_processes,
                               config.process_id)
    _joined.append(config)


def _check(coordinator_address: object, num_processes: object, process_id: object) -> None:
    host, _, port = str(coordinator_address).rpartition(":")
    if not isinstance(coordinator_address, str) or not host or not port.isdigit():
        raise DistributedSetupError(
            f"coordinator_address = {coordinator_address!r}: give the host and port of "
            "process 0 as 'host:port', e.g. 'localhost:1234'."
        )
    if not isinstance(num_processes, int) or num_processes < 1:
        raise DistributedSetupError(
            f"num_processes = {num_processes!r}: give the number of processes in the run, a "
            "positive integer."
        )
    if not isinstance(process_id, int) or not 0 <= process_id < num_processes:
        raise DistributedSetupError(
            f"process_id = {process_id!r}: give each process its own rank from 0 to "
            f"num_processes - 1 = {num_processes - 1}."
        )
