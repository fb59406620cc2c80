"""Bad input through the adapters: unknown bodies and partitions, MABrax names with a
partition, actions with a missing agent or a wrong shape: one clear error each."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph, BodyGraphError
from modular_ppo.env import EnvConfig
from modular_ppo.interop import (
    AgentActionError,
    GymnasiumModularEnv,
    InteropError,
    JaxMARLEnv,
    ParallelModularEnv,
)

TINY = BodyGraph.from_mjcf(tiny_xml())


@pytest.mark.parametrize("adapter", [JaxMARLEnv, ParallelModularEnv, GymnasiumModularEnv])
def test_unknown_body_names_near_ones(adapter):
    with pytest.raises(BodyGraphError,
                       match="unknown body 'ant-modulr'.*Did you mean: ant-modular"):
        adapter("ant-modulr")


@pytest.mark.parametrize("adapter", [JaxMARLEnv, ParallelModularEnv, GymnasiumModularEnv])
def test_unknown_partition_lists_the_defined_ones(adapter):
    with pytest.raises(BodyGraphError, match=r"no partition '3x3'.*4x2"):
        adapter("ant-modular", partition="3x3")


def test_partition_with_a_mabrax_name_or_a_body_graph():
    with pytest.raises(InteropError, match="MABrax task 'ant_4x2' has its own partition"):
        JaxMARLEnv("ant_4x2", partition="2x4")
    with pytest.raises(InteropError, match="already partitioned"):
        ParallelModularEnv(TINY, partition="subtrees")


def test_jaxmarl_actions_missing_agent_or_wrong_shape_fail_at_trace_time():
    env = JaxMARLEnv(TINY, config=EnvConfig(episode_length=5))
    _, state = env.reset(jax.random.PRNGKey(0))
    key = jax.random.PRNGKey(1)
    with pytest.raises(AgentActionError,
                       match=r"missing agent\(s\) \['arm'\].*'arm': shape \(1,\)"):
        env.step(key, state, {"base": np.zeros(1)})
    with pytest.raises(AgentActionError, match=r"agent 'arm' has shape \(2,\).*give shape \(1,\)"):
        env.step(key, state, {"base": np.zeros(1), "arm": np.zeros(2)})
    with pytest.raises(AgentActionError, match=r"unknown agent\(s\) \['tail'\]"):
        env.step(key, state, {"base": np.zeros(1), "arm": np.zeros(1), "tail": np.zeros(1)})


def test_pettingzoo_actions_missing_agent_or_wrong_shape():
    env = ParallelModularEnv(TINY, config=EnvConfig(episode_length=5))
    env.reset(seed=0)
    with pytest.raises(AgentActionError, match=r"missing agent\(s\) \['base'\]"):
        env.step({"arm": np.zeros(1, np.float32)})
    with pytest.raises(AgentActionError, match=r"agent 'base' has shape \(\);.*shape \(1,\)"):
        env.step({"base": np.float32(0), "arm": np.zeros(1, np.float32)})
    env.step({"base": np.zeros(1, np.float32), "arm": np.zeros(1, np.float32)})  # still usable


def test_pettingzoo_step_after_the_episode_and_bad_render_mode():
    env = ParallelModularEnv(TINY, config=EnvConfig(episode_length=1))
    env.reset(seed=0)
    env.step({"base": np.zeros(1, np.float32), "arm": np.zeros(1, np.float32)})
    with pytest.raises(InteropError, match=r"after the episode ended.*call reset\(\)"):
        env.step({"base": np.zeros(1, np.float32), "arm": np.zeros(1, np.float32)})
    with pytest.raises(InteropError, match="render_mode='human'"):
        ParallelModularEnv(TINY, render_mode="human")


def test_gymnasium_action_of_wrong_shape_names_the_order():
    env = GymnasiumModularEnv(TINY, config=EnvConfig(episode_length=5))
    env.reset(seed=0)
    with pytest.raises(AgentActionError,
                       match=r"shape \(3,\); give shape \(2,\).*base \(1\), arm \(1\)"):
        env.step(np.zeros(3, np.float32))
