"""Actions handed to the Gymnasium, PettingZoo and JaxMARL views: the wrong type, agents,
shape, dtype or a non-finite entry end in one AgentActionError naming the agent and the
space it expects, never an error from inside numpy or JAX; a fuzz over action objects
allows only a step or that error (40 examples per view in CI, 1,000 under -m benchmark)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig
from modular_ppo.interop import (
    AgentActionError,
    GymnasiumModularEnv,
    JaxMARLEnv,
    ParallelModularEnv,
)
from modular_ppo.interop.action_checks import check_traced_actions

TINY = BodyGraph.from_mjcf(tiny_xml())
CONFIG = EnvConfig(episode_length=10_000)
FINE = {"base": np.zeros(1, np.float32), "arm": np.zeros(1, np.float32)}


@pytest.fixture(scope="module")
def gym_env():
    env = GymnasiumModularEnv(TINY, config=CONFIG)
    env.reset(seed=0)
    return env


@pytest.fixture(scope="module")
def zoo_env():
    env = ParallelModularEnv(TINY, config=CONFIG)
    env.reset(seed=0)
    return env


@pytest.fixture(scope="module")
def marl():
    env = JaxMARLEnv(TINY, config=CONFIG)
    _, state = env.reset(jax.random.PRNGKey(0))
    return env, state


@pytest.mark.parametrize("action, expected", [
    ({"base": 0.0, "arm": 0.0}, r"action of type dict is not an array of numbers; give shape "
                                r"\(2,\).*base \(1\), arm \(1\)"),
    ("0 0", "action of type str is not an array of numbers"),
    (None, "action of type NoneType"),
    ([[0.0], [0.0, 1.0]], "action of type list is not an array of numbers"),
    (np.array(["a", "b"]), "of dtype <U1 is not an array of numbers"),
    (np.array([True, False]), "of dtype bool"),
    (np.array([0.0, np.nan]), r"agent 'arm' has non-finite entries \[nan\]"),
    (np.array([1e300, 0.0]), r"agent 'base' has non-finite entries \[inf\]"),
    (np.zeros(3), r"action has shape \(3,\); give shape \(2,\)"),
], ids=["dict", "str", "none", "ragged", "strings", "bools", "nan", "overflow", "shape"])
def test_gymnasium_action(gym_env, action, expected):
    with pytest.raises(AgentActionError, match=expected):
        gym_env.step(action)
    gym_env.step(np.zeros(2))  # still usable; integers and float64 are fine too
    gym_env.step([0, 1])


@pytest.mark.parametrize("actions, expected", [
    (np.zeros(2),
     r"actions must be a dict keyed by agent \(base, arm\), got ndarray; give \{'base': shape"),
    ({"base": [0.0]}, r"missing agent\(s\) \['arm'\]"),
    ({**FINE, "tail": [0.0]}, r"unknown agent\(s\) \['tail'\]"),
    ({**FINE, "arm": "0"}, r"the action of agent 'arm' \(str\) is not an array of numbers; "
                           r"give shape \(1,\)"),
    ({**FINE, "arm": {"x": 0}}, r"agent 'arm' \(dict\)"),
    ({**FINE, "arm": np.zeros((1, 1))}, r"agent 'arm' has shape \(1, 1\); give shape \(1,\)"),
    ({**FINE, "arm": [float("inf")]}, r"agent 'arm' has non-finite entries \[inf\]"),
    ({**FINE, "arm": np.array([1j])}, r"agent 'arm' \(ndarray\) of dtype complex128"),
], ids=["array", "missing", "unknown", "str", "dict", "shape", "inf", "complex"])
def test_pettingzoo_actions(zoo_env, actions, expected):
    with pytest.raises(AgentActionError, match=expected):
        zoo_env.step(actions)
    zoo_env.step({"base": [0], "arm": np.zeros(1)})


@pytest.mark.parametrize("actions, expected", [
    ([0.0, 0.0], r"actions must be a dict keyed by agent \(base, arm\), got list"),
    ({**FINE, "arm": "0"}, r"agent 'arm' is str of dtype None; give shape \(1,\)"),
    ({**FINE, "arm": jnp.zeros(1, bool)}, "agent 'arm' is ArrayImpl of dtype bool"),
    ({**FINE, "arm": jnp.zeros((2,))}, r"agent 'arm' has shape \(2,\); give shape \(1,\)"),
], ids=["list", "str", "bool", "shape"])
def test_jaxmarl_actions_at_trace_time(marl, actions, expected):
    env, state = marl
    with pytest.raises(AgentActionError, match=expected):
        env.step(jax.random.PRNGKey(1), state, actions)


FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

entries = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-10**20, 10**20),
                    st.booleans(), st.text(max_size=2), st.none())
arrays = st.one_of(
    st.lists(entries, max_size=3),
    st.lists(st.floats(-1, 1, width=32), min_size=0, max_size=3).map(np.asarray),
    st.sampled_from([np.zeros(1), np.zeros(1, np.int64), np.zeros((1, 1)), np.zeros(1, bool),
                     np.array([np.nan]), np.array(["a"]), np.float32(0)]),
    entries,
)
agent_dicts = st.dictionaries(st.sampled_from(["base", "arm", "tail", ""]), arrays, max_size=3)
anything = st.one_of(agent_dicts, arrays)


def _step_or_refuse(step, action) -> None:
    try:
        step(action)
    except AgentActionError as error:
        assert "\n" not in str(error)


@settings(max_examples=40, **FUZZ)
@given(action=anything)
def test_generated_gymnasium_actions(gym_env, action):
    _step_or_refuse(gym_env.step, action)


@settings(max_examples=40, **FUZZ)
@given(actions=st.one_of(agent_dicts, st.fixed_dictionaries({"base": arrays, "arm": arrays})))
def test_generated_pettingzoo_actions(zoo_env, actions):
    _step_or_refuse(zoo_env.step, actions)


@settings(max_examples=40, **FUZZ)
@given(actions=st.one_of(agent_dicts, st.fixed_dictionaries({"base": arrays, "arm": arrays})))
def test_generated_jaxmarl_actions_are_checked_at_trace_time(marl, actions):
    """The trace-time check alone: each passing shape and dtype would compile a step."""
    env, _ = marl
    _step_or_refuse(lambda a: check_traced_actions(a, env.action_spaces), actions)


@pytest.mark.benchmark
@settings(max_examples=1000, **FUZZ)
@given(action=anything, actions=st.one_of(
    agent_dicts, st.fixed_dictionaries({"base": arrays, "arm": arrays})))
def test_generated_actions_many(gym_env, zoo_env, marl, action, actions):
    _step_or_refuse(gym_env.step, action)
    _step_or_refuse(zoo_env.step, actions)
    _step_or_refuse(lambda a: check_traced_actions(a, marl[0].action_spaces), actions)
