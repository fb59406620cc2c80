"""`--backend cpu-pipelined`: the pipelined rollout and training step compute what the
jitted CPU backend computes on each half of the environments (pipelined_rollout.py;
the references and tolerances: tests/pipelined_reference.py)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest
from flax import nnx
from pipelined_reference import (
    assert_close,
    assert_seeds_match_alone,
    assert_training_matches,
    parts_rollout,
)
from ppo_test_network import PerModuleMLP
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.ppo import BodyGroupError, PPOConfig, new_training_state
from modular_ppo.ppo.ahead import CompileAhead
from modular_ppo.ppo.exported_step import ExportedSteps
from modular_ppo.ppo.pipelined_rollout import collect_pipelined, compile_rollout, part_sizes
from modular_ppo.ppo.pipelined_step import pipelined_train_step

BODY = "hopper-modular"
"""Falls within a few dozen steps of a random policy: episodes end by termination too."""


@pytest.fixture(scope="module")
def cpu_env():
    return make_env(load_body(BODY), EnvConfig(episode_length=7), "cpu", nthread=1)


@pytest.fixture(scope="module")
def tiny_cpu_env():
    return make_env(BodyGraph.from_mjcf(tiny_xml()), EnvConfig(episode_length=5), "cpu",
                    nthread=1)


def network(env, seed=0):
    return PerModuleMLP(env.obs_sizes, env.action_sizes, hidden=16, recurrent=True,
                        rngs=nnx.Rngs(seed))


@pytest.mark.parametrize("ahead", [False, True, "exported"],
                         ids=["jitted", "compiled-ahead", "read-back"])
def test_pipelined_rollout_is_the_cpu_backends_rollout_of_each_half(cpu_env, ahead, tmp_path):
    """Jitted, and compiled ahead (`compile_rollout`; the second case finds the first's
    programs in JAX's compile cache), for halves of 3 and 4 envs; read-back: the programs
    a second compile reads from an exported store the first wrote."""
    assert_pipelined_rollout(cpu_env, ahead, store=tmp_path if ahead == "exported" else None)


def test_a_device_share_rollout_is_the_host_halves_and_the_twins_shares(tiny_cpu_env):
    """The host's halves of 1 and 2 envs and MJX's two shares of 2, compiled ahead; the
    tiny body (cheap for MJX to compile) ends episodes by its time limit."""
    assert_pipelined_rollout(tiny_cpu_env, True, device_share=0.5, tilt=False)


def assert_pipelined_rollout(cpu_env, ahead, device_share=0.0, tilt=True, store=None):
    """`collect_pipelined` on 7 envs for 12 steps equals `parts_rollout`. store: compile
    ahead twice with an exported store there, and roll out with the second's programs."""
    net = network(cpu_env)
    graphdef, network_state = nnx.split(net)
    n_envs, length = 7, 12
    env_state = jax.vmap(cpu_env.reset)(jax.random.split(jax.random.key(3), n_envs))
    if tilt:  # envs 1 and 4 (one per half) start past the healthy angle: they terminate
        tilted = env_state.data.qpos.at[jnp.array([1, 4]), 2].set(0.6)
        env_state = env_state.replace(data=env_state.data.replace(qpos=tilted))
    recurrent = net.initialize_state(n_envs)
    programs = None
    written = {}
    for _ in range(2 if store else 1 if ahead else 0):
        compiler = CompileAhead(store and ExportedSteps(store, "key"))
        compiled, shapes = compile_rollout(cpu_env, graphdef, network_state, env_state,
                                           recurrent, length, compiler, device_share, "hopper")
        compiler.close()
        programs = compiled()
        if store:  # split, joined, and act, advance, advance_last per half size (3, 4);
            # the second compile reads them back, not rewritten
            files = {path: path.stat().st_mtime_ns for path in store.glob("*.program")}
            assert len(files) == 8 and written in ({}, files)
            written = files
    actual = collect_pipelined(cpu_env, graphdef, network_state, env_state, recurrent, length,
                               programs, device_share)
    # The reference after: with JAX 0.10.2, a program traced ahead (`CompileAhead`) after
    # a jit of another function traced the same MJX step compiled the MJX model as inputs
    # it was then not given ("compiled for 414 inputs but called with 61").
    expected = parts_rollout(
        cpu_env, graphdef, network_state, env_state, recurrent, length, device_share)
    assert_close(expected, actual)
    if ahead:
        assert (jax.tree.map(lambda x: (x.shape, x.dtype), shapes)
                == jax.tree.map(lambda x: (x.shape, x.dtype), actual))
    rollout = actual[3]
    assert rollout.done.shape == (length, n_envs)
    assert float(rollout.truncated.sum()) > 0
    if tilt:
        assert float(rollout.done.sum()) > float(rollout.truncated.sum())  # both ways to end


def test_pipelined_training_matches_the_jitted_cpu_backend(cpu_env):
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    groups, state = new_training_state([(cpu_env, network(cpu_env))], config, seed=0)
    step = pipelined_train_step(groups, config, state)
    assert_training_matches(groups, config, state, step)


def test_pipelined_training_with_a_device_share_matches_the_jitted_backends(tiny_cpu_env):
    """Half the 8 envs on MJX: the host's halves and MJX's shares of 2 envs each."""
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    groups, state = new_training_state([(tiny_cpu_env, network(tiny_cpu_env))], config,
                                       seed=0)
    step = pipelined_train_step(groups, config, state, device_share=0.5)
    assert_training_matches(groups, config, state, step, device_share=0.5)


def test_a_device_share_leaving_a_part_empty_is_refused():
    with pytest.raises(BodyGroupError, match="device-share 0.9.*every part"):
        part_sizes(8, 0.9)
    assert part_sizes(4096, 0.25) == (1536, 1536, 512, 512)
    assert part_sizes(7) == (3, 4)


def test_an_env_off_the_cpu_backend_is_refused():
    """On the tiny body: the refusal is the backend's, not the body's."""
    env = make_env(BodyGraph.from_mjcf(tiny_xml()), EnvConfig(episode_length=7), "mjx")
    config = PPOConfig(n_envs=8, rollout_length=5, n_minibatches=2)
    groups, state = new_training_state([(env, network(env))], config, seed=0)
    with pytest.raises(BodyGroupError, match="cpu-pipelined.*make_env"):
        pipelined_train_step(groups, config, state)


@pytest.mark.parametrize("device_share", [0.0, 0.5], ids=["host", "device-share"])
def test_seeds_pipelined_in_one_program_are_each_seed_pipelined_alone(tiny_cpu_env,
                                                                      device_share):
    """Two seeds' states stacked (`ppo.seeds` on the pipelined backend)."""
    config = PPOConfig(n_envs=8, rollout_length=5, n_epochs=2, n_minibatches=2,
                       iterations_per_call=2, total_steps=80)
    assert_seeds_match_alone(tiny_cpu_env, lambda seed: network(tiny_cpu_env, seed), config,
                             device_share)
