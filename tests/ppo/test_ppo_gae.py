import numpy as np
import pytest

from modular_ppo.ppo.gae import gae, per_key_gae, team_advantage

GAMMA, LAMBDA = 0.9, 0.8


def reference_gae(rewards, values, last_value, done, truncated):
    """Plain-Python GAE, one environment and one step at a time, backwards in time."""
    steps, envs = rewards.shape
    advantages = np.zeros((steps, envs))
    for env in range(envs):
        later = 0.0
        for t in reversed(range(steps)):
            next_value = values[t + 1, env] if t + 1 < steps else last_value[env]
            if truncated[t, env]:
                advantage = 0.0  # cut off by a time limit: its return is unknown
            elif done[t, env]:
                advantage = rewards[t, env] - values[t, env]
            else:
                delta = rewards[t, env] + GAMMA * next_value - values[t, env]
                advantage = delta + GAMMA * LAMBDA * later
            advantages[t, env] = advantage
            later = advantage
    return advantages


def random_episodes(rng, steps=12, envs=5):
    done = rng.random((steps, envs)) < 0.25
    done[3, 0] = done[7, 1] = True
    truncated = done & (rng.random((steps, envs)) < 0.5)  # a time limit is also a done
    truncated[3, 0], truncated[7, 1] = True, False
    return done.astype(np.float32), truncated.astype(np.float32)


def random_stream(rng, steps=12, envs=5):
    return (rng.normal(size=(steps, envs)).astype(np.float32),
            rng.normal(size=(steps, envs)).astype(np.float32),
            rng.normal(size=envs).astype(np.float32))


def test_gae_matches_loop_reference_with_dones_and_truncations_mid_rollout():
    rng = np.random.default_rng(0)
    done, truncated = random_episodes(rng)
    rewards, values, last = random_stream(rng)
    result = gae(rewards, values, last, done, truncated, GAMMA, LAMBDA)
    np.testing.assert_allclose(result, reference_gae(rewards, values, last, done, truncated),
                               rtol=1e-5, atol=1e-5)
    assert np.all(np.asarray(result)[truncated > 0] == 0.0)


def test_per_key_gae_matches_reference_for_every_module():
    rng = np.random.default_rng(1)
    done, truncated = random_episodes(rng)
    streams = {name: random_stream(rng) for name in ("torso", "leg_1", "leg_2")}
    result = per_key_gae(
        {k: s[0] for k, s in streams.items()}, {k: s[1] for k, s in streams.items()},
        {k: s[2] for k, s in streams.items()}, done, truncated, GAMMA, LAMBDA,
    )
    assert set(result) == set(streams)
    for name, (rewards, values, last) in streams.items():
        np.testing.assert_allclose(
            result[name], reference_gae(rewards, values, last, done, truncated),
            rtol=1e-5, atol=1e-5, err_msg=name,
        )


def test_team_advantage_is_gae_of_summed_rewards_and_summed_values():
    rng = np.random.default_rng(2)
    done, truncated = random_episodes(rng)
    streams = {name: random_stream(rng) for name in ("torso", "leg_1", "leg_2", "tail")}
    rewards = {k: s[0] for k, s in streams.items()}
    values = {k: s[1] for k, s in streams.items()}
    last = {k: s[2] for k, s in streams.items()}
    team = team_advantage(per_key_gae(rewards, values, last, done, truncated, GAMMA, LAMBDA))
    summed = gae(sum(rewards.values()), sum(values.values()), sum(last.values()), done,
                 truncated, GAMMA, LAMBDA)
    np.testing.assert_allclose(team, summed, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("gae_lambda, expected", [(0.0, "one-step"), (1.0, "monte-carlo")])
def test_gae_limits_are_td_error_and_discounted_return(gae_lambda, expected):
    rewards = np.array([[1.0], [2.0], [3.0]], np.float32)
    values = np.array([[0.5], [0.25], [1.0]], np.float32)
    last = np.array([4.0], np.float32)
    no = np.zeros((3, 1), np.float32)
    result = np.asarray(gae(rewards, values, last, no, no, 0.5, gae_lambda))[:, 0]
    if expected == "one-step":
        np.testing.assert_allclose(result, [1 + 0.5 * 0.25 - 0.5, 2 + 0.5 * 1 - 0.25,
                                            3 + 0.5 * 4 - 1])
    else:
        returns = [1 + 0.5 * 2 + 0.25 * 3 + 0.125 * 4, 2 + 0.5 * 3 + 0.25 * 4, 3 + 0.5 * 4]
        np.testing.assert_allclose(result, np.array(returns) - values[:, 0])
