"""How a policy's episodes end: by the time limit, or by which of the task's healthy ranges
the body left (a fall, a jump, a flip), read from the state that ended each episode."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import PRNGKeyArray

from modular_ppo.env.errors import EnvError
from modular_ppo.env.tasks import unhealthy_causes
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.ppo.config import EvalConfig
from modular_ppo.ppo.metrics import HostMetrics, metrics_to_host
from modular_ppo.ppo.step import check_static_arguments


def episode_ends(
    env: ModularEnvProtocol,
    graphdef: nnx.GraphDef,
    network_state: nnx.State,
    config: EvalConfig,
    key: PRNGKeyArray,
) -> HostMetrics:
    """One episode in each of `config.n_envs` environments, from fresh resets as
    `make_evaluator`'s (the same `key` gives the same episodes), and the fraction of them
    that ended each way:

    - "ended/time_limit": truncated at the env's episode length;
    - "ended/terminated": left the task's healthy ranges;
    - "ended/<cause>", for each of the task's `env.tasks.unhealthy_causes` ("healthy_z
      below", "healthy_z above", "healthy_angle below" / "above", "healthy_state"): the
      terminations where the state after the step was outside that range (one state can
      be outside several, so these may add up to more than "ended/terminated");
    - "ended/still_running": neither within `config.episode_length` steps (when it is
      shorter than the env's).

    Needs an env with `begin_step` / `end_step` and its `physics` (ModularEnv, on any
    backend): the step is the env's own, with its auto-reset left out so that the state
    that ended the episode can be read.
    """
    missing = [name for name in ("begin_step", "end_step", "physics") if not hasattr(env, name)]
    if missing:
        raise EnvError(
            f"episode ends of {type(env).__name__}: it has no {', '.join(missing)}, so the "
            "state that ends an episode cannot be read. Use an env built by "
            "modular_ppo.env.make_env (ModularEnv), or evaluate returns only.")
    check_static_arguments(env, graphdef)
    return metrics_to_host(_episode_ends(env, graphdef, config, network_state, key))


def _no_restart(done, data, qpos, qvel):
    return data


@functools.partial(jax.jit, static_argnums=(0, 1, 2))
def _episode_ends(env, graphdef, config, network_state, key):
    spec = getattr(env.task, "spec", None)
    causes = (unhealthy_causes(env.body, spec) if spec is not None
              and spec.terminate_when_unhealthy else lambda data: {})

    def step_one(state, action):
        request = env.begin_step(state, action)
        data = env.physics.step(state.data, request.ctrl)
        return env.end_step(state, request, data, _no_restart), causes(data)

    step_envs = jax.vmap(step_one)
    env_state = jax.vmap(env.reset)(jax.random.split(key, config.n_envs))
    recurrent = nnx.merge(graphdef, network_state).initialize_state(config.n_envs)
    zeros = jnp.zeros(config.n_envs)
    names = ("time_limit", "terminated",
             *jax.eval_shape(lambda k: causes(env.reset(k).data), key))

    def step(carry, _):
        network_state, env_state, recurrent, running, ended = carry
        network = nnx.merge(graphdef, network_state)
        out = network(recurrent, env_state.obs, deterministic=config.deterministic)
        env_state, outside = step_envs(env_state, out.output.actions)
        recurrent = network.reset_state(out.next_state, env_state.done > 0)
        ends = running * env_state.done
        truncated = env_state.info["truncation"]
        terminated = ends * (1.0 - truncated)
        now = {"time_limit": ends * truncated, "terminated": terminated,
               **{name: terminated * flag for name, flag in outside.items()}}
        ended = {name: ended[name] + now[name] for name in names}
        return (nnx.state(network), env_state, recurrent, running - ends, ended), None

    length = config.episode_length or env.episode_length
    carry = (network_state, env_state, recurrent, jnp.ones(config.n_envs),
             {name: zeros for name in names})
    (_, _, _, running, ended), _ = jax.lax.scan(step, carry, length=length)
    return {**{f"ended/{name}": jnp.mean(value) for name, value in ended.items()},
            "ended/still_running": jnp.mean(running)}
