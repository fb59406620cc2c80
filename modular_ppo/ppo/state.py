"""The bodies a run trains (static groups) and its training state: one pytree holding
everything an exact resume needs. One body is a run with one group."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping, Sequence

import jax
import jax.numpy as jnp
import optax
from flax import nnx, struct
from jax.sharding import SingleDeviceSharding
from jaxtyping import Array, Int, PRNGKeyArray

from modular_ppo.env.types import ModularEnvProtocol, State
from modular_ppo.networks.contract import ModularNetwork, NetState
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.counter import StepCounter
from modular_ppo.ppo.errors import BodyGroupError, NetworkEnvMismatch
from modular_ppo.ppo.shape_groups import by_shape
from modular_ppo.ppo.sharding import along_envs, check_data_parallel, data_mesh, place, replicated


@dataclasses.dataclass(frozen=True)
class BodyGroup:
    """One body of a run: static structure, hashable (a jit static argument)."""

    name: str
    """The body's name; with several bodies, its metrics are keyed by it."""
    env: ModularEnvProtocol
    graphdef: nnx.GraphDef
    """This body's network structure (its own module layout; parameters are shared)."""
    body_envs: int
    """This body's share of the run's environments (PPOConfig.n_envs, the total)."""
    loss_weight: float
    """Weight of this body's PPO loss (itself a mean over its own samples) in the sum that
    the parameters are trained on; the weights of a run's bodies sum to 1."""


@struct.dataclass
class GroupState:
    """What one body carries besides the parameters."""

    network: nnx.State
    """The body's network state without parameters: observation normalizer statistics
    (per body: each body's modules see their own distributions) and sampling RNG."""
    env_state: State
    """The body's environments' states (leading axis: the group's body_envs)."""
    recurrent: NetState
    """The network's recurrent state per environment (leading axis: body_envs)."""


@struct.dataclass
class TrainingState:
    """Everything PPO carries from one iteration to the next, as arrays only (no Python
    objects), so orbax can checkpoint it whole and a restored run continues bit for bit.
    The bodies' static structure (`BodyGroup`s) is kept beside it, not in it."""

    params: nnx.State
    """The nnx.Param leaves every body's network uses."""
    opt_state: optax.OptState
    """The optimizer's state over `params`."""
    groups: dict[str, GroupState]
    """Body name -> its own state."""
    key: PRNGKeyArray
    """Drives minibatch shuffling."""
    steps: StepCounter
    """Environment steps taken so far, over every body's environments (`int(steps)`)."""
    iteration: Int[Array, ""]
    """PPO iterations done so far (int32)."""

    def network_state(self, body: str | None = None) -> nnx.State:
        """The full network state of one body (of the only one when `body` is None):
        parameters and the body's own rest, what `nnx.merge` with its graphdef and
        `make_evaluator` take."""
        if body is None:
            if len(self.groups) != 1:
                raise BodyGroupError(f"this state trains bodies {sorted(self.groups)}; "
                                     "name the one whose network state you want.")
            body = next(iter(self.groups))
        return nnx.merge_state(self.params, self.groups[body].network)


def make_optimizer(config: PPOConfig) -> optax.GradientTransformation:
    """Optional global-norm gradient clipping, then Adam (or AdamW with weight_decay), on
    the parameters stacked by shape (`shape_groups.by_shape`; its state holds Adam's moments
    as such stacks): the same update element by element, but a few operations per shape
    instead of a few per parameter array, which a body of many modules has hundreds of
    (BENCHMARKS.md, "Compile ... by module count"). With anneal_learning_rate the step
    size falls linearly to 0 over `config.total_updates`."""
    rate = (optax.linear_schedule(config.learning_rate, 0.0, config.total_updates)
            if config.anneal_learning_rate else config.learning_rate)
    if config.weight_decay is None:
        step = optax.adam(rate)
    else:
        step = optax.adamw(rate, weight_decay=config.weight_decay)
    if config.gradient_clipping is not None:
        step = optax.chain(optax.clip_by_global_norm(config.gradient_clipping), step)
    return by_shape(step)


def new_training_state(
    bodies: Sequence[tuple[ModularEnvProtocol, ModularNetwork]],
    config: PPOConfig,
    seed: int,
    *,
    body_envs: Mapping[str, int] | None = None,
    loss_weights: Mapping[str, float] | None = None,
) -> tuple[tuple[BodyGroup, ...], TrainingState]:
    """The groups and the state of a fresh run: reset environments, initial recurrent
    states, optimizer state. The network objects themselves are not changed.

    bodies: (env, network) per body, in the order the groups take; each is named by its
        env's `body.name`. With several bodies the networks must have the same parameter
        structure and shapes (build them with one NetworkConfig whose max sizes fit every
        body); the first body's parameter values are the shared ones.
    body_envs: each body's environments, adding up to `config.n_envs` (default: all of
        them for one body; required for several).
    loss_weights: each body's share of the loss, normalized to sum 1 (default: equal).
    """
    names = [env.body.name for env, _ in bodies]
    _check_unique(names)
    bodies = dict(zip(names, bodies))
    if body_envs is None:
        if len(bodies) != 1:
            raise BodyGroupError(f"bodies {list(bodies)}: give each body's number of "
                                 "environments (body_envs), adding up to PPOConfig.n_envs.")
        body_envs = {name: config.n_envs for name in bodies}
    weights = loss_weights or {name: 1.0 for name in bodies}
    total_weight = sum(weights[name] for name in bodies)
    split = {name: nnx.split(network, nnx.Param, ...) for name, (_, network) in bodies.items()}
    first = next(iter(bodies))
    params = split[first][1]
    for name, (env, network) in bodies.items():
        check_network_fits_env(env, network)
        _check_same_parameters(params, split[name][1], first, name)
    groups = tuple(
        BodyGroup(name, env, split[name][0], body_envs[name],
                  float(weights[name]) / total_weight if total_weight > 0 else 0.0)
        for name, (env, _) in bodies.items()
    )
    check_groups(groups, config)
    keys = jax.random.split(jax.random.key(seed), len(groups) + 1)
    group_states = {}
    for group, env_key in zip(groups, keys[1:]):
        env, network = bodies[group.name]
        group_states[group.name] = GroupState(
            network=split[group.name][2],
            env_state=reset_envs(env, jax.random.split(env_key, group.body_envs)),
            recurrent=network.initialize_state(group.body_envs),
        )
    state = TrainingState(
        params=params,
        opt_state=make_optimizer(config).init(params),
        groups=group_states,
        key=keys[0],
        steps=StepCounter.zero(),
        iteration=jnp.zeros((), jnp.int32),
    )
    # Leaves built from Python scalars are weakly typed and arrays not yet placed are
    # uncommitted; steps and checkpoint restores return them strongly typed and committed
    # to a device. Fixing both now lets a fresh state, the states that follow and a
    # restored one all use the same compiled step.
    return groups, place_state(jax.tree.map(strongly_typed, state), groups, config)


