"""The jitted training step: K PPO iterations, each a rollout then all minibatch updates."""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jaxtyping import Array, Bool, Float

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.batch import (
    Minibatch,
    make_batch,
    minibatch_shardings,
    split_environments,
)
from modular_ppo.ppo.loss import LossTerms, ppo_loss
from modular_ppo.ppo.metrics import (
    Metrics,
    combine_iterations,
    episode_means,
    explained_variance,
    first_failure,
    for_body,
    nonfinite,
    per_key,
)
from modular_ppo.ppo.rollout import Rollout, collect_rollout
from modular_ppo.ppo.shape_groups import stack_by_shape
from modular_ppo.ppo.sharding import data_mesh
from modular_ppo.ppo.state import (
    BodyGroup,
    GroupState,
    TrainingState,
    make_optimizer,
    state_shardings,
)


def check_static_arguments(env: ModularEnvProtocol, graphdef: nnx.GraphDef) -> None:
    """Raise TypeError, saying what to change, unless env and graphdef can be static jit
    arguments (hashable)."""
    for what, value, fix in (
        ("env", env, "let the env class hash by identity (do not define __eq__ without "
         "__hash__, or use @dataclass(eq=False))"),
        ("network graphdef", graphdef, "store static network attributes as tuples or "
         "frozen dataclasses, not dicts or lists"),
    ):
        try:
            hash(value)
        except TypeError as error:
            raise TypeError(
                f"the {what} ({type(value).__name__}) is not hashable ({error}), but the "
                f"training step is compiled with it as a static argument: {fix}."
            ) from None


@functools.partial(jax.jit, static_argnums=(0, 1))
def train_step(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState
) -> tuple[TrainingState, Metrics]:
    """`config.iterations_per_call` PPO iterations (a lax.scan), reduced to one metrics
    record by `combine_iterations`, plus the counter "iteration".

    Jitted with the groups and config static (hashable; compiled once per distinct pair,
    shared by every caller). Metrics are named as `ppo/metrics.py` lists; with several
    bodies each body's metrics carry its name (`for_body`), and the shared ones ("grad_norm",
    "losses/total" (the weighted sum), "episode/count" (all bodies), the run's non-finite
    flags) do not.
    """
    state, per_iteration = jax.lax.scan(
        lambda state, _: ppo_iteration(groups, config, state), state,
        length=config.iterations_per_call,
    )
    return state, combined_metrics(groups, state, per_iteration)


def combined_metrics(
    groups: tuple[BodyGroup, ...], state: TrainingState, per_iteration: tuple
) -> Metrics:
    """The metrics record of a call: `ppo_iteration`'s outputs stacked over the call's
    iterations, reduced by `combine_iterations`, each body's episode means, and the
    counter "iteration" of `state`."""
    bodies = [group.name for group in groups]
    averaged, body_episodes, module_flags, flags = per_iteration
    metrics = combine_iterations(
        averaged, {"count": sum(e["count"] for e in body_episodes.values())}, module_flags, flags
    )
    for name, sums in body_episodes.items():
        metrics.update(for_body(episode_means(sums), name, bodies))
    return {**metrics, "iteration": state.iteration}


def weighted_loss(
    params: nnx.State,
    groups: tuple[BodyGroup, ...],
    rests: dict[str, nnx.State],
    minibatches: dict[str, Minibatch],
    config: PPOConfig,
) -> tuple[Float[Array, ""], dict[str, LossTerms]]:
    """Sum over bodies of loss_weight x the body's PPO loss on its own minibatch (a mean
    over that body's samples, so a body's share of the gradient is its weight, whatever
    its number of environments or its episode lengths). One body: its PPO loss."""
    total, terms = jnp.zeros(()), {}
    for group in groups:
        loss, terms[group.name] = ppo_loss(
            params, rests[group.name], group.graphdef, minibatches[group.name], config,
        )
        total = total + group.loss_weight * loss
    return total, terms


class Collected(NamedTuple):
    """One iteration's rollouts, per body (dicts keyed by body name)."""

    rests: dict[str, nnx.State]
    """The network's non-parameter state (normalizer statistics) after the rollout."""
    env_states: dict[str, object]
    recurrents: dict[str, object]
    rollouts: dict[str, Rollout]
    batches: dict[str, Minibatch]
    advantages: dict[str, dict[str, Float[Array, "time env"]]]


