"""One training-step call of the data-parallel comparison case, saved as .npz for
test_ppo_data_parallel.py. The test runs it in a fresh process because the device count
(XLA_FLAGS) and jax.distributed must be set before JAX starts; it computes the single-device
reference itself with `one_call` and `to_numpy` from here.

    python ppo_data_parallel_worker.py OUT.npz
        data parallel over every device of this process
    python ppo_data_parallel_worker.py OUT.npz COORDINATOR NUM_PROCESSES PROCESS_ID
        data parallel over one process of several, joined by jax.distributed
"""

from __future__ import annotations

import dataclasses
import sys

import jax
import numpy as np
from flax import nnx
from jax.experimental import multihost_utils
from ppo_test_network import PerModuleMLP

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.ppo import (
    PPOConfig,
    PPOConfigError,
    initialize_distributed,
    new_training_state,
    train_step,
)

# Episodes of 10 steps end inside rollouts of 12 steps; the second iteration of the call
# rolls out with the updated parameters from the env and recurrent states the first left.
CONFIG = PPOConfig(n_envs=8, rollout_length=12, n_epochs=2, n_minibatches=2,
                   learning_rate=1e-2, iterations_per_call=2)


VARIANTS = ("one body", "two bodies")
"""Two bodies: toy bodies of unlike episode lengths, half of the environments each, one
network, loss weights 1:3."""


def one_call(config: PPOConfig, variant: str = "one body"):
    """(state before, state after, metrics) of one `train_step` call from a fresh state,
    with a recurrent network so that recurrent states are split over devices too."""
    envs = [TargetReachingEnv(episode_length=10, name="toy-a")]
    body_envs = loss_weights = None
    if variant == "two bodies":
        envs.append(TargetReachingEnv(episode_length=7, name="toy-b"))
        body_envs = {"toy-a": config.n_envs // 2, "toy-b": config.n_envs // 2}
        loss_weights = {"toy-a": 1.0, "toy-b": 3.0}
    bodies = [(env, PerModuleMLP(env.obs_sizes, env.action_sizes, recurrent=True,
                                 rngs=nnx.Rngs(0))) for env in envs]
    groups, state = new_training_state(bodies, config, seed=0, body_envs=body_envs,
                                       loss_weights=loss_weights)
    new_state, metrics = train_step(groups, config, state)
    return state, new_state, metrics


def to_numpy(tree, prefix: str) -> dict[str, np.ndarray]:
    """Leaves by key path, whole even where split over processes; PRNG keys as raw bits."""
    flat = {}
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
            leaf = jax.random.key_data(leaf)
        if not (leaf.is_fully_addressable or leaf.is_fully_replicated):
            leaf = multihost_utils.process_allgather(leaf, tiled=True)
        flat[prefix + jax.tree_util.keystr(path)] = np.asarray(leaf)
    return flat


def layout(state) -> dict[str, np.ndarray]:
    """How this process holds the state: environments per device, whether the network
    state is copied whole to every device."""
    (own, *_) = state.groups.values()
    env_leaf = jax.tree.leaves(own.env_state.obs)[0]
    recurrent_leaf = jax.tree.leaves(own.recurrent)[0]
    return {
        "layout/devices": np.asarray(jax.device_count()),
        "layout/env_rows": np.asarray([s.data.shape[0] for s in env_leaf.addressable_shards]),
        "layout/recurrent_rows": np.asarray(
            [s.data.shape[0] for s in recurrent_leaf.addressable_shards]),
        "layout/network_replicated": np.asarray(
            all(leaf.sharding.is_fully_replicated
                for leaf in jax.tree.leaves((state.params, own.network)))),
    }


def indivisible_error() -> str:
    """The error for n_envs that splits over minibatches but not over devices x minibatches."""
    config = dataclasses.replace(CONFIG, n_envs=2 * jax.device_count() * CONFIG.n_minibatches
                                 - CONFIG.n_minibatches, data_parallel=True)
    try:
        one_call(config)
    except PPOConfigError as error:
        return str(error)
    return "no error"


def main(out: str, *distributed: str) -> None:
    if distributed:
        coordinator, num_processes, process_id = distributed
        initialize_distributed(coordinator, int(num_processes), int(process_id))
    results = {}
    for variant in VARIANTS:
        _, state, metrics = one_call(dataclasses.replace(CONFIG, data_parallel=True), variant)
        results.update({**to_numpy(state, f"{variant}/state"),
                        **to_numpy(metrics, f"{variant}/metrics"),
                        **{f"{variant}/{k}": v for k, v in layout(state).items()}})
    if not distributed:
        results["error/indivisible"] = np.asarray(indivisible_error())
    np.savez(out, **results)


if __name__ == "__main__":
    main(*sys.argv[1:])
