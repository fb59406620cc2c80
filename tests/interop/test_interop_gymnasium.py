"""Gymnasium single-agent view: Gymnasium's env checker passes; one flat action drives every
actuated module in the documented order; the reward is the team reward."""

from __future__ import annotations

import warnings

import numpy as np
from gymnasium.utils.env_checker import check_env

from modular_ppo.env import EnvConfig
from modular_ppo.interop import GymnasiumModularEnv

EXPECTED_WARNINGS = (
    "Box observation space m",  # infinite bounds: Gymnasium's own MuJoCo envs warn the same
    "Not able to test alternative render modes",  # an env made without gymnasium.make
)


def _check(env) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env, skip_render_check=env.render_mode is None)
    others = [str(w.message) for w in caught
              if not any(expected in str(w.message) for expected in EXPECTED_WARNINGS)]
    assert others == []


def test_check_env_passes():
    env = GymnasiumModularEnv("hopper-modular", config=EnvConfig(episode_length=20))
    _check(env)


def test_check_env_passes_with_rgb_array_rendering():
    env = GymnasiumModularEnv("hopper-modular", config=EnvConfig(episode_length=20),
                              render_mode="rgb_array")
    _check(env)
    env.reset(seed=0)
    assert env.render().shape == (480, 480, 3)
    env.close()


def test_flat_action_order_and_team_reward():
    env = GymnasiumModularEnv("ant-modular", config=EnvConfig(episode_length=20))
    assert env.agents == ["front_left", "front_right", "back_left", "back_right"]
    assert env.action_space.shape == (8,)
    observation, _ = env.reset(seed=0)
    assert observation.shape == env.observation_space.shape
    action = np.zeros(8, np.float32)
    action[env.slices["action"]["back_right"]] = [0.5, -0.25]
    observation, reward, terminated, truncated, info = env.step(action)
    ctrl = np.asarray(env.parallel._state.data.ctrl)
    model = env.parallel.body.model
    moved = {model.actuator(a).name: ctrl[a] for a in range(model.nu) if ctrl[a] != 0}
    hip, ankle = model.actuator("hip_4").ctrlrange, model.actuator("ankle_4").ctrlrange
    assert moved == {"hip_4": np.float32(0.5 * hip[1]), "ankle_4": np.float32(-0.25 * ankle[1])}
    assert reward == sum(info["rewards"].values())
    assert not terminated and not truncated
