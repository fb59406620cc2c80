"""Data parallelism: a one-axis mesh over every device, environments split along it,
everything else replicated; placing arrays there, also across several processes."""

from __future__ import annotations

from collections.abc import Mapping

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec, Sharding
from jaxtyping import PyTree

from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.errors import PPOConfigError

DATA_AXIS = "data"
"""The mesh axis that environments are split along."""


def data_mesh() -> Mesh:
    """A mesh with one axis, "data", over every device of every process."""
    return Mesh(np.asarray(jax.devices()), (DATA_AXIS,))


def check_data_parallel(config: PPOConfig, n_devices: int, body_envs: Mapping[str, int]) -> None:
    """Raise PPOConfigError unless every device gets the same number of every body's
    environments in every minibatch. body_envs: body name -> its share of config.n_envs."""
    per_step = n_devices * config.n_minibatches
    if not config.data_parallel:
        return
    for body, envs in body_envs.items():
        if envs % per_step:
            whose = (f"body '{body}' has {envs} of PPOConfig.n_envs = {config.n_envs}"
                     if len(body_envs) > 1 else f"PPOConfig.n_envs = {config.n_envs}")
            raise PPOConfigError(
                f"{whose}: with data_parallel over {n_devices} devices "
                f"and n_minibatches = {config.n_minibatches}, every body's environments must "
                f"be divisible by devices x n_minibatches = {per_step}, because every "
                "minibatch is split evenly over the devices. Choose n_envs (and the body "
                f"shares) a multiple of {per_step}, or fewer minibatches."
            )


def along_envs(tree: PyTree, env_axis: int, mesh: Mesh) -> PyTree[NamedSharding]:
    """Shardings that split axis `env_axis` of every leaf over the mesh's data axis.
    Leaves without elements (e.g. MuJoCo's `act` of a body without activations) are
    replicated: XLA gives them back replicated from a jitted step whatever was asked."""
    split = NamedSharding(mesh, PartitionSpec(*(None,) * env_axis, DATA_AXIS))
    whole = NamedSharding(mesh, PartitionSpec())
    return jax.tree.map(lambda leaf: split if np.prod(leaf.shape) else whole, tree)


def replicated(tree: PyTree, mesh: Mesh) -> PyTree[NamedSharding]:
    """Shardings that copy every leaf whole to every device of the mesh."""
    sharding = NamedSharding(mesh, PartitionSpec())
    return jax.tree.map(lambda _: sharding, tree)


def place(tree: PyTree, shardings: PyTree[Sharding]) -> PyTree:
    """`jax.device_put(tree, shardings)` that also works across processes: a sharding
    spanning other processes' devices is filled from this process's copy of the value,
    which must be the same in every process (same program, same seed)."""
    return jax.tree.map(_place_leaf, tree, shardings)


def _place_leaf(leaf: jax.Array, sharding: Sharding) -> jax.Array:
    if sharding.is_fully_addressable or (
        isinstance(leaf, jax.Array) and not leaf.is_fully_addressable
    ):
        return jax.device_put(leaf, sharding)
    # Devices of other processes take only host values, and no key arrays: move raw bits.
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        data = jax.device_put(np.asarray(jax.random.key_data(leaf)), sharding)
        return jax.random.wrap_key_data(data, impl=jax.random.key_impl(leaf))
    return jax.device_put(np.asarray(leaf), sharding)


def to_local(tree: PyTree) -> PyTree:
    """`tree` with every leaf on this process's devices alone, so that one process can
    compute with it (evaluate, render) without the others. Leaves that span other
    processes' devices must be copied whole to each (as network states are); this
    process's copy is taken. A no-op in a run of one process."""

    def local(leaf):
        if not isinstance(leaf, jax.Array) or leaf.is_fully_addressable:
            return leaf
        if not leaf.is_fully_replicated:
            raise ValueError("to_local: a leaf split over several processes' devices has no "
                             "whole copy in this process; gather it first.")
        return leaf.addressable_data(0)

    return jax.tree.map(local, tree)
