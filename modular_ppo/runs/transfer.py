"""A trained run's policy acting on a body: one it trained on, or a new one (zero-shot).

Zero-shot means the parameters are the run's, unchanged, in a network built for the new
body with the run's network config (same architecture and max sizes, the new body's module
graph). The observation normalizer is per body state, not a parameter: for a new body its
statistics are taken from the trained bodies' modules that observe the same blocks
(statistics "trained-bodies", `statistics_from_trained_bodies`; the warm-up for modules that
match none), or estimated from `warmup_steps` environment steps of the policy itself acting
on that body (statistics "warm-up": observations only; no reward is used and no parameter
changes).
"""

from __future__ import annotations

import dataclasses
import functools
import re

import jax
from flax import nnx
from jaxtyping import PRNGKeyArray

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import ObsBlock, make_env, observation_layout
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks import MaxSizeTooSmall, make_network
from modular_ppo.networks.registry import acting_on_any_body, architecture
from modular_ppo.ppo import collect_rollout
from modular_ppo.runs.config import StatisticsSource, TrainRunConfig
from modular_ppo.runs.errors import TransferError
from modular_ppo.runs.max_sizes import source_cannot_hold
from modular_ppo.runs.run import Run

DEFAULT_WARMUP_STEPS = 4096
WARMUP_ENVS = 16
WARMUP_ROUNDS = 4
"""The warm-up runs in rounds, the statistics updated after each, so later rounds act on
normalized observations as the policy did in training."""


@dataclasses.dataclass
class PolicyOnBody:
    """A run's policy made to act on one body."""

    body: BodyGraph
    env: ModularEnvProtocol
    graphdef: nnx.GraphDef
    network_state: nnx.State
    trained_on: bool
    """Whether the run trained on this body (its own normalizer statistics are used)."""


def trained_policies(run: Run) -> dict[str, PolicyOnBody]:
    """The run's policy on each body it trained on, with that body's own statistics."""
    return {
        group.name: PolicyOnBody(run.bodies[group.name], group.env, group.graphdef,
                                 run.state.network_state(group.name), True)
        for group in run.groups
    }


def policy_on_body(run: Run, run_name: str, body_name: str, warmup_steps: int,
                   key: PRNGKeyArray,
                   statistics: StatisticsSource = "trained-bodies") -> PolicyOnBody:
    """The run's policy on `body_name`: its own if the run trained on it, else the run's
    parameters in a network built for that body, its normalizer statistics from
    `statistics` (module docstring).

    run_name: how to call the run in error messages (its directory).
    """
    own = trained_policies(run)
    if body_name in own:
        return own[body_name]
    body, env, graphdef, rest = network_for_body(run.config, run_name, body_name)
    network_state = network_state_on_body(run, body, env, graphdef, rest, statistics,
                                          warmup_steps, key)
    return PolicyOnBody(body, env, graphdef, network_state, False)


def transfer_key(seed: int) -> PRNGKeyArray:
    """The key of a run's warm-ups on new bodies and of `eval`'s episodes: apart from the
    keys of its training (seed) and its evaluations during training (seed + 1)."""
    return jax.random.key(seed + 2)


def network_state_on_body(
    source: Run,
    body: BodyGraph,
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    rest: nnx.State,
    statistics: StatisticsSource,
    warmup_steps: int,
    key: PRNGKeyArray,
) -> nnx.State:
    """`source`'s parameters in a network for `body` (`graphdef`; `rest`: its state without
    parameters), with the normalizer statistics `source` trained with on that body, or for
    a body it did not train on, `new_body_statistics` from `statistics`."""
    if body.name in source.bodies:
        return source.state.network_state(body.name)
    return new_body_statistics(source, body, env, graphdef,
                               nnx.merge_state(source.state.params, rest), statistics,
                               warmup_steps, key)


def new_body_statistics(
    trained: Run,
    body: BodyGraph,
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    statistics: StatisticsSource,
    warmup_steps: int,
    key: PRNGKeyArray,
) -> nnx.State:
    """`network_state` (a network for `body`, which `trained` did not train on) with
    normalizer statistics from `statistics`: `warm_up_normalizer`, or
    `statistics_from_trained_bodies` with the warm-up for modules that match none."""
    if statistics == "warm-up":
        return warm_up_normalizer(env, graphdef, network_state, warmup_steps, key)
    network_state, unmatched = statistics_from_trained_bodies(trained, body, graphdef,
                                                              network_state)
    if unmatched:
        # The warm-up adds its observations to every module's statistics; the second
        # call puts the matched modules' back to the trained bodies' own.
        network_state = warm_up_normalizer(env, graphdef, network_state, warmup_steps, key)
        network_state, _ = statistics_from_trained_bodies(trained, body, graphdef, network_state)
    return network_state


