"""`PPOConfig.reward_scale`: GAE and the value targets see every module's rewards scaled."""

import numpy as np
import pytest

from modular_ppo.ppo import PPOConfig, PPOConfigError, make_batch
from modular_ppo.ppo.gae import per_key_gae
from modular_ppo.ppo.rollout import Rollout

STEPS, ENVS = 6, 4


def rollout(rng) -> Rollout:
    stream = lambda *shape: rng.normal(size=shape).astype(np.float32)  # noqa: E731
    done = (rng.random((STEPS, ENVS)) < 0.3).astype(np.float32)
    return Rollout(
        obs={"leg": stream(STEPS, ENVS, 3)}, extras={}, loglikelihoods={"leg": stream(STEPS, ENVS)},
        values={key: stream(STEPS, ENVS) for key in ("torso", "leg")},
        last_values={key: stream(ENVS) for key in ("torso", "leg")},
        rewards={key: stream(STEPS, ENVS) for key in ("torso", "leg")},
        done=done, truncated=done * (rng.random((STEPS, ENVS)) < 0.5), episode_sums={},
        nonfinite_actions={})


def test_gae_and_value_targets_see_the_scaled_rewards():
    data = rollout(np.random.default_rng(0))
    config = PPOConfig(n_envs=ENVS, n_minibatches=2, reward_scale=0.1)
    batch, advantages = make_batch({}, data, config)
    expected = per_key_gae({key: 0.1 * reward for key, reward in data.rewards.items()},
                           data.values, data.last_values, data.done, data.truncated,
                           config.gamma, config.gae_lambda)
    unscaled = per_key_gae(data.rewards, data.values, data.last_values, data.done,
                           data.truncated, config.gamma, config.gae_lambda)
    for key in ("torso", "leg"):
        np.testing.assert_allclose(advantages[key], expected[key], rtol=1e-6)
        np.testing.assert_allclose(batch.value_targets[key], data.values[key] + expected[key],
                                   rtol=1e-6)
        assert np.abs(np.asarray(advantages[key]) - np.asarray(unscaled[key])).max() > 0.1


@pytest.mark.parametrize("scale", [0.0, -1.0, float("nan")])
def test_a_scale_that_is_not_positive_is_refused(scale):
    with pytest.raises(PPOConfigError, match="reward_scale"):
        PPOConfig(reward_scale=scale)
