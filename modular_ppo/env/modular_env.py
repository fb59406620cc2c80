"""ModularEnv: a body as a team of agents on MJX, with module-keyed obs, actions, rewards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jaxtyping import Array, Bool, Float, PRNGKeyArray
from mujoco import mjx

from modular_ppo.body import BodyGraph, TaskSpec
from modular_ppo.env.actions import ActionMap
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.episode import accumulate, close, start_info
from modular_ppo.env.observations import ObsBlock, Observer, observation_reads_contact_forces
from modular_ppo.env.physics import Physics, Simulator
from modular_ppo.env.tasks import Task, Transition
from modular_ppo.env.types import State, StepRequest

Restart = Callable[[Bool[Array, ""], Any, Float[Array, "nq"], Float[Array, "nv"]], Any]
"""(done, data, start qpos, start qvel) -> a fresh start where done, else data."""


class ModularEnv:
    """Implements `ModularEnvProtocol` on MJX. `reset` and `step` are single-env, pure
    functions of their arguments: jit and vmap them.

    body: the morphology and its partition into modules.
    task: reward terms and termination (usually `make_task(body, config)`).
    config: observation, episode-length and reset-noise settings; its task fields are
        read by `make_task`, not here.
    physics: the simulator; default MJX (`Physics`). Another `Simulator` (e.g. MuJoCo's
        C simulator behind a callback) reuses the observations, tasks and episodes here.

    Auto-reset: a step that ends the episode returns a fresh start with new reset noise
    drawn from the env's own key (`info["rng"]`), so every episode starts from its own
    state. The simulator starts only the environments that are done where it can (the
    CPU backend); under MJX's vmap every environment's start is computed and selected.
    """

    def __init__(
        self,
        body: BodyGraph,
        task: Task,
        config: EnvConfig = EnvConfig(),
        physics: Simulator | None = None,
    ):
        self.body = body
        """The morphology and its partition into modules."""
        self.task = task
        """Reward terms, team split, termination and progress."""
        self.config = config
        """The settings the env was built with."""
        self.episode_length = config.episode_length
        """Control steps before an episode is truncated."""
        self._actions = ActionMap(body)
        self._observer = Observer(body, config)
        if physics is None:
            contact_forces = (
                task.needs_contact_forces or observation_reads_contact_forces(body, config)
            )
            physics = Physics(body, contact_forces=contact_forces)
        self._physics = physics
        self._init_qpos = jnp.asarray(body.init_qpos, jnp.float32)
        self.task_spec = task.spec or config.resolve_task(body.task)
        """The task definition in force: reset noise, and for `make_task` tasks the
        reward weights and healthy ranges (config.json records it)."""
        self.dt = self._physics.dt
        """Seconds per control step (timestep x frame_skip)."""
        self.obs_sizes: dict[str, int] = self._observer.sizes
        """Module -> observation size, for every module."""
        self.action_sizes: dict[str, int] = self._actions.sizes
        """Actuated module -> number of actions in [-1, 1]."""
        self.obs_layout: dict[str, tuple[ObsBlock, ...]] = self._observer.layout
        """Module -> the named blocks of its observation, in order."""
        self._metric_names = (
            "forward_velocity", "invalid_action", *(f"reward/{t.name}" for t in task.terms)
        )

    @property
    def physics(self) -> Simulator:
        """The simulator the env steps (read-only)."""
        return self._physics

    @property
    def mjx_model(self) -> mjx.Model:
        """The `mjx.Model` the env steps."""
        return self._physics.model

    def reset(self, key: PRNGKeyArray) -> State:
        """The first state of an episode: the rest pose with the task's reset noise drawn
        from `key` (qpos = body.init_qpos + U(-s, s), qvel = U(-s, s) or s * N(0, 1));
        zero reward, done and metrics (see `State`)."""
        key, start_key = jax.random.split(key)
        data = self._physics.start(*self._start_pose(start_key))
        return State(
            data=data,
            obs=self._observer(data),
            reward={name: jnp.zeros(()) for name in self.body.module_names},
            done=jnp.zeros(()),
            metrics={name: jnp.zeros(()) for name in self._metric_names},
            info=start_info(self.body.module_names, key),
        )

    def _start_pose(self, key: PRNGKeyArray) -> tuple[Float[Array, "nq"], Float[Array, "nv"]]:
        return start_pose(self._init_qpos, self.body.model.nv, self.task_spec, key)

    def step(self, state: State, action: dict[str, Float[Array, "act"]]) -> State:
        """One control step (`frame_skip` physics steps) from `state` under `action`.

        action: exactly the actuated modules -> Float[n_actuators] in [-1, 1], mapped
        affinely onto each actuator's ctrlrange (clipped); the control cost is taken on
        the action as given, as in Brax. Wrong keys or shapes raise `ActionError` at
        trace time. Non-finite entries are treated as 0 (the middle of the range) and
        flag metrics["invalid_action"] = 1.0, so a trainer's NaN guard can stop the run;
        the step itself stays finite.

        Observations, rewards and termination read one instant: the state after the
        step, with its kinematics. The episode terminates when that state leaves the
        task's healthy ranges (root height, root hinge angle, joint state; never for a
        task without them or with `terminate_when_unhealthy` off) and is truncated after
        `episode_length` steps; done = either.
        On done the returned state is a fresh start with new reset noise (auto-reset),
        while its reward, done, metrics and info["truncation"] describe the step that
        finished.
        """
        request = self.begin_step(state, action)
        data = self._physics.step(state.data, request.ctrl)
        return self.end_step(state, request, data, self._physics.restart_where)

    def begin_step(self, state: State, action: dict[str, Float[Array, "act"]]) -> StepRequest:
        """The part of `step` before the physics: the action checked, sanitized and mapped
        to controls, and the env's next key and the fresh start pose drawn (used if the
        step ends the episode)."""
        self._actions.check(action)
        action, invalid = self._actions.sanitize(action)
        key, start_key = jax.random.split(state.info["rng"])
        qpos, qvel = self._start_pose(start_key)
        return StepRequest(self._actions.to_ctrl(action), action, invalid, key, qpos, qvel)

    def end_step(self, state: State, request: StepRequest, data: Any, restart: Restart) -> State:
        """The part of `step` after the physics: `data` is the simulator's state after
        `request.ctrl`; rewards, termination, episode sums, auto-reset (`restart`, with the
        signature of `Simulator.restart_where`) and observations."""
        transition = Transition(state.data, data, request.action, self.dt)
        reward, terms = self.task.rewards(transition)
        forward_velocity = self.task.progress(transition)

        terminated = ~self.task.healthy(data)
        steps = state.info["steps"] + 1
        truncated = (steps >= self.episode_length) & ~terminated
        done = (terminated | truncated).astype(jnp.float32)
        episode, last_episode = close(
            accumulate(state.info["episode"], reward, forward_velocity),
            state.info["last_episode"],
            done,
        )
        data = restart(done > 0, data, request.start_qpos, request.start_qvel)
        return State(
            data=data,
            obs=self._observer(data),
            reward=reward,
            done=done,
            metrics={
                "forward_velocity": forward_velocity,
                "invalid_action": request.invalid,
                **{f"reward/{name}": value for name, value in terms.items()},
            },
            info={
                "truncation": truncated.astype(jnp.float32),
                "steps": jnp.where(done > 0, 0, steps),
                "episode": episode,
                "last_episode": last_episode,
                "rng": request.rng,
            },
        )


def start_pose(
    init_qpos: Float[Array, "nq"], nv: int, spec: TaskSpec, key: PRNGKeyArray
) -> tuple[Float[Array, "nq"], Float[Array, "nv"]]:
    """A fresh episode's start: qpos = init_qpos + U(-s, s); qvel = U(-s, s) or s * N(0, 1)
    (the task's reset noise scale s and qvel distribution)."""
    scale = spec.reset_noise_scale
    qpos_key, qvel_key = jax.random.split(key)
    qpos = init_qpos + jax.random.uniform(qpos_key, init_qpos.shape, minval=-scale, maxval=scale)
    if spec.reset_qvel_noise == "uniform":
        qvel = jax.random.uniform(qvel_key, (nv,), minval=-scale, maxval=scale)
    else:
        qvel = scale * jax.random.normal(qvel_key, (nv,))
    return qpos, qvel