def ppo_iteration(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState
) -> tuple[TrainingState, tuple[Metrics, dict[str, Metrics], Metrics, Metrics]]:
    """Roll out every body, compute its per-module GAE, run n_epochs x n_minibatches
    updates (each minibatch holds 1 / n_minibatches of every body's environments), then
    update each body's normalizer statistics from its own rollout's observations."""
    return learn(groups, config, state, collect_bodies(groups, config, state))


def learn(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState,
    collected: Collected,
) -> tuple[TrainingState, tuple[Metrics, dict[str, Metrics], Metrics, Metrics]]:
    """The part of `ppo_iteration` after the rollouts: updates from `collected`, the new
    training state and the iteration's outputs."""
    key, shuffle_key = jax.random.split(state.key)
    (params, opt_state), (terms, grad_norms, grads_nonfinite) = update_networks(
        groups, config, collected, state.params, state.opt_state, shuffle_key
    )
    group_states, averaged, module_failed, flags = finish_bodies(
        groups, collected, params, terms, grads_nonfinite
    )
    flags["nonfinite/parameters"] |= nonfinite(params)
    state = TrainingState(
        params=params,
        opt_state=opt_state,
        groups=group_states,
        key=key,
        steps=state.steps.add(config.steps_per_iteration),
        iteration=state.iteration + 1,
    )
    if config.data_parallel:
        state = jax.lax.with_sharding_constraint(state, state_shardings(state, groups, config))
    episodes = {name: rollout.episode_sums for name, rollout in collected.rollouts.items()}
    return state, ({"grad_norm": grad_norms, **averaged}, episodes,
                   first_failure(module_failed), flags)


def collect_bodies(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState
) -> Collected:
    """Each body's rollout of `config.rollout_length` steps from its state in `state`, and
    its training batch and per-module GAE advantages."""
    collected = Collected({}, {}, {}, {}, {}, {})
    for group in groups:
        own = state.groups[group.name]
        keep_collected(collected, group.name, own.recurrent, config, *collect_rollout(
            group.env, group.graphdef, state.network_state(group.name), own.env_state,
            own.recurrent, config.rollout_length))
    return collected


def keep_collected(
    collected: Collected, name: str, recurrent_before: object, config: PPOConfig,
    network_state: nnx.State, env_state: object, recurrent: object, rollout: Rollout,
) -> None:
    """Enter body `name`'s rollout (and what `collect_rollout` returns with it) into
    `collected`, with its training batch and per-module GAE advantages; `recurrent_before`:
    the recurrent state the rollout started from."""
    _, collected.rests[name] = nnx.split_state(network_state, nnx.Param, ...)
    collected.env_states[name], collected.recurrents[name] = env_state, recurrent
    collected.rollouts[name] = rollout
    collected.batches[name], collected.advantages[name] = make_batch(
        recurrent_before, rollout, config)


def update_networks(
    groups: tuple[BodyGroup, ...],
    config: PPOConfig,
    collected: Collected,
    params: nnx.State,
    opt_state: optax.OptState,
    shuffle_key: jax.Array,
) -> tuple[tuple[nnx.State, optax.OptState],
           tuple[dict[str, LossTerms], Float[Array, "epochs minibatches"],
                 Bool[Array, "epochs minibatches"]]]:
    """n_epochs passes of n_minibatches optimizer steps on `weighted_loss`, each epoch's
    environments shuffled with a key split from `shuffle_key`: the new (params,
    opt_state), and per update each body's loss terms, the gradient norm and whether a
    gradient was non-finite."""
    optimizer = make_optimizer(config)

    def update_minibatch(carry, minibatches):
        params, opt_state = carry
        grads, terms = jax.grad(weighted_loss, has_aux=True)(
            params, groups, collected.rests, minibatches, config
        )
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        stacked = stack_by_shape(grads)
        return (params, opt_state), (terms, optax.tree.norm(stacked), nonfinite(stacked))

    def update_epoch(carry, epoch_key):
        minibatches = {
            group.name: split_environments(
                collected.batches[group.name], jax.random.permutation(order_key, group.body_envs),
                config.n_minibatches,
            )
            for group, order_key in zip(groups, jax.random.split(epoch_key, len(groups)))
        }
        if config.data_parallel:
            minibatches = jax.lax.with_sharding_constraint(minibatches, {
                name: minibatch_shardings(own, data_mesh()) for name, own in minibatches.items()
            })
        return jax.lax.scan(update_minibatch, carry, minibatches)

    return jax.lax.scan(update_epoch, (params, opt_state),
                        jax.random.split(shuffle_key, config.n_epochs))


