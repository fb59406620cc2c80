"""A small pure-JAX modular task for tests and examples: drive each joint to its target.

The body is a hub with two arms, each of the three bodies on its own slide joint with one
motor, so the default "subtrees" partition gives three actuated modules: hub, left, right.
The task does not simulate MuJoCo physics: each motor sets its joint's velocity
(action * max_speed), positions stay within the joint ranges. At every reset each joint
gets a random position and a random target inside its range. A module is rewarded
-|target - position| for its own joint (summed over modules: the team reward). Episodes are
truncated after `episode_length` steps. State.info and metrics follow the MJX env's
conventions (see modular_ppo.env): "truncation", "steps", "episode", "last_episode";
"forward_velocity" (the hub joint's velocity) and "invalid_action" (a non-finite action,
treated as 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jaxtyping import Array, Float, PRNGKeyArray

from modular_ppo.body import BodyGraph
from modular_ppo.env.episode import accumulate, close, start_info
from modular_ppo.env.types import State

TOY_MJCF = """
<mujoco model="toy-targets">
  <worldbody>
    <body name="hub">
      <joint name="hub_x" type="slide" axis="1 0 0" range="-1 1" limited="true"/>
      <geom type="sphere" size="0.1" mass="1"/>
      <body name="left" pos="0 0.3 0">
        <joint name="left_x" type="slide" axis="1 0 0" range="-1 1" limited="true"/>
        <geom type="sphere" size="0.05" mass="0.5"/>
      </body>
      <body name="right" pos="0 -0.3 0">
        <joint name="right_x" type="slide" axis="1 0 0" range="-1 1" limited="true"/>
        <geom type="sphere" size="0.05" mass="0.5"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="hub_motor" joint="hub_x" ctrlrange="-1 1"/>
    <motor name="left_motor" joint="left_x" ctrlrange="-1 1"/>
    <motor name="right_motor" joint="right_x" ctrlrange="-1 1"/>
  </actuator>
</mujoco>
"""

OBS_SIZE = 3
"""Per module: joint position, target - position, fraction of the episode elapsed."""


@struct.dataclass
class ToyData:
    qpos: Float[Array, "nq"]
    qvel: Float[Array, "nv"]
    target: Float[Array, "nq"]


class TargetReachingEnv:
    """Implements `ModularEnvProtocol` (single-env reset / step; callers vmap)."""

    def __init__(self, episode_length: int = 25, max_speed: float = 3.0, dt: float = 0.05,
                 name: str | None = None):
        """name: the body's name (default: the MJCF model's), e.g. to train two toy
        bodies of different episode lengths in one run."""
        if episode_length <= 0:
            raise ValueError(
                f"TargetReachingEnv: episode_length = {episode_length}; give a positive "
                "number of steps."
            )
        self.body = BodyGraph.from_mjcf(TOY_MJCF, name=name)
        self.episode_length = episode_length
        self.max_speed = max_speed
        self.dt = dt
        model = self.body.model
        # Slide joints: one qpos and one dof each, at the same address.
        self._low = jnp.asarray(model.jnt_range[:, 0], jnp.float32)
        self._high = jnp.asarray(model.jnt_range[:, 1], jnp.float32)
        self._actuated_dof = np.asarray(model.jnt_dofadr[model.actuator_trnid[:, 0]])
        self._root_dof = int(self.body.modules[self.body.root_module].qvel_adr[0])
        self.obs_sizes = {name: OBS_SIZE for name in self.body.module_names}
        self.action_sizes = {
            name: self.body.modules[name].n_actuators for name in self.body.actuated_modules
        }

    def reset(self, key: PRNGKeyArray) -> State:
        key, data_key = jax.random.split(key)
        data = self._initial_data(data_key)
        info = start_info(self.body.module_names, key)
        return State(
            data=data,
            obs=self._observe(data, info["steps"]),
            reward={name: jnp.zeros(()) for name in self.body.module_names},
            done=jnp.zeros(()),
            metrics={"forward_velocity": jnp.zeros(()), "invalid_action": jnp.zeros(())},
            info=info,
        )

    def step(self, state: State, action: dict[str, Float[Array, "_act"]]) -> State:
        ctrl = jnp.zeros(self.body.model.nu)
        invalid = jnp.zeros(())
        for name, act in action.items():
            finite = jnp.isfinite(act)
            invalid = jnp.maximum(invalid, jnp.any(~finite).astype(jnp.float32))
            act = jnp.clip(jnp.where(finite, act, 0.0), -1.0, 1.0)
            ctrl = ctrl.at[self.body.modules[name].actuator_ids].set(act)
        qvel = jnp.zeros_like(state.data.qvel).at[self._actuated_dof].set(self.max_speed * ctrl)
        qpos = jnp.clip(state.data.qpos + self.dt * qvel, self._low, self._high)
        data = state.data.replace(qpos=qpos, qvel=qvel)
        reward = {
            name: -jnp.sum(jnp.abs(data.target - data.qpos)[module.qpos_adr])
            for name, module in self.body.modules.items()
        }
        velocity = qvel[self._root_dof]
        steps = state.info["steps"] + 1
        done = (steps >= self.episode_length).astype(jnp.float32)
        episode, last_episode = close(
            accumulate(state.info["episode"], reward, velocity), state.info["last_episode"], done
        )
        # Auto-reset. A fresh start costs a few random numbers here, so it is drawn every
        # step and selected where the episode ended.
        key, reset_key = jax.random.split(state.info["rng"])
        data = jax.tree.map(
            lambda fresh, old: jnp.where(done > 0, fresh, old), self._initial_data(reset_key), data
        )
        steps = jnp.where(done > 0, 0, steps)
        info = {"truncation": done, "steps": steps, "episode": episode,
                "last_episode": last_episode, "rng": key}
        return State(
            data=data,
            obs=self._observe(data, steps),
            reward=reward,
            done=done,
            metrics={"forward_velocity": velocity, "invalid_action": invalid},
            info=info,
        )

    def _initial_data(self, key: PRNGKeyArray) -> ToyData:
        qpos, target = jax.random.uniform(
            key, (2, *self._low.shape), minval=self._low, maxval=self._high
        )
        return ToyData(qpos=qpos, qvel=jnp.zeros(self.body.model.nv), target=target)

    def _observe(self, data: ToyData, steps) -> dict[str, Float[Array, "_obs"]]:
        elapsed = steps / self.episode_length
        return {
            name: jnp.stack([
                data.qpos[module.qpos_adr[0]],
                data.target[module.qpos_adr[0]] - data.qpos[module.qpos_adr[0]],
                elapsed,
            ])
            for name, module in self.body.modules.items()
        }
