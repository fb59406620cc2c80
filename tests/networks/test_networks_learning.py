"""Every architecture learns the PPO core's small modular task (TargetReachingEnv).

Reference figures on this task (tests/ppo/test_ppo_learning.py): a random policy scores a
team return of about -40, a learner with sign-flipped advantages about -66; standing still
about -39. A working learner reaches about -7; the threshold is -15.
"""

import pytest
from flax import nnx

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.networks import AttentionConfig, NetworkConfig, make_network
from modular_ppo.ppo import PPOConfig, train_from_scratch

THRESHOLD = -15.0


@pytest.mark.parametrize("arch", ["separate", "shared", "graph", "attention"])
def test_architecture_learns_the_toy_task(arch):
    env = TargetReachingEnv(episode_length=20)
    network = make_network(
        env.body, env.obs_sizes,
        NetworkConfig(arch=arch, policy_hidden_sizes=(32, 32), value_hidden_sizes=(32, 32),
                      embedding_size=32, attention=AttentionConfig(layers=1)),
        rngs=nnx.Rngs(0),
    )
    config = PPOConfig(n_envs=32, rollout_length=20, n_epochs=4, n_minibatches=4,
                       learning_rate=3e-3, total_steps=32 * 20 * 40, iterations_per_call=10)
    result = train_from_scratch([(env, network)], config)
    # Stochastic policy, episodes finished during the last 10 iterations.
    final = result.metrics["episode/team_return"]
    print(arch, final)
    assert final > THRESHOLD, (arch, final)