def finish_bodies(
    groups: tuple[BodyGroup, ...],
    collected: Collected,
    params: nnx.State,
    terms: dict[str, LossTerms],
    grads_nonfinite: Bool[Array, "epochs minibatches"],
) -> tuple[dict[str, GroupState], Metrics, dict[str, Bool[Array, "order"]], Metrics]:
    """Per body: its normalizer statistics updated from its rollout's observations, its new
    GroupState, its update metrics and failure flags. Returns the group states, the
    metrics ("losses/total": the loss-weighted sum, then each body's), the per-module
    failure flags and the run's flags (raised if any body raised them)."""
    bodies = [group.name for group in groups]
    averaged: Metrics = {"losses/total": jnp.zeros(())}
    module_failed, body_flags, group_states = {}, [], {}
    for group in groups:
        name, rollout = group.name, collected.rollouts[group.name]
        network = nnx.merge(group.graphdef, params, collected.rests[name])
        network.update_statistics(rollout.obs)
        _, _, rest = nnx.split(network, nnx.Param, ...)
        group_states[name] = GroupState(rest, collected.env_states[name],
                                        collected.recurrents[name])
        averaged["losses/total"] += group.loss_weight * jnp.mean(terms[name].total)
        averaged.update(for_body(
            update_metrics(terms[name], rollout, collected.batches[name],
                           collected.advantages[name]),
            name, bodies,
        ))
        failed, flags = failure_flags(terms[name], grads_nonfinite, rollout, rest)
        module_failed.update(for_body(failed, name, bodies))
        body_flags.append(flags)
    flags = {
        name: functools.reduce(jnp.logical_or, [flags[name] for flags in body_flags])
        for name in body_flags[0]
    }
    return group_states, averaged, module_failed, flags


def update_metrics(
    terms: LossTerms,
    rollout: Rollout,
    batch: Minibatch,
    advantages: dict[str, Float[Array, "time env"]],
) -> Metrics:
    return {
        **per_key("losses/actor", terms.actor),
        **per_key("losses/critic", terms.critic),
        **per_key("losses/clipping_fraction", terms.clipping_fraction),
        "losses/regularization": terms.regularization,
        **per_key("critic/explained_variance",
                  jax.tree.map(explained_variance, rollout.values, batch.value_targets)),
        **per_key("advantages/mean", jax.tree.map(jnp.mean, advantages)),
        **per_key("advantages/std", jax.tree.map(jnp.std, advantages)),
    }


def failure_flags(
    terms: LossTerms,
    grads_nonfinite: Bool[Array, "epochs minibatches"],
    rollout: Rollout,
    network_state: nnx.State,
) -> tuple[dict[str, Bool[Array, "order"]], Metrics]:
    """Per-module failure flags in the order things happened (the rollout's actions, then
    each update; reduce them with `first_failure`), and overall flags."""
    updates = grads_nonfinite.size

    def in_rollout(failed):  # [] -> [1 + updates]
        return jnp.concatenate([failed[None], jnp.zeros(updates, bool)])

    def in_updates(losses):  # [epochs, minibatches] -> [1 + updates]
        return jnp.concatenate([jnp.zeros(1, bool), ~jnp.isfinite(losses.reshape(-1))])

    module_failed = {
        **per_key("nonfinite/actions", jax.tree.map(in_rollout, rollout.nonfinite_actions)),
        **per_key("nonfinite/actor", jax.tree.map(in_updates, terms.actor)),
        **per_key("nonfinite/critic", jax.tree.map(in_updates, terms.critic)),
    }
    flags = {
        "nonfinite/regularization": nonfinite(terms.regularization),
        "nonfinite/gradients": jnp.any(grads_nonfinite),
        "nonfinite/parameters": nonfinite(network_state),
        "nonfinite/rollout": nonfinite((rollout.obs, rollout.rewards)),
    }
    return module_failed, flags
