"""Collecting a rollout with a stateful network, and replaying it under new parameters."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx, struct
from jaxtyping import Array, Bool, Float

from modular_ppo.env.types import ModularEnvProtocol, State
from modular_ppo.networks.contract import NetState, StepOutput
from modular_ppo.ppo.metrics import nonfinite


@struct.dataclass
class Rollout:
    """T steps of N environments, time-major: every leaf is [T, N, ...] unless noted."""

    obs: dict[str, Float[Array, "time env _obs"]]
    """Observations the network acted on."""
    extras: dict[str, Any]
    """The network's extras, to re-evaluate the same actions in the loss."""
    loglikelihoods: dict[str, Float[Array, "time env"]]
    """Actuated module -> log-likelihood of the action taken, under the acting parameters."""
    values: dict[str, Float[Array, "time env"]]
    """Module -> value estimate of the state acted in."""
    last_values: dict[str, Float[Array, "env"]]
    """Module -> value estimate of the state after the last step, [N]."""
    rewards: dict[str, Float[Array, "time env"]]
    done: Float[Array, "time env"]
    truncated: Float[Array, "time env"]
    episode_sums: dict[str, Float[Array, ""]]
    """Sums, over episodes finished in the rollout, of the env's info["last_episode"]
    entries, plus "count": the number of those episodes. Scalars."""
    nonfinite_actions: dict[str, Bool[Array, ""]]
    """Actuated module -> whether the network sampled a non-finite action in the rollout."""


@struct.dataclass
class Replay:
    """The network's outputs recomputed along a stored rollout."""

    loglikelihoods: dict[str, Float[Array, "time env"]]
    values: dict[str, Float[Array, "time env"]]
    regularization_loss: Float[Array, ""]
    """The network's own loss term, averaged over time."""


def collect_rollout(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    env_state: State,
    recurrent: NetState,
    length: int,
) -> tuple[nnx.State, State, NetState, Rollout]:
    """Step N envs (a batched `env_state`) `length` times, sampling actions from the network.

    The recurrent state is reset (`network.reset_state`) for the environments whose step
    ended an episode. Returns the network state (its RNG counters advanced), env states and
    recurrent states after the rollout, and the rollout.
    """
    def step(carry, _):
        return rollout_step(env, graphdef, *carry)

    (network_state, env_state, recurrent), steps = jax.lax.scan(
        step, (network_state, env_state, recurrent), length=length
    )
    rollout = rollout_of(steps, bootstrap_values(graphdef, network_state, recurrent, env_state))
    return network_state, env_state, recurrent, rollout


def rollout_step(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_state: nnx.State,
    env_state: State, recurrent: NetState,
) -> tuple[tuple[nnx.State, State, NetState], dict[str, Any]]:
    """One step of `collect_rollout`: the network acts on the N envs' observations and
    every env steps (vmap). Returns the network state (its RNG counters advanced), env
    and recurrent states after the step, and the step's record (`after_step`)."""
    network = nnx.merge(graphdef, network_state)
    out = network(recurrent, env_state.obs)
    next_env_state = jax.vmap(env.step)(env_state, out.output.actions)
    next_recurrent, record = after_step(network, out, env_state, next_env_state)
    return (nnx.state(network), next_env_state, next_recurrent), record


def after_step(
    network: nnx.Module, out: StepOutput, env_state: State, next_env_state: State
) -> tuple[NetState, dict[str, Any]]:
    """The recurrent state after one step of the rollout (reset where the step ended an
    episode) and the step's record: the rollout's fields for one time step, with
    "episode_sums" and "nonfinite_actions" not yet reduced over time."""
    done = next_env_state.done
    next_recurrent = network.reset_state(out.next_state, done > 0)
    finished = jax.tree.map(
        lambda value: jnp.sum(done * value), next_env_state.info["last_episode"]
    )
    transition = dict(
        obs=env_state.obs,
        extras=out.output.extras,
        loglikelihoods=out.output.loglikelihoods,
        values=out.output.value_estimates,
        rewards=next_env_state.reward,
        done=done,
        truncated=next_env_state.info["truncation"],
        episode_sums={**finished, "count": jnp.sum(done)},
        nonfinite_actions=jax.tree.map(nonfinite, out.output.actions),
    )
    return next_recurrent, transition


