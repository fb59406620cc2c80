import math

import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from modular_ppo.networks.contract import ModularNetwork, NetworkOutput, StepOutput
from modular_ppo.ppo import (
    Minibatch,
    PPOConfig,
    clipped_policy_loss,
    policy_advantages,
    ppo_loss,
)


def test_clipped_loss_matches_hand_computation():
    ratios = np.array([0.5, 1.0, 1.5, 1.1, 0.5])
    advantages = np.array([1.0, -1.0, 2.0, -3.0, -1.0])
    # min(r A, clip(r, 0.8, 1.2) A) per sample:
    #  0.5 * 1 = 0.5 < 0.8 * 1;  -1 = -1;  1.2 * 2 = 2.4 < 3;  -3.3 = -3.3;  0.8 * -1 < -0.5
    expected = -np.mean([0.5, -1.0, 2.4, -3.3, -0.8])
    loss = clipped_policy_loss(jnp.log(ratios), jnp.zeros(5), advantages, 0.2)
    np.testing.assert_allclose(loss, expected, rtol=1e-6)


class FixedOutputs(ModularNetwork):
    """Log-likelihood = a learnable log-ratio per module; value = a learnable constant."""

    def __init__(self, log_ratios, values, regularization):
        self.log_ratios = nnx.Dict({k: nnx.Param(jnp.asarray(v)) for k, v in log_ratios.items()})
        self.values = nnx.Dict({k: nnx.Param(jnp.asarray(v)) for k, v in values.items()})
        self.regularization = nnx.Param(jnp.asarray(regularization))

    def initialize_state(self, batch_size):
        return ()

    def reset_state(self, state, done):
        return state

    def __call__(self, state, obs, extras=None, deterministic=False):
        batch = obs["hub"].shape[0]
        return StepOutput(
            next_state=(),
            output=NetworkOutput(
                actions={k: jnp.zeros((batch, 1)) for k in self.log_ratios},
                loglikelihoods={k: extras["old"][k] + v[...] for k, v in self.log_ratios.items()},
                value_estimates={k: jnp.full(batch, v[...]) for k, v in self.values.items()},
                extras={},
            ),
            regularization_loss=self.regularization[...],
        )

    def update_statistics(self, obs):
        pass


def one_step(x):
    return jnp.asarray(x, jnp.float32)[None]  # [T=1, B]


@pytest.fixture
def minibatch():
    old = {"hub": one_step([0.3, -0.2, 0.1]), "left": one_step([-1.0, 0.0, 2.0])}
    return Minibatch(
        recurrent=(),
        obs={"hub": jnp.zeros((1, 3, 2))},
        extras={"old": old},
        done=jnp.zeros((1, 3)),
        old_loglikelihoods=old,
        advantages={"hub": one_step([1.0, -2.0, 0.5]), "left": one_step([-1.0, 1.0, 3.0])},
        value_targets={"hub": one_step([1.0, 2.0, 3.0]), "left": one_step([0.0, 0.0, 1.0]),
                       "passive": one_step([2.0, 2.0, 2.0])},
    )


def test_ppo_loss_per_key_against_hand_computation(minibatch):
    network = FixedOutputs(
        log_ratios={"hub": math.log(1.5), "left": math.log(0.9)},
        values={"hub": 2.0, "left": 0.5, "passive": 1.0},
        regularization=0.25,
    )
    graphdef, params, rest = nnx.split(network, nnx.Param, ...)
    config = PPOConfig(clip_range=0.2, normalize_advantages=False, critic_loss_weight=0.5)
    total, terms = ppo_loss(params, rest, graphdef, minibatch, config)
    # hub: ratio 1.5 everywhere -> positive advantages clipped at 1.2, negative ones not.
    hub = -np.mean([1.2 * 1.0, 1.5 * -2.0, 1.2 * 0.5])
    # left: ratio 0.9 within [0.8, 1.2] -> unclipped.
    left = -np.mean([0.9 * -1.0, 0.9 * 1.0, 0.9 * 3.0])
    critic = {"hub": 0.5 * np.mean([1.0, 0.0, 1.0]), "left": 0.5 * np.mean([0.25, 0.25, 0.25]),
              "passive": 0.5 * np.mean([1.0, 1.0, 1.0])}
    np.testing.assert_allclose(terms.actor["hub"], hub, rtol=1e-6)
    np.testing.assert_allclose(terms.actor["left"], left, rtol=1e-6)
    for key, value in critic.items():
        np.testing.assert_allclose(terms.critic[key], value, rtol=1e-6, err_msg=key)
    np.testing.assert_allclose(terms.clipping_fraction["hub"], 1.0)
    np.testing.assert_allclose(terms.clipping_fraction["left"], 0.0)
    np.testing.assert_allclose(total, hub + left + 0.5 * sum(critic.values()) + 0.25, rtol=1e-6)


def test_advantages_are_normalized_per_policy_key(minibatch):
    network = FixedOutputs({"hub": 0.0, "left": 0.0}, {"hub": 0.0, "left": 0.0, "passive": 0.0},
                           0.0)
    graphdef, params, rest = nnx.split(network, nnx.Param, ...)
    _, terms = ppo_loss(params, rest, graphdef, minibatch, PPOConfig(normalize_advantages=True))
    # Ratio 1: the loss is minus the mean normalized advantage, zero for every key.
    for key in ("hub", "left"):
        np.testing.assert_allclose(terms.actor[key], 0.0, atol=1e-6)


def test_combined_advantage_is_team_sum_for_every_policy_head():
    advantages = {"hub": jnp.array([1.0, 2.0]), "left": jnp.array([0.5, -1.0]),
                  "passive": jnp.array([-3.0, 4.0])}
    combined = policy_advantages(advantages, ("hub", "left"), combine=True)
    assert set(combined) == {"hub", "left"}
    for key in combined:
        np.testing.assert_allclose(combined[key], [-1.5, 5.0])
    own = policy_advantages(advantages, ("hub", "left"), combine=False)
    np.testing.assert_allclose(own["left"], advantages["left"])
