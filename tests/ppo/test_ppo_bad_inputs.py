import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.ppo import (
    BodyGroupError,
    EvalConfig,
    NetworkEnvMismatch,
    PPOConfig,
    make_evaluator,
    new_training_state,
    train,
)


def test_network_without_a_value_head_for_every_module_is_refused(toy_env):
    obs_sizes = {m: n for m, n in toy_env.obs_sizes.items() if m != "right"}
    action_sizes = {m: n for m, n in toy_env.action_sizes.items() if m != "right"}
    network = PerModuleMLP(obs_sizes, action_sizes, rngs=nnx.Rngs(0))
    with pytest.raises(NetworkEnvMismatch, match=r"value_estimates .*'right'"):
        new_training_state([(toy_env, network)], PPOConfig(n_envs=4, n_minibatches=2), 0)


def test_network_with_wrong_action_size_is_refused(toy_env):
    network = PerModuleMLP(toy_env.obs_sizes, {**toy_env.action_sizes, "left": 2},
                           rngs=nnx.Rngs(0))
    with pytest.raises(NetworkEnvMismatch, match=r"actions\['left'\] .* takes 1 actions"):
        new_training_state([(toy_env, network)], PPOConfig(n_envs=4, n_minibatches=2), 0)


class ComparableEnv(TargetReachingEnv):
    """Defines equality without hashing, so it cannot be a static jit argument."""

    def __eq__(self, other):
        return isinstance(other, ComparableEnv)

    __hash__ = None


def test_unhashable_env_gets_an_error_that_says_what_to_change(make_test_network):
    env = ComparableEnv(episode_length=10)
    graphdef = nnx.graphdef(make_test_network())
    with pytest.raises(TypeError, match="env .*not hashable.*hash by identity"):
        make_evaluator(env, graphdef, EvalConfig())


def test_a_state_of_other_bodies_is_refused(toy_env, make_test_network):
    config = PPOConfig(n_envs=4, n_minibatches=2)
    groups, _ = new_training_state([(toy_env, make_test_network())], config, 0)
    other = TargetReachingEnv(name="other")
    _, state = new_training_state([(other, make_test_network())], config, 0)
    with pytest.raises(BodyGroupError, match=r"state of bodies \['other'\].*\['toy-targets'\]"):
        train(groups, state, config)


def test_the_same_body_twice_is_refused(toy_env, make_test_network):
    with pytest.raises(BodyGroupError, match="each body may appear once"):
        new_training_state([(toy_env, make_test_network()), (toy_env, make_test_network())],
                           PPOConfig(n_envs=4, n_minibatches=2), 0, body_envs={"toy-targets": 2})