def bootstrap_values(
    graphdef: nnx.GraphDef, network_state: nnx.State, recurrent: NetState, env_state: State
) -> dict[str, Float[Array, "env"]]:
    """Module -> value estimate of the states after the rollout. Only the values of this
    call are kept; whatever it changes in the network state is dropped, so bootstrapping
    does not shift the network's random streams."""
    network = nnx.merge(graphdef, network_state)
    return network(recurrent, env_state.obs, deterministic=True).output.value_estimates


def rollout_of(steps: dict[str, Any], last_values: dict[str, Float[Array, "env"]]) -> Rollout:
    """The Rollout of `after_step`'s records stacked over time ([T, N, ...])."""
    return Rollout(
        **{
            **steps,
            "episode_sums": jax.tree.map(jnp.sum, steps["episode_sums"]),
            "nonfinite_actions": jax.tree.map(jnp.any, steps["nonfinite_actions"]),
        },
        last_values=last_values,
    )


def joined_rollouts(first: Rollout, second: Rollout) -> Rollout:
    """Two rollouts of the same steps on different environments as one rollout of both
    (the second's environments after the first's): episode sums added, non-finite flags
    or-ed."""
    return Rollout(
        **{field: jax.tree.map(lambda a, b: jnp.concatenate([a, b], axis=1),
                               getattr(first, field), getattr(second, field))
           for field in ("obs", "extras", "loglikelihoods", "values", "rewards", "done",
                         "truncated")},
        last_values=jax.tree.map(lambda a, b: jnp.concatenate([a, b]),
                                 first.last_values, second.last_values),
        episode_sums=jax.tree.map(jnp.add, first.episode_sums, second.episode_sums),
        nonfinite_actions=jax.tree.map(jnp.logical_or, first.nonfinite_actions,
                                       second.nonfinite_actions),
    )


def replay(
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    recurrent: NetState,
    obs: dict[str, Float[Array, "time env _obs"]],
    extras: dict[str, Any],
    done: Float[Array, "time env"],
) -> Replay:
    """Re-evaluate a rollout's actions under `network_state`, from the recurrent state the
    rollout started with, resetting it where episodes ended exactly as the rollout did.

    Without recurrent state the time steps are independent: one call on the [time x env]
    samples folded into one batch gives the same outputs as `replay_through_time`, as a
    few large matrix products instead of `time` small ones, forward and backward.
    """
    if jax.tree.leaves(recurrent):
        return replay_through_time(graphdef, network_state, recurrent, obs, extras, done)
    steps, envs = done.shape

    def fold(x):
        return x.reshape(steps * envs, *x.shape[2:])

    def unfold(x):
        return x.reshape(steps, envs, *x.shape[1:])

    out = nnx.merge(graphdef, network_state)(
        recurrent, jax.tree.map(fold, obs), jax.tree.map(fold, extras)
    )
    return Replay(jax.tree.map(unfold, out.output.loglikelihoods),
                  jax.tree.map(unfold, out.output.value_estimates), out.regularization_loss)


def replay_through_time(graphdef: nnx.GraphDef, network_state: nnx.State, recurrent: NetState,
                        obs: dict[str, Float[Array, "time env _obs"]], extras: dict[str, Any],
                        done: Float[Array, "time env"]) -> Replay:
    """`replay` as a `lax.scan` over time steps, carrying the recurrent state."""
    params, rest = nnx.split_state(network_state, nnx.Param, ...)

    # The parameters stay outside the scan carry so reverse-mode differentiation does not
    # store a copy of them per time step.
    def step(carry, inputs):
        recurrent, rest = carry
        step_obs, step_extras, step_done = inputs
        network = nnx.merge(graphdef, params, rest)
        out = network(recurrent, step_obs, step_extras)
        next_recurrent = network.reset_state(out.next_state, step_done > 0)
        _, _, rest = nnx.split(network, nnx.Param, ...)
        outputs = (out.output.loglikelihoods, out.output.value_estimates,
                   out.regularization_loss)
        return (next_recurrent, rest), outputs

    _, (loglikelihoods, values, regularization) = jax.lax.scan(
        step, (recurrent, rest), (obs, extras, done)
    )
    return Replay(loglikelihoods, values, jnp.mean(regularization))
