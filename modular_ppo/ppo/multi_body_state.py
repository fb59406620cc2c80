"""Several bodies, one set of parameters: the static groups and the training state."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jax.sharding import SingleDeviceSharding
from jaxtyping import Array, Int, PRNGKeyArray

from modular_ppo.env.types import ModularEnvProtocol, State
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks.contract import ModularNetwork, NetState
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.state import check_network_fits_env, make_optimizer, strongly_typed


class MultiBodyError(ModularPPOError):
    """Bodies, networks or settings that cannot be trained together."""


@dataclasses.dataclass(frozen=True)
class BodyGroup:
    """One body of a multi-body run: static structure, hashable (a jit static argument)."""

    name: str
    """The body's name; its metrics are keyed by it."""
    env: ModularEnvProtocol
    graphdef: nnx.GraphDef
    """This body's network structure (its own module layout; parameters are shared)."""
    n_envs: int
    """Environments of this body stepped in parallel."""
    loss_weight: float
    """Weight of this body's PPO loss (itself a mean over its own samples) in the sum that
    the shared parameters are trained on."""

    def ppo_config(self, config: PPOConfig) -> PPOConfig:
        """The run's PPO settings with this body's number of environments."""
        return dataclasses.replace(config, n_envs=self.n_envs)


@struct.dataclass
class GroupState:
    """What one body carries besides the shared parameters."""

    network: nnx.State
    """The body's network state without parameters: observation normaliser statistics
    (per body: each body's modules see their own distributions) and sampling RNG."""
    env_state: State
    """The body's environments' states (leading axis n_envs)."""
    recurrent: NetState
    """The network's recurrent state per environment."""


@struct.dataclass
class MultiBodyState:
    """Everything a multi-body run carries between iterations; checkpoint it whole."""

    params: nnx.State
    """The nnx.Param leaves every body's network uses."""
    opt_state: object
    """The optimiser's state over `params`."""
    groups: dict[str, GroupState]
    """Body name -> its own state."""
    key: PRNGKeyArray
    """Drives minibatch shuffling."""
    steps: Int[Array, ""]
    """Environment steps taken so far, over every body's environments."""
    iteration: Int[Array, ""]
    """PPO iterations done so far."""

    def network_state(self, body: str) -> nnx.State:
        """The full network state of one body: shared parameters and the body's own rest
        (what `make_evaluator` and `nnx.merge` with its graphdef take)."""
        return nnx.merge_state(self.params, self.groups[body].network)


def check_groups(groups: Sequence[BodyGroup], config: PPOConfig) -> None:
    """Raise MultiBodyError unless the groups and the PPO settings fit together."""
    names = [group.name for group in groups]
    if len(set(names)) != len(names):
        raise MultiBodyError(f"bodies {names}: each body may appear once; drop the repeats.")
    for group in groups:
        if group.n_envs < 1 or group.n_envs % config.n_minibatches:
            raise MultiBodyError(
                f"body '{group.name}' has {group.n_envs} environments; every body needs a "
                f"positive multiple of n_minibatches = {config.n_minibatches} (minibatches "
                "hold whole environments of every body). Change the env shares or n_envs."
            )
        if not group.loss_weight >= 0:
            raise MultiBodyError(
                f"body '{group.name}' has loss weight {group.loss_weight}; give a weight >= 0."
            )
    total = sum(group.n_envs for group in groups)
    if total != config.n_envs:
        raise MultiBodyError(
            f"the bodies' environments add up to {total}, but PPOConfig.n_envs is "
            f"{config.n_envs}; they must be equal (n_envs counts every body's environments)."
        )
    if config.data_parallel:
        raise MultiBodyError(
            "PPOConfig.data_parallel is not supported with several bodies; train them on "
            "one device (drop --ppo.data-parallel)."
        )


def new_multi_body_state(
    bodies: Mapping[str, tuple[ModularEnvProtocol, ModularNetwork]],
    n_envs: Mapping[str, int],
    loss_weights: Mapping[str, float],
    config: PPOConfig,
    seed: int,
) -> tuple[tuple[BodyGroup, ...], MultiBodyState]:
    """The groups and a fresh state. Every network must have the same parameter structure
    and shapes (build them with one NetworkConfig whose max sizes fit every body); the
    first body's parameter values are the shared ones.

    bodies: body name -> (its env, its network), in the order the groups take.
    """
    split = {name: nnx.split(network, nnx.Param, ...) for name, (_, network) in bodies.items()}
    first = next(iter(bodies))
    params = split[first][1]
    for name, (env, network) in bodies.items():
        check_network_fits_env(env, network)
        _check_same_parameters(params, split[name][1], first, name)
    groups = tuple(BodyGroup(name, env, split[name][0], n_envs[name], float(loss_weights[name]))
                   for name, (env, _) in bodies.items())
    check_groups(groups, config)
    group_states = {}
    keys = jax.random.split(jax.random.key(seed), len(bodies) + 1)
    for group, env_key in zip(groups, keys[1:]):
        env, network = bodies[group.name]
        group_states[group.name] = GroupState(
            network=split[group.name][2],
            env_state=jax.jit(jax.vmap(env.reset))(jax.random.split(env_key, group.n_envs)),
            recurrent=network.initialize_state(group.n_envs),
        )
    state = MultiBodyState(
        params=params,
        opt_state=make_optimizer(config).init(params),
        groups=group_states,
        key=keys[0],
        steps=jnp.zeros((), jnp.int32),
        iteration=jnp.zeros((), jnp.int32),
    )
    # As `new_training_state`: strongly typed, committed leaves, so a fresh state, the
    # states that follow and a restored one all use the same compiled step.
    device = SingleDeviceSharding(jax.local_devices()[0])
    state = jax.device_put(jax.tree.map(strongly_typed, state), device)
    return groups, state


def _check_same_parameters(params: nnx.State, other: nnx.State, first: str, name: str) -> None:
    shapes = [jnp.shape(leaf) for leaf in jax.tree.leaves(params)]
    other_shapes = [jnp.shape(leaf) for leaf in jax.tree.leaves(other)]
    if jax.tree.structure(params) != jax.tree.structure(other) or shapes != other_shapes:
        raise MultiBodyError(
            f"the networks of bodies '{first}' and '{name}' have different parameters, so "
            "one set of weights cannot serve both. Use an architecture whose weights are "
            "shared across modules (shared, graph or attention, not separate) and one "
            "NetworkConfig with max_modules, max_obs_size and max_action_size at least "
            "every body's."
        )