@functools.partial(jax.jit, static_argnums=0)
def reset_envs(env: ModularEnvProtocol, keys: PRNGKeyArray) -> State:
    """`env.reset` of every key (leading axis: one env each). Jitted with the env static,
    so every state built for the same env (each seed of a run) reuses one compiled reset."""
    return jax.vmap(env.reset)(keys)


def check_groups(groups: tuple[BodyGroup, ...], config: PPOConfig) -> None:
    """Raise BodyGroupError unless the groups and the PPO settings fit together."""
    names = [group.name for group in groups]
    if not names:
        raise BodyGroupError("no body to train: give at least one.")
    _check_unique(names)
    for group in groups:
        if group.body_envs < 1 or group.body_envs % config.n_minibatches:
            raise BodyGroupError(
                f"body '{group.name}' has {group.body_envs} environments; every body needs a "
                f"positive multiple of n_minibatches = {config.n_minibatches} (minibatches "
                "hold whole environments of every body). Change the env shares or n_envs."
            )
        if not group.loss_weight >= 0:
            raise BodyGroupError(
                f"body '{group.name}' has loss weight {group.loss_weight}; give a weight >= 0."
            )
    total = sum(group.body_envs for group in groups)
    if total != config.n_envs:
        raise BodyGroupError(
            f"the bodies' environments add up to {total}, but PPOConfig.n_envs is "
            f"{config.n_envs}; they must be equal (n_envs counts every body's environments)."
        )


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


def same_parameter_shapes(params: nnx.State, other: nnx.State) -> bool:
    """Whether one set of parameters can serve where the other does: same tree, same
    leaf shapes."""
    return (jax.tree.structure(params) == jax.tree.structure(other)
            and [jnp.shape(leaf) for leaf in jax.tree.leaves(params)]
            == [jnp.shape(leaf) for leaf in jax.tree.leaves(other)])


def _check_same_parameters(params: nnx.State, other: nnx.State, first: str, name: str) -> None:
    if not same_parameter_shapes(params, other):
        raise BodyGroupError(
            f"the networks of bodies '{first}' and '{name}' have different parameters, so "
            "one set of weights cannot serve both. Use an architecture whose weights are "
            "shared across modules (shared, graph or attention, not separate) and one "
            "NetworkConfig with max_modules, max_obs_size and max_action_size at least "
            "every body's."
        )


def state_shardings(
    state: TrainingState, groups: tuple[BodyGroup, ...], config: PPOConfig
) -> TrainingState:
    """Where each leaf of a training state lives (a TrainingState of `Sharding`s): all on
    this process's first device; with `config.data_parallel`, every body's env and
    recurrent states split along their environment axis over `data_mesh()`, the rest on
    every device. Raises PPOConfigError when a body's environments do not split evenly
    (`check_data_parallel`). Restore a checkpoint straight into place with these (orbax:
    ShapeDtypeStruct(..., sharding=...))."""
    if not config.data_parallel:
        device = SingleDeviceSharding(jax.local_devices()[0])
        return jax.tree.map(lambda _: device, state)
    mesh = data_mesh()
    check_data_parallel(config, mesh.size, {group.name: group.body_envs for group in groups})
    return replicated(state, mesh).replace(groups={
        name: GroupState(
            network=replicated(own.network, mesh),
            env_state=along_envs(own.env_state, 0, mesh),
            recurrent=along_envs(own.recurrent, 0, mesh),
        )
        for name, own in state.groups.items()
    })


def place_state(
    state: TrainingState, groups: tuple[BodyGroup, ...], config: PPOConfig
) -> TrainingState:
    """The state moved to `state_shardings(state, groups, config)` (a no-op where it is
    already). Across processes every process must pass the same state, as the same seed
    gives."""
    return place(state, state_shardings(state, groups, config))


def strongly_typed(leaf):
    if getattr(leaf, "weak_type", False):
        return jax.lax.convert_element_type(leaf, leaf.dtype)
    return leaf


def _check_unique(names: list[str]) -> None:
    if len(set(names)) != len(names):
        raise BodyGroupError(f"bodies {names}: each body may appear once; drop the repeats.")
