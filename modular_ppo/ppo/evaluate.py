"""Evaluation: a jitted rollout of one full episode per environment, from fresh resets."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import PRNGKeyArray, PyTree

from modular_ppo.env.cpu_simulator import CpuPhysics
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.ppo.config import EvalConfig
from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host
from modular_ppo.ppo.step import check_static_arguments


class Evaluator:
    """`make_evaluator`'s jitted `(network_state, key) -> metrics` on `device`.

    device: where the episodes run (the arguments are placed there); None for where the
    arguments are (JAX's default device)."""

    def __init__(self, env: ModularEnvProtocol, graphdef: nnx.GraphDef, config: EvalConfig,
                 seeded: bool = False, device: jax.Device | None = None) -> None:
        check_static_arguments(env, graphdef)
        self.program = run_episodes_seeds if seeded else run_episodes
        self.static = (env, graphdef, config)
        self.device = device

    def __call__(self, network_state: nnx.State, key: PRNGKeyArray) -> Metrics:
        return self.program(*self.static, *self._placed(network_state, key))

    def compile(self, network_state: nnx.State, key: PRNGKeyArray) -> None:
        """Compile for arguments shaped like these, without running: the first call then
        finds the program in JAX's in-memory cache. XLA compiles outside the GIL, so a
        thread can do this while another compiles."""
        self.program.lower(*self.static, *self._placed(network_state, key)).compile()

    def _placed(self, *trees: PyTree) -> tuple[PyTree, ...]:
        return trees if self.device is None else jax.device_put(trees, self.device)


def evaluation_device(env: ModularEnvProtocol) -> jax.Device | None:
    """Where `env`'s evaluation runs fastest: on an accelerator, the host's CPU for an env
    whose physics is MuJoCo's C simulator (`CpuPhysics`, a host call per step), so that
    its 1,000 or so sequential steps cross no device boundary (on one TPU v5e chip a step's
    round trip cost ~5 ms, the C step of 16 envs ~0.1 ms); else None (JAX's default)."""
    if jax.default_backend() == "cpu" or not isinstance(getattr(env, "physics", None),
                                                         CpuPhysics):
        return None
    return jax.devices("cpu")[0]


def make_evaluator(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, config: EvalConfig, seeded: bool = False
) -> Evaluator:
    """A jitted `(network_state, key) -> metrics`, compiled at its first call, on
    `evaluation_device(env)`.

    Each of `config.n_envs` environments runs one episode of up to `episode_length` steps
    (steps after its first done are not counted). Metrics, averaged over the episodes:
    "episode/team_return" (summed over modules), "episode/return/<module>",
    "episode/length", and "episode/forward_velocity" (mean over the episode's steps) when
    the env reports a "forward_velocity" metric. The network state is not changed.

    seeded: network states and keys carry a leading seed axis (`ppo.seeds`), and so does
    each metric: every seed's own evaluation, all in one program (the seeds' episodes step
    together: on the C simulator's env, one host call a step for all of them).
    """
    return Evaluator(env, graphdef, config, seeded, evaluation_device(env))


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
