"""The training state: one pytree holding everything an exact resume needs."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct
from jax.sharding import SingleDeviceSharding
from jaxtyping import Array, Int, PRNGKeyArray

from modular_ppo.env.types import ModularEnvProtocol, State
from modular_ppo.networks.contract import ModularNetwork, NetState
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.errors import NetworkEnvMismatch
from modular_ppo.ppo.sharding import (
    along_envs,
    check_data_parallel,
    data_mesh,
    place,
    replicated,
)


@struct.dataclass
class TrainingState:
    """Everything PPO carries from one iteration to the next, as arrays only (no Python
    objects), so orbax can checkpoint it whole and a restored run continues bit for bit.
    The network's structure (its `nnx.GraphDef`) is kept beside it, not in it."""

    network: nnx.State
    """The network's full state: parameters, normaliser statistics, RNG streams."""
    opt_state: optax.OptState
    """The optimiser's state over the network's nnx.Param leaves."""
    env_state: State
    """The N environments' states (leading axis N)."""
    recurrent: NetState
    """The network's recurrent state per environment (leading axis N)."""
    key: PRNGKeyArray
    """Drives minibatch shuffling."""
    steps: Int[Array, ""]
    """Environment steps taken so far, over all environments (int32: up to 2**31 - 1)."""
    iteration: Int[Array, ""]
    """PPO iterations done so far."""


def make_optimizer(config: PPOConfig) -> optax.GradientTransformation:
    """Optional global-norm gradient clipping, then Adam (or AdamW with weight_decay)."""
    if config.weight_decay is None:
        step = optax.adam(config.learning_rate)
    else:
        step = optax.adamw(config.learning_rate, weight_decay=config.weight_decay)
    if config.gradient_clipping is None:
        return step
    return optax.chain(optax.clip_by_global_norm(config.gradient_clipping), step)


def check_network_fits_env(env: ModularEnvProtocol, network: ModularNetwork) -> None:
    """Raise NetworkEnvMismatch unless the network has a value head for every module and
    a policy head, of the right action size, for every actuated module."""
    graphdef, state = nnx.split(network)
    obs = {name: jnp.zeros((1, size)) for name, size in env.obs_sizes.items()}

    def one_step(state):
        module = nnx.merge(graphdef, state)
        return module(module.initialize_state(1), obs).output

    output = jax.eval_shape(one_step, state)
    _same_keys("value_estimates", output.value_estimates, env.obs_sizes,
               "every module (the env rewards every module)")
    _same_keys("loglikelihoods", output.loglikelihoods, env.action_sizes,
               "every actuated module")
    _same_keys("actions", output.actions, env.action_sizes, "every actuated module")
    for name, size in env.action_sizes.items():
        if output.actions[name].shape != (1, size):
            raise NetworkEnvMismatch(
                f"network actions['{name}'] has shape {output.actions[name].shape[1:]} per "
                f"environment, but the env's module '{name}' takes {size} actions. Build the "
                "network from the same body as the env."
            )


def _same_keys(what: str, produced: dict, expected: dict, meaning: str) -> None:
    if set(produced) != set(expected):
        raise NetworkEnvMismatch(
            f"network output {what} is keyed by {sorted(produced)}, but the env needs "
            f"{sorted(expected)} ({meaning}). Build the network from the same body and "
            "partition as the env."
        )


def new_training_state(
    env: ModularEnvProtocol, network: ModularNetwork, config: PPOConfig, seed: int
) -> tuple[nnx.GraphDef, TrainingState]:
    """Split the network once and build the state of a fresh run: reset environments,
    initial recurrent states, optimiser state. The network object itself is not changed."""
    check_network_fits_env(env, network)
    graphdef, network_state = nnx.split(network)
    params, _ = nnx.split_state(network_state, nnx.Param, ...)
    env_key, key = jax.random.split(jax.random.key(seed))
    env_state = jax.jit(jax.vmap(env.reset))(jax.random.split(env_key, config.n_envs))
    state = TrainingState(
        network=network_state,
        opt_state=make_optimizer(config).init(params),
        env_state=env_state,
        recurrent=network.initialize_state(config.n_envs),
        key=key,
        steps=jnp.zeros((), jnp.int32),
        iteration=jnp.zeros((), jnp.int32),
    )
    # Leaves built from Python scalars are weakly typed and arrays not yet placed are
    # uncommitted; steps and checkpoint restores return them strongly typed and committed
    # to a device. Fixing both now lets a fresh state, the states that follow and a
    # restored one all use the same compiled step.
    return graphdef, place_state(jax.tree.map(strongly_typed, state), config)


def state_shardings(state: TrainingState, config: PPOConfig) -> TrainingState:
    """Where each leaf of a training state lives (a TrainingState of `Sharding`s): all on
    this process's first device; with `config.data_parallel`, env and recurrent states
    split along their environment axis over `data_mesh()`, the rest on every device.
    Raises PPOConfigError when n_envs does not split evenly (`check_data_parallel`).
    Restore a checkpoint straight into place with these (orbax: ShapeDtypeStruct(...,
    sharding=...))."""
    if not config.data_parallel:
        device = SingleDeviceSharding(jax.local_devices()[0])
        return jax.tree.map(lambda _: device, state)
    mesh = data_mesh()
    check_data_parallel(config, mesh.size)
    return replicated(state, mesh).replace(
        env_state=along_envs(state.env_state, 0, mesh),
        recurrent=along_envs(state.recurrent, 0, mesh),
    )


def place_state(state: TrainingState, config: PPOConfig) -> TrainingState:
    """The state moved to `state_shardings(state, config)` (a no-op where it is already).
    Across processes every process must pass the same state, as the same seed gives."""
    return place(state, state_shardings(state, config))


def strongly_typed(leaf):
    if getattr(leaf, "weak_type", False):
        return jax.lax.convert_element_type(leaf, leaf.dtype)
    return leaf
