"""Test rollouts of a ModularEnv: reset, then N_STEPS steps, for N_ENVS envs.

An MJX reset + step costs ~15-25 s of CPU to compile, so every test of a body reuses the
same compiled functions with the same shapes (conftest.py caches one Runner per body).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from modular_ppo.env import EnvConfig, ModularEnv, State

N_ENVS = 2
N_STEPS = 8
EPISODE_LENGTH = 5
TEST_CONFIG = EnvConfig(episode_length=EPISODE_LENGTH)
ANT_CONFIG = EnvConfig(episode_length=EPISODE_LENGTH, contact_forces=True, previous_action=True)
"""The ant's rollout also observes contact forces and previous actions, so its one compile
covers those paths too (its reward is still Brax's: no contact cost)."""


# Compile time over run time: these rollouts are a few steps long.
FAST_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def config_for(body_name: str) -> EnvConfig:
    return ANT_CONFIG if body_name == "ant-modular" else TEST_CONFIG


@dataclasses.dataclass(frozen=True)
class Rollout:
    """Host copies of a rollout: `first` [envs], `states` [envs, steps], `actions`."""

    first: State
    states: State
    actions: dict[str, np.ndarray]


class Runner:
    """reset, an optional qpos offset, then N_STEPS steps with given actions, per env.

    `reset` and `step` are compiled once each, for a single env, and driven from Python:
    cheaper to compile than one scanned, vmapped rollout (about half the CPU time). The
    production path, jit(vmap(step)), is traced in test_env_vmap.py.
    """

    def __init__(self, env: ModularEnv):
        self.env = env
        key = jax.random.PRNGKey(0)
        self._reset = jax.jit(env.reset).lower(key).compile(compiler_options=FAST_COMPILE)
        action = {m: jnp.zeros(k) for m, k in env.action_sizes.items()}
        self._step = (
            jax.jit(env.step)
            .lower(self._reset(key), action)
            .compile(compiler_options=FAST_COMPILE)
        )

    def zero_actions(self) -> dict[str, np.ndarray]:
        return {
            m: np.zeros((N_ENVS, N_STEPS, k), np.float32) for m, k in self.env.action_sizes.items()
        }

    def random_actions(self, seed: int, scale: float = 1.0) -> dict[str, np.ndarray]:
        rng = np.random.default_rng(seed)
        return {
            m: rng.uniform(-scale, scale, a.shape).astype(np.float32)
            for m, a in self.zero_actions().items()
        }

    def __call__(self, actions=None, seed: int = 0, qpos_offset=None) -> Rollout:
        """Envs get keys split from `seed`; actions default to U(-1, 1); `qpos_offset` is
        added to every env's reset qpos before the first step (not to the cached first
        state that auto-reset returns to)."""
        actions = self.random_actions(seed) if actions is None else actions
        keys = jax.random.split(jax.random.PRNGKey(seed), N_ENVS)
        firsts, runs = [], []
        for env, key in enumerate(keys):
            first = self._reset(key)
            state = first
            if qpos_offset is not None:
                qpos = first.data.qpos + np.asarray(qpos_offset, np.float32)
                state = first.replace(data=first.data.replace(qpos=qpos))
            states = []
            for t in range(N_STEPS):
                state = self._step(state, {m: a[env, t] for m, a in actions.items()})
                states.append(state)
            firsts.append(first)
            runs.append(_stack(jax.device_get(states)))
        return Rollout(_stack(jax.device_get(firsts)), _stack(runs), actions)


def _stack(trees: list) -> object:
    return jax.tree.map(lambda *x: np.stack(x), *trees)
