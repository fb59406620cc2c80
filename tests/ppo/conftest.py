import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.ppo import EvalConfig, PPOConfig


@pytest.fixture(scope="session")
def toy_env():
    return TargetReachingEnv(episode_length=10)


@pytest.fixture(scope="session")
def learning_env():
    """Episodes long enough to reach any target from any start."""
    return TargetReachingEnv(episode_length=20)


@pytest.fixture(scope="session")
def eval_config(learning_env):
    """Shared by the tests so the evaluator compiles once. Twice the learning env's episode
    length: evaluation must count only each environment's first episode."""
    return EvalConfig(n_envs=64, episode_length=2 * learning_env.episode_length)


@pytest.fixture(scope="session")
def make_test_network(toy_env):
    def make(seed=0, **kwargs):
        return PerModuleMLP(toy_env.obs_sizes, toy_env.action_sizes, rngs=nnx.Rngs(seed),
                            **kwargs)

    return make


@pytest.fixture(scope="session")
def learning_config():
    """Learns the toy task (episodes of 20 steps) in 40 iterations; shared by the tests
    that need a full training step, so it compiles once per network."""
    return PPOConfig(n_envs=32, rollout_length=20, n_epochs=4, n_minibatches=4,
                     learning_rate=3e-3, total_steps=32 * 20 * 40, iterations_per_call=10)
