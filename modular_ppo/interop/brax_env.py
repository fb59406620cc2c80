"""A body as a Brax `Env` (`brax.envs.base.Env`): one agent acting for every module, so
Brax's own trainers (`brax.training.agents.ppo.train`, SAC) and the tools built on that
interface train a body of this project unchanged.

    env = BraxModularEnv("ant-modular")
    state = env.reset(jax.random.PRNGKey(0))
    state = env.step(state, jnp.zeros(env.action_size))

    from brax.training.agents.ppo import train as ppo
    install_jax_compatibility()                # Brax 0.14 under JAX >= 0.10
    make_policy, params, metrics = ppo.train(environment=env, episode_length=1000, ...)

Registering it under a name, for code that builds envs through Brax's registry:

    import functools
    from brax import envs
    envs.register_environment("ant-modular", functools.partial(BraxModularEnv, "ant-modular"))
    env = envs.get_environment("ant-modular")            # or envs.create(..., episode_length=)

action: Float[action_size] in [-1, 1], the actuated modules' actions concatenated in
module order (`agents`, as `GymnasiumModularEnv` orders them), each module's in its
actuators' MuJoCo order; for ant-modular: front_left (hip_1, ankle_1), front_right
(hip_2, ankle_2), back_left (hip_3, ankle_3), back_right (hip_4, ankle_4).
obs: the agents' observations concatenated in the same order (`slices` says where each
agent's lies). reward: the team reward (the modules' rewards summed: the single-agent task
reward). metrics: the env's per-step metrics ("forward_velocity", "reward/<term>",
"invalid_action").

Episodes are Brax's to end: `done` is 1.0 only when the body left the task's healthy
ranges (termination), never at the time limit, so Brax's `EpisodeWrapper` truncates at
the `episode_length` given to Brax's trainer and marks it `info["truncation"]`; give it
the env's own `config.episode_length` (default 1000) so that both count the same episode.
The env does not restart itself (`episodic`); Brax's `AutoResetWrapper` restores the
first state. `pipeline_state` is the body env's whole `State` (simulator data, per-module
observations and rewards, its episode bookkeeping), so that restore brings all of it back.
"""

from __future__ import annotations

import brax.envs.base as brax_base
import jax
import jax.numpy as jnp
from jaxtyping import Array, Float

from modular_ppo.body import BodyGraph, Partition
from modular_ppo.env import Backend, EnvConfig, State, default_backend, make_env
from modular_ppo.interop.bodies import resolve_body
from modular_ppo.interop.episodes import episodic
from modular_ppo.interop.errors import AgentActionError
from modular_ppo.interop.team import Team, flat_slices


class BraxModularEnv(brax_base.Env):
    """`body` as a Brax environment (see module docstring).

    body: a bundled body name, a generated one ("centipede-6"), an MJCF path, or a
        BodyGraph.
    partition: a partition of the body (e.g. "2x4" for the ant).
    config: the env's settings (observations, episode length, task overrides).
    backend: "mjx" (default), "cpu" (MuJoCo's C simulator through a host call), "warp" or
        "auto" (see `make_env`).
    """

    def __init__(self, body: str | BodyGraph, partition: Partition | None = None,
                 config: EnvConfig = EnvConfig(), backend: Backend = "mjx"):
        self.body = resolve_body(body, partition)
        """The morphology and its partition into modules."""
        self._backend = default_backend(self.body) if backend == "auto" else backend
        self.env = episodic(make_env(self.body, config, self._backend))
        """The ModularEnv stepped, without auto-reset."""
        self.team = Team.of(self.env)
        """Agents (actuated modules) in the order of the concatenations."""
        self.agents = self.team.agents
        obs_sizes = {a: self.env.obs_sizes[m] for a, m in self.team.module_of.items()}
        self.slices = {"observation": flat_slices(obs_sizes),
                       "action": flat_slices(self.team.action_sizes)}
        """"observation" / "action" -> agent -> its slice of the flat vector."""
        self._observation_size = sum(obs_sizes.values())
        self._action_size = sum(self.team.action_sizes.values())

    @property
    def observation_size(self) -> int:
        return self._observation_size

    @property
    def action_size(self) -> int:
        return self._action_size

    @property
    def backend(self) -> str:
        """The body env's simulator: "mjx", "cpu" or "warp"."""
        return self._backend

    def reset(self, rng: jax.Array) -> brax_base.State:
        """The first state of an episode, reset noise drawn from `rng` (a key, raw or typed)."""
        inner = self.env.reset(rng)
        return brax_base.State(
            pipeline_state=inner, obs=self._flat_obs(inner), reward=jnp.zeros(()),
            done=jnp.zeros(()), metrics=dict(inner.metrics), info={},
        )

    def step(self, state: brax_base.State, action: Float[Array, "act"]) -> brax_base.State:
        """One control step of one env under `action` (Float[action_size]; another shape
        raises AgentActionError at trace time)."""
        if jnp.shape(action) != (self._action_size,):
            order = ", ".join(f"{a} ({s.stop - s.start})" for a, s in self.slices["action"].items())
            raise AgentActionError(
                f"action has shape {jnp.shape(action)}; give shape ({self._action_size},): the "
                f"agents' actions concatenated in order {order}, each in [-1, 1]."
            )
        actions = {a: action[s] for a, s in self.slices["action"].items()}
        inner = self.env.step(state.pipeline_state, self.team.module_actions(actions))
        return state.replace(
            pipeline_state=inner,
            obs=self._flat_obs(inner),
            reward=sum(inner.reward.values(), jnp.zeros(())),
            done=inner.done * (1.0 - inner.info["truncation"]),
            metrics={**state.metrics, **inner.metrics},  # keeps what wrappers added
        )

    def _flat_obs(self, inner: State) -> Float[Array, "obs"]:
        return jnp.concatenate([inner.obs[m] for m in self.team.module_of.values()])


def install_jax_compatibility() -> None:
    """Brax 0.14's trainers call `jax.device_put_replicated`, which JAX 0.10 removed: give
    JAX back that name with its meaning (a leading axis of one copy per device, as `pmap`
    takes it). Does nothing where JAX still has it."""
    if hasattr(jax, "device_put_replicated"):
        return

    def device_put_replicated(tree, devices):
        return jax.tree.map(lambda x: jnp.stack([jnp.asarray(x)] * len(devices)), tree)

    jax.device_put_replicated = device_put_replicated
