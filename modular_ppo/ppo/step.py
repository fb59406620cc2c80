"""The jitted training step: K PPO iterations, each a rollout then all minibatch updates."""

from __future__ import annotations

import functools

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
    explained_variance,
    first_failure,
    nonfinite,
    per_key,
)
from modular_ppo.ppo.rollout import Rollout, collect_rollout
from modular_ppo.ppo.sharding import data_mesh
from modular_ppo.ppo.state import TrainingState, make_optimizer, state_shardings


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


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def train_step(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    config: PPOConfig,
    state: TrainingState,
) -> tuple[TrainingState, Metrics]:
    """`config.iterations_per_call` PPO iterations (a lax.scan), reduced to one metrics
    record by `combine_iterations`, plus the counters "steps" and "iteration".

    Jitted with env, graphdef and config static (hashable; compiled once per distinct
    triple, shared by every caller).
    """
    iterate = functools.partial(ppo_iteration, env, graphdef, config)
    state, per_iteration = jax.lax.scan(
        lambda state, _: iterate(state), state, length=config.iterations_per_call
    )
    metrics = combine_iterations(*per_iteration)
    return state, {**metrics, "steps": state.steps, "iteration": state.iteration}


def ppo_iteration(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    config: PPOConfig,
    state: TrainingState,
) -> tuple[TrainingState, tuple[Metrics, Metrics, Metrics, Metrics]]:
    """Roll out, compute per-module GAE, run n_epochs x n_minibatches updates, then update
    the network's normaliser statistics from the rollout's observations."""
    key, shuffle_key = jax.random.split(state.key)
    network_state, env_state, recurrent, rollout = collect_rollout(
        env, graphdef, state.network, state.env_state, state.recurrent, config.rollout_length
    )
    batch, advantages = make_batch(state.recurrent, rollout, config)
    params, rest = nnx.split_state(network_state, nnx.Param, ...)
    optimizer = make_optimizer(config)

    def update_minibatch(carry, minibatch):
        params, opt_state = carry
        grads, terms = jax.grad(ppo_loss, has_aux=True)(params, rest, graphdef, minibatch,
                                                         config)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return (params, opt_state), (terms, optax.tree.norm(grads), nonfinite(grads))

    def update_epoch(carry, epoch_key):
        order = jax.random.permutation(epoch_key, config.n_envs)
        minibatches = split_environments(batch, order, config.n_minibatches)
        if config.data_parallel:
            minibatches = jax.lax.with_sharding_constraint(
                minibatches, minibatch_shardings(minibatches, data_mesh())
            )
        return jax.lax.scan(update_minibatch, carry, minibatches)

    (params, opt_state), (terms, grad_norms, grads_nonfinite) = jax.lax.scan(
        update_epoch, (params, state.opt_state), jax.random.split(shuffle_key, config.n_epochs)
    )

    network = nnx.merge(graphdef, params, rest)
    network.update_statistics(rollout.obs)
    network_state = nnx.state(network)

    averaged = update_metrics(terms, grad_norms, rollout, batch, advantages)
    module_failed, flags = failure_flags(terms, grads_nonfinite, rollout, network_state)
    state = TrainingState(
        network=network_state,
        opt_state=opt_state,
        env_state=env_state,
        recurrent=recurrent,
        key=key,
        steps=state.steps + config.steps_per_iteration,
        iteration=state.iteration + 1,
    )
    if config.data_parallel:
        state = jax.lax.with_sharding_constraint(state, state_shardings(state, config))
    return state, (averaged, rollout.episode_sums, first_failure(module_failed), flags)


def update_metrics(
    terms: LossTerms,
    grad_norms: Float[Array, "epochs minibatches"],
    rollout: Rollout,
    batch: Minibatch,
    advantages: dict[str, Float[Array, "time env"]],
) -> Metrics:
    return {
        **per_key("losses/actor", terms.actor),
        **per_key("losses/critic", terms.critic),
        **per_key("losses/clipping_fraction", terms.clipping_fraction),
        "losses/regularization": terms.regularization,
        "losses/total": terms.total,
        "grad_norm": grad_norms,
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
