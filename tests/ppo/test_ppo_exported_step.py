"""The training step kept as an exported program (modular_ppo.ppo.exported_step): it trains
bit for bit as the step compiled directly, a later call with the same key reads the file
instead of tracing, a file that cannot be read back or does not fit is replaced, and a step
that cannot be exported (one that calls back into Python) is compiled directly."""

import jax
import numpy as np
import pytest
from flax import nnx
from ppo_test_network import PerModuleMLP

from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.ppo import ExportedSteps, PPOConfig, compile_train_step, new_training_state
from modular_ppo.ppo import exported_step

CONFIG = PPOConfig(n_envs=8, rollout_length=4, n_epochs=1, n_minibatches=2,
                   total_steps=64, iterations_per_call=2)


@pytest.fixture(scope="module")
def groups_and_state(toy_env):
    network = PerModuleMLP(toy_env.obs_sizes, toy_env.action_sizes, rngs=nnx.Rngs(0))
    return new_training_state([(toy_env, network)], CONFIG, seed=0)


@pytest.fixture(scope="module")
def direct_result(groups_and_state):
    groups, state = groups_and_state
    return compile_train_step(groups, CONFIG, state)(state)


def _values(leaf) -> np.ndarray:
    if jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key):
        leaf = jax.random.key_data(leaf)
    return np.asarray(leaf)


def _assert_same(result, expected):
    (state, metrics), (expected_state, expected_metrics) = result, expected
    assert jax.tree.structure(state) == jax.tree.structure(expected_state)
    for leaf, expected_leaf in zip(jax.tree.leaves(state), jax.tree.leaves(expected_state)):
        np.testing.assert_array_equal(_values(leaf), _values(expected_leaf))
    assert metrics.keys() == expected_metrics.keys()
    for name in metrics:
        np.testing.assert_array_equal(np.asarray(metrics[name]),
                                      np.asarray(expected_metrics[name]), err_msg=name)


def _files(folder):
    return sorted(folder.glob(f"*{exported_step.SUFFIX}"))


def test_the_exported_step_trains_as_the_direct_one_and_is_read_back(
        groups_and_state, direct_result, tmp_path, monkeypatch):
    groups, state = groups_and_state
    steps = ExportedSteps(tmp_path, "key")
    _assert_same(compile_train_step(groups, CONFIG, state, steps)(state), direct_result)
    [written] = _files(tmp_path)
    written_at = written.stat().st_mtime_ns

    def no_trace(*args):
        raise AssertionError("the step was traced although its file was there")

    monkeypatch.setattr(exported_step, "_export", no_trace)
    step = compile_train_step(groups, CONFIG, state, steps)
    _assert_same(step(state), direct_result)
    assert _files(tmp_path) == [written] and written.stat().st_mtime_ns == written_at

    # The returned step takes its own output, as the training loop calls it.
    new_state, _ = step(state)
    second_state, _ = step(new_state)
    assert int(second_state.iteration) == 2 * CONFIG.iterations_per_call


def test_another_key_or_state_shape_gets_its_own_file(groups_and_state, tmp_path, toy_env):
    groups, state = groups_and_state
    compile_train_step(groups, CONFIG, state, ExportedSteps(tmp_path, "key"))
    compile_train_step(groups, CONFIG, state, ExportedSteps(tmp_path, "another key"))
    assert len(_files(tmp_path)) == 2

    wider = PerModuleMLP(toy_env.obs_sizes, toy_env.action_sizes, hidden=8,
                         rngs=nnx.Rngs(0))
    wider_groups, wider_state = new_training_state([(toy_env, wider)], CONFIG, seed=0)
    compile_train_step(wider_groups, CONFIG, wider_state, ExportedSteps(tmp_path, "key"))
    assert len(_files(tmp_path)) == 3


def test_a_file_that_cannot_be_read_back_is_replaced(groups_and_state, direct_result,
                                                    tmp_path):
    groups, state = groups_and_state
    steps = ExportedSteps(tmp_path, "key")
    compile_train_step(groups, CONFIG, state, steps)
    [written] = _files(tmp_path)
    whole = written.read_bytes()
    written.write_bytes(whole[: len(whole) // 2])  # a file cut short

    _assert_same(compile_train_step(groups, CONFIG, state, steps)(state), direct_result)
    assert exported_step._read(written) is not None  # whole again
    assert not list(tmp_path.glob("*.partial"))


def test_a_folder_that_cannot_be_written_costs_only_the_trace(groups_and_state,
                                                              direct_result, tmp_path):
    groups, state = groups_and_state
    blocked = tmp_path / "a file"
    blocked.write_text("")
    steps = ExportedSteps(blocked / "exported", "key")
    _assert_same(compile_train_step(groups, CONFIG, state, steps)(state), direct_result)


class RewardThroughPython(TargetReachingEnv):
    """The toy task with its rewards passed through a Python callback, as the CPU backend's
    simulator is on an accelerator: a program JAX cannot serialize."""

    def step(self, state, action):
        new = super().step(state, action)

        def through_python(reward):
            shape = jax.ShapeDtypeStruct(reward.shape, reward.dtype)
            return jax.pure_callback(lambda r: np.asarray(r, reward.dtype), shape, reward,
                                     vmap_method="broadcast_all")

        return new.replace(reward=jax.tree.map(through_python, new.reward))


def test_a_step_that_calls_back_into_python_is_compiled_directly(groups_and_state,
                                                                  direct_result, tmp_path):
    env = RewardThroughPython(episode_length=10)
    network = PerModuleMLP(env.obs_sizes, env.action_sizes, rngs=nnx.Rngs(0))
    groups, state = new_training_state([(env, network)], CONFIG, seed=0)
    _assert_same(compile_train_step(groups, CONFIG, state, ExportedSteps(tmp_path, "key"))(
        state), direct_result)
    assert not _files(tmp_path)
