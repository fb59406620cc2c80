"""Several independent trainings (different seeds, same bodies, networks and settings) as one
compiled program: the training states stacked along a leading seed axis and the training
step vmapped over it, as PureJaxRL does.

    groups, states = new_seed_states(lambda seed: [(env, make_net(seed))], config, [0, 1, 2])
    result = train_seeds(groups, states, config)
    result.metrics[1]                     # seed 1's last metrics, as `train` reports them
    one_seed(result.states, 1)            # seed 1's TrainingState (checkpoint it, evaluate it)

Each seed's trajectory is the one `train` gives that seed alone (`new_training_state` with
that seed and that seed's networks): the seeds share the program, not their values.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jaxtyping import PyTree

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks.contract import ModularNetwork
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.errors import BodyGroupError, PPOConfigError
from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host
from modular_ppo.ppo.pipelined_step import pipelined_train_step
from modular_ppo.ppo.state import BodyGroup, TrainingState, check_groups, new_training_state
from modular_ppo.ppo.step import check_static_arguments, train_step

BodiesOfSeed = Callable[[int], Sequence[tuple[ModularEnvProtocol, ModularNetwork]]]
"""seed -> (env, network) per body, as `new_training_state` takes them: the same env
objects for every seed, each seed's networks initialized from that seed."""

OnSeedsIteration = Callable[[TrainingState, list[HostMetrics]], bool]
"""Called after every jitted call with the stacked states and each seed's metrics; True
stops training."""


def stack(states: Sequence[PyTree]) -> PyTree:
    """Pytrees of one structure -> one pytree whose leaves carry a leading axis (one entry
    per pytree, in order)."""
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)


def one_seed(states: PyTree, index: int) -> PyTree:
    """Entry `index` (a position along the seed axis, not a seed) of stacked pytrees."""
    return jax.tree.map(lambda leaf: leaf[index], states)


def new_seed_states(
    bodies: BodiesOfSeed,
    config: PPOConfig,
    seeds: Sequence[int],
    *,
    body_envs: Mapping[str, int] | None = None,
    loss_weights: Mapping[str, float] | None = None,
) -> tuple[tuple[BodyGroup, ...], TrainingState]:
    """The groups, and the fresh training states of `seeds` stacked along a leading axis:
    entry i is `new_training_state(bodies(seeds[i]), config, seeds[i], body_envs=...,
    loss_weights=...)`'s state. Raises BodyGroupError when two seeds' groups differ (other
    env objects, or networks of other structure): every seed must be the same program."""
    if not seeds or len(set(seeds)) != len(seeds):
        raise PPOConfigError(f"seeds {list(seeds)}: give one or more distinct seeds.")
    if config.data_parallel:
        raise PPOConfigError("several seeds in one program train on one device: drop "
                             "data_parallel, or train the seeds one run each.")
    groups, states = None, []
    for seed in seeds:
        seed_groups, state = new_training_state(bodies(seed), config, seed, body_envs=body_envs,
                                                loss_weights=loss_weights)
        if groups is not None and seed_groups != groups:
            raise BodyGroupError(
                f"seed {seed} builds other groups than seed {seeds[0]} (envs or network "
                "structures): build each env once and give it to every seed; only the "
                "networks' values may depend on the seed.")
        groups = seed_groups
        states.append(state)
    return groups, stack(states)


@functools.partial(jax.jit, static_argnums=(0, 1))
def train_step_seeds(
    groups: tuple[BodyGroup, ...], config: PPOConfig, states: TrainingState
) -> tuple[TrainingState, Metrics]:
    """`train_step` on every seed's state (leading seed axis in and out, metrics too), as
    one program. Jitted with groups and config static, as `train_step`."""
    return jax.vmap(lambda state: train_step(groups, config, state))(states)


def seed_metrics(metrics: Metrics, n_seeds: int, bodies: Sequence[str] = ()) -> list[HostMetrics]:
    """Stacked device metrics -> each seed's host metrics (`metrics_to_host`), in seed order."""
    host = jax.device_get(metrics)
    return [metrics_to_host(one_seed(host, i), bodies) for i in range(n_seeds)]


class SeedsResult(NamedTuple):
    groups: tuple[BodyGroup, ...]
    states: TrainingState
    """Every seed's state, stacked (`one_seed` takes one out)."""
    metrics: list[HostMetrics]
    """Each seed's metrics of the last call, in seed order."""


def train_seeds(
    groups: tuple[BodyGroup, ...],
    states: TrainingState,
    config: PPOConfig,
    *,
    on_iteration: OnSeedsIteration | None = None,
    pipelined: bool = False,
    device_share: float = 0.0,
) -> SeedsResult:
    """`train` for stacked states (`new_seed_states`): every call runs
    `config.iterations_per_call` iterations of every seed in one compiled program, until
    each seed has taken `config.total_steps` environment steps or `on_iteration` says stop.

    Each seed's metrics are `train`'s ("steps", "time/call_s", and on the first call
    "time/compile_s" are the program's, the same for every seed);
    "throughput/env_steps_per_s" counts every seed's steps (the program's throughput).
    pipelined, device_share: as `train`'s (the host's C simulator steps every seed's
    environments, `pipelined_train_step`).
    """
    check_groups(groups, config)
    for group in groups:
        check_static_arguments(group.env, group.graphdef)
    n_seeds = int(states.iteration.shape[0]) if states.iteration.ndim == 1 else 0
    if n_seeds == 0:
        raise PPOConfigError("train_seeds takes states stacked along a seed axis "
                             "(new_seed_states); for one seed's state use train.")
    bodies = [group.name for group in groups]
    started = time.perf_counter()
    if pipelined:
        step = pipelined_train_step(groups, config, states, device_share, seeded=True)
    else:
        step = train_step_seeds.lower(groups, config, states).compile()
    timing = {"time/compile_s": time.perf_counter() - started}
    steps_per_call = n_seeds * config.iterations_per_call * config.steps_per_iteration
    metrics: list[HostMetrics] = [{} for _ in range(n_seeds)]
    while _steps(states) < config.total_steps:
        started = time.perf_counter()
        states, device_metrics = step(states)
        metrics = seed_metrics(device_metrics, n_seeds, bodies)
        seconds = time.perf_counter() - started
        shared = {**timing, "steps": _steps(states), "time/call_s": seconds,
                  "throughput/env_steps_per_s": steps_per_call / seconds}
        for own in metrics:
            own.update(shared)
        timing = {}
        if on_iteration is not None and on_iteration(states, metrics):
            break
    return SeedsResult(groups, states, metrics)


def _steps(states: TrainingState) -> int:
    """Environment steps each seed has taken (the same for all: they step in lockstep)."""
    return int(one_seed(states.steps, 0))  # the counter alone: a whole state is ~100 leaves
