"""Joining a training run of several processes (hosts) through `jax.distributed`."""

from __future__ import annotations

import jax

from modular_ppo.ppo.errors import DistributedSetupError


def initialize_distributed(coordinator_address: str, num_processes: int, process_id: int) -> None:
    """Join a run of `num_processes` processes; call it in each, before any other JAX call.

    coordinator_address: "host:port" where process 0 listens, the same in every process.
    process_id: this process's rank, 0 <= process_id < num_processes.

    Afterwards `jax.devices()` lists the devices of every process, and training with
    `PPOConfig(data_parallel=True)` splits the environments over all of them. Every process
    runs the same program with the same configs and seed. Devices of the CPU platform talk
    through gloo (the setting has no effect on GPUs or TPUs).
    """
    host, _, port = coordinator_address.rpartition(":")
    if not host or not port.isdigit():
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
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(coordinator_address, num_processes, process_id)