def network_for_body(
    config: TrainRunConfig, run_name: str, body_name: str, this_run: bool = False
) -> tuple[BodyGraph, ModularEnvProtocol, nnx.GraphDef, nnx.State]:
    """A body the run did not train on, its env (the run's env settings and backend), and
    a network for it with the run's network config: its graphdef and its state without
    parameters (fresh normalizer statistics), for the run's parameters to complete.

    run_name: how to call the run in error messages (its directory or its flag);
    this_run: the run is being set up (`--held-out`), so the fix is a flag of its own."""
    if architecture(config.arch).per_module_weights:
        raise TransferError(
            f"{run_name} is trained with --arch {config.arch}, whose weights belong to the "
            f"modules of {', '.join(config.bodies)} by name; they cannot act on body "
            f"'{body_name}'. Use --arch {acting_on_any_body()} to act on other bodies."
        )
    body = load_body(body_name, config.partition)
    env = make_env(body, config.env, config.env_backend)
    try:
        network = make_network(body, env.obs_sizes, config.network, rngs=nnx.Rngs(config.seed))
    except MaxSizeTooSmall as error:
        raise TransferError(
            f"{run_name} cannot act on body '{body_name}': "
            f"{source_cannot_hold(error, this_run)}"
        ) from None
    graphdef, _, rest = nnx.split(network, nnx.Param, ...)
    return body, env, graphdef, rest


def warm_up_normalizer(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    steps: int,
    key: PRNGKeyArray,
) -> nnx.State:
    """`network_state` with observation statistics from `steps` environment steps of its
    own policy on `env` in WARMUP_ROUNDS rounds of WARMUP_ENVS environments (rounded up to
    a multiple of their product); 0 keeps them as they are."""
    if steps < 0:
        raise TransferError(f"warm-up steps = {steps}: give 0 or a positive number of steps.")
    length = -(-steps // (WARMUP_ROUNDS * WARMUP_ENVS))
    if length == 0:
        return network_state
    for round_key in jax.random.split(key, WARMUP_ROUNDS):
        network_state = _warm_up_round(env, graphdef, length, network_state, round_key)
    return network_state


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _warm_up_round(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    length: int,
    network_state: nnx.State,
    key: PRNGKeyArray,
) -> nnx.State:
    env_state = jax.vmap(env.reset)(jax.random.split(key, WARMUP_ENVS))
    recurrent = nnx.merge(graphdef, network_state).initialize_state(WARMUP_ENVS)
    network_state, _, _, rollout = collect_rollout(env, graphdef, network_state, env_state,
                                                   recurrent, length)
    network = nnx.merge(graphdef, network_state)
    network.update_statistics(rollout.obs)
    return nnx.state(network)


def statistics_from_trained_bodies(
    run: Run, body: BodyGraph, graphdef: nnx.GraphDef, network_state: nnx.State
) -> tuple[nnx.State, tuple[str, ...]]:
    """`network_state` (a network for `body`) with each module's observation statistics
    pooled from the run's trained bodies' modules that `matching_modules` picks. Returns
    the state and the modules that match none (their statistics left as they were); a
    network without a normalizer comes back unchanged."""
    if not run.config.network.normalize_observations:
        return network_state, ()
    trained_layouts = {name: observation_layout(run.bodies[name], run.config.env)
                       for name in run.bodies}
    trained_statistics = {
        group.name: nnx.merge(group.graphdef, run.state.network_state(group.name)).normalizer
        for group in run.groups
    }
    network = nnx.merge(graphdef, network_state)
    matches = matching_modules(observation_layout(body, run.config.env), trained_layouts)
    for module, sources in matches.items():
        if sources:
            network.normalizer.statistics[module].merge(
                [trained_statistics[b].statistics[m] for b, m in sources])
    return nnx.state(network), tuple(m for m, sources in matches.items() if not sources)


def matching_modules(
    layout: dict[str, tuple[ObsBlock, ...]],
    trained_layouts: dict[str, dict[str, tuple[ObsBlock, ...]]],
) -> dict[str, list[tuple[str, str]]]:
    """Module of `layout` -> the (body, module) pairs of `trained_layouts` whose modules
    observe the same blocks (feature, hop distance and size, in order) and have its name;
    failing that, its name with digits ignored (centipede-8's leg_3_left: every left leg);
    failing that, any name; [] when no module observes the same blocks."""
    matches = {}
    for module, blocks in layout.items():
        same_blocks = [(b, m) for b, modules in trained_layouts.items()
                       for m, theirs in modules.items() if _signature(theirs) == _signature(blocks)]
        matches[module] = ([(b, m) for b, m in same_blocks if m == module]
                           or [(b, m) for b, m in same_blocks if _role(m) == _role(module)]
                           or same_blocks)
    return matches


def _signature(blocks: tuple[ObsBlock, ...]) -> tuple[tuple[int | None, str, int], ...]:
    return tuple((b.hops, b.feature, b.size) for b in blocks)


def _role(module: str) -> str:
    return re.sub(r"\d+", "#", module)
