"""Evaluation: a jitted rollout of one full episode per environment, from fresh resets."""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import PRNGKeyArray

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.ppo.config import EvalConfig
from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host
from modular_ppo.ppo.step import check_static_arguments

Evaluator = Callable[[nnx.State, PRNGKeyArray], Metrics]


def make_evaluator(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, config: EvalConfig, seeded: bool = False
) -> Evaluator:
    """A jitted `(network_state, key) -> metrics`, compiled at its first call.

    Each of `config.n_envs` environments runs one episode of up to `episode_length` steps
    (steps after its first done are not counted). Metrics, averaged over the episodes:
    "episode/team_return" (summed over modules), "episode/return/<module>",
    "episode/length", and "episode/forward_velocity" (mean over the episode's steps) when
    the env reports a "forward_velocity" metric. The network state is not changed.

    seeded: network states and keys carry a leading seed axis (`ppo.seeds`), and so does
    each metric: every seed's own evaluation, all in one program (the seeds' episodes step
    together: on the C simulator's env, one host call a step for all of them).
    """
    check_static_arguments(env, graphdef)
    return functools.partial(run_episodes_seeds if seeded else run_episodes, env, graphdef,
                             config)


def compile_evaluator(evaluator: Evaluator, network_state: nnx.State, key: PRNGKeyArray) -> None:
    """Compile `evaluator` (from `make_evaluator`) for arguments shaped and placed like
    these, without running it: its first call then finds the program in JAX's in-memory
    cache. XLA compiles outside the GIL, so a thread can do this while another compiles."""
    evaluator.func.lower(*evaluator.args, network_state, key).compile()


def evaluate(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    config: EvalConfig,
    key: PRNGKeyArray,
) -> HostMetrics:
    """`make_evaluator(env, graphdef, config)(network_state, key)` as Python floats."""
    return metrics_to_host(make_evaluator(env, graphdef, config)(network_state, key))


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def run_episodes(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    config: EvalConfig,
    network_state: nnx.State,
    key: PRNGKeyArray,
) -> Metrics:
    length = config.episode_length or env.episode_length
    step_envs = jax.vmap(env.step)
    env_state = jax.vmap(env.reset)(jax.random.split(key, config.n_envs))
    recurrent = nnx.merge(graphdef, network_state).initialize_state(config.n_envs)

    def step(carry, _):
        network_state, env_state, recurrent, running = carry
        network = nnx.merge(graphdef, network_state)
        out = network(recurrent, env_state.obs, deterministic=config.deterministic)
        env_state = step_envs(env_state, out.output.actions)
        recurrent = network.reset_state(out.next_state, env_state.done > 0)
        counted = {
            "rewards": jax.tree.map(lambda r: running * r, env_state.reward),
            "forward_velocity": running
            * env_state.metrics.get("forward_velocity", jnp.zeros(config.n_envs)),
            "length": running,
        }
        running = running * (1.0 - env_state.done)
        return (nnx.state(network), env_state, recurrent, running), counted

    running = jnp.ones(config.n_envs)
    _, counted = jax.lax.scan(
        step, (network_state, env_state, recurrent, running), length=length
    )
    returns = jax.tree.map(lambda r: jnp.sum(r, axis=0), counted["rewards"])
    lengths = jnp.sum(counted["length"], axis=0)
    metrics = {
        "episode/team_return": jnp.mean(sum(returns.values())),
        **{f"episode/return/{name}": jnp.mean(r) for name, r in returns.items()},
        "episode/length": jnp.mean(lengths),
    }
    if "forward_velocity" in env_state.metrics:
        velocity = jnp.sum(counted["forward_velocity"], axis=0) / jnp.maximum(lengths, 1)
        metrics["episode/forward_velocity"] = jnp.mean(velocity)
    return metrics


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def run_episodes_seeds(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    config: EvalConfig,
    network_states: nnx.State,
    keys: PRNGKeyArray,
) -> Metrics:
    """`run_episodes` of each entry along the leading axis of `network_states` and `keys`."""
    return jax.vmap(functools.partial(run_episodes, env, graphdef, config))(network_states, keys)
