"""The jitted multi-body training step: every body's rollout, then updates of the shared
parameters on the weighted sum of the bodies' PPO losses."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import optax
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.ppo.batch import Minibatch, make_batch, split_environments
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.loss import LossTerms, ppo_loss
from modular_ppo.ppo.metrics import (
    Metrics,
    combine_iterations,
    episode_means,
    first_failure,
    nonfinite,
)
from modular_ppo.ppo.multi_body_metrics import for_body
from modular_ppo.ppo.multi_body_state import BodyGroup, GroupState, MultiBodyState
from modular_ppo.ppo.rollout import collect_rollout
from modular_ppo.ppo.state import make_optimizer
from modular_ppo.ppo.step import failure_flags, update_metrics


@functools.partial(jax.jit, static_argnums=(0, 1))
def multi_body_train_step(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: MultiBodyState
) -> tuple[MultiBodyState, Metrics]:
    """`config.iterations_per_call` multi-body iterations in one compiled call.

    Metrics: each body's single-body metrics under its name (see `multi_body_metrics`),
    e.g. "losses/critic/<body>/<module>", "episode/team_return/<body>"; shared:
    "grad_norm", "losses/total" (the weighted sum), "episode/count" (all bodies), the
    run's non-finite flags, "steps", "iteration".
    """
    iterate = functools.partial(multi_body_iteration, groups, config)
    state, per_iteration = jax.lax.scan(
        lambda state, _: iterate(state), state, length=config.iterations_per_call
    )
    averaged, body_episodes, module_flags, flags = per_iteration
    metrics = combine_iterations(
        averaged, {"count": sum(e["count"] for e in body_episodes.values())}, module_flags, flags
    )
    for name, sums in body_episodes.items():
        metrics.update(for_body(episode_means(sums), name))
    return state, {**metrics, "steps": state.steps, "iteration": state.iteration}


def weighted_loss(
    params: nnx.State,
    groups: tuple[BodyGroup, ...],
    rests: dict[str, nnx.State],
    minibatches: dict[str, Minibatch],
    config: PPOConfig,
) -> tuple[Float[Array, ""], dict[str, LossTerms]]:
    """Sum over bodies of loss_weight x the body's PPO loss on its own minibatch (a mean
    over that body's samples, so a body's share of the gradient is its weight, whatever
    its number of environments or its episode lengths)."""
    total, terms = jnp.zeros(()), {}
    for group in groups:
        loss, terms[group.name] = ppo_loss(
            params, rests[group.name], group.graphdef, minibatches[group.name],
            group.ppo_config(config),
        )
        total = total + group.loss_weight * loss
    return total, terms


def multi_body_iteration(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: MultiBodyState
) -> tuple[MultiBodyState, tuple[Metrics, dict[str, Metrics], Metrics, Metrics]]:
    """Roll out every body, compute its per-module GAE, run n_epochs x n_minibatches
    updates (each minibatch holds 1 / n_minibatches of every body's environments),
    then update each body's normaliser statistics from its own rollout."""
    key, shuffle_key = jax.random.split(state.key)
    rests, env_states, recurrents, rollouts, batches, advantages = {}, {}, {}, {}, {}, {}
    for group in groups:
        own = state.groups[group.name]
        network_state, env_states[group.name], recurrents[group.name], rollout = (
            collect_rollout(group.env, group.graphdef, state.network_state(group.name),
                            own.env_state, own.recurrent, config.rollout_length)
        )
        _, rests[group.name] = nnx.split_state(network_state, nnx.Param, ...)
        rollouts[group.name] = rollout
        batches[group.name], advantages[group.name] = make_batch(
            own.recurrent, rollout, group.ppo_config(config)
        )
    optimizer = make_optimizer(config)

    def update_minibatch(carry, minibatches):
        params, opt_state = carry
        grads, terms = jax.grad(weighted_loss, has_aux=True)(
            params, groups, rests, minibatches, config
        )
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return (params, opt_state), (terms, optax.tree.norm(grads), nonfinite(grads))

    def update_epoch(carry, epoch_key):
        minibatches = {
            group.name: split_environments(
                batches[group.name], jax.random.permutation(order_key, group.n_envs),
                config.n_minibatches,
            )
            for group, order_key in zip(groups, jax.random.split(epoch_key, len(groups)))
        }
        return jax.lax.scan(update_minibatch, carry, minibatches)

    (params, opt_state), (terms, grad_norms, grads_nonfinite) = jax.lax.scan(
        update_epoch, (state.params, state.opt_state),
        jax.random.split(shuffle_key, config.n_epochs),
    )

    averaged = {"grad_norm": grad_norms, "losses/total": jnp.zeros(())}
    module_failed, body_flags, group_states = {}, [], {}
    for group in groups:
        network = nnx.merge(group.graphdef, params, rests[group.name])
        network.update_statistics(rollouts[group.name].obs)
        _, _, rest = nnx.split(network, nnx.Param, ...)
        group_states[group.name] = GroupState(rest, env_states[group.name],
                                              recurrents[group.name])
        body_terms = terms[group.name]
        metrics = update_metrics(body_terms, grad_norms, rollouts[group.name],
                                 batches[group.name], advantages[group.name])
        del metrics["grad_norm"]  # one gradient for all bodies: logged once
        averaged["losses/total"] += group.loss_weight * jnp.mean(body_terms.total)
        averaged.update(for_body(metrics, group.name))
        failed, flags = failure_flags(body_terms, grads_nonfinite, rollouts[group.name], rest)
        module_failed.update(for_body(failed, group.name))
        body_flags.append(flags)
    flags = {  # the run's flags: raised if any body raised them
        name: functools.reduce(jnp.logical_or, [flags[name] for flags in body_flags])
        for name in body_flags[0]
    }
    flags["nonfinite/parameters"] |= nonfinite(params)
    state = MultiBodyState(
        params=params,
        opt_state=opt_state,
        groups=group_states,
        key=key,
        steps=state.steps + config.steps_per_iteration,
        iteration=state.iteration + 1,
    )
    episodes = {name: rollout.episode_sums for name, rollout in rollouts.items()}
    return state, (averaged, episodes, first_failure(module_failed), flags)
