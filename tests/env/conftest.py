"""Session-wide fixtures: one compiled Runner per (body, config), shared by all env tests."""

from __future__ import annotations

import functools

import mujoco
import numpy as np
import pytest
from env_rollouts import Runner, config_for
from mujoco import mjx

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import EnvConfig, make_env


@functools.cache
def _body(name: str) -> BodyGraph:
    return load_body(name)


@functools.cache
def _runner(name: str, config: EnvConfig, backend: str) -> Runner:
    return Runner(make_env(_body(name), config, backend))


@pytest.fixture(scope="session")
def runner():
    """runner(body_name, config=config_for(body_name), backend="mjx") -> the session's
    compiled Runner."""
    return lambda name, config=None, backend="mjx": _runner(
        name, config or config_for(name), backend
    )


@pytest.fixture(scope="session")
def body():
    """body(name) -> the session's BodyGraph for a bundled body."""
    return _body


def _mujoco_state(body: BodyGraph, seed: int) -> mujoco.MjData:
    rng = np.random.default_rng(seed)
    model = body.model
    data = mujoco.MjData(model)
    data.qpos[:] = model.qpos0 + rng.uniform(-0.3, 0.3, model.nq)
    data.qvel[:] = rng.normal(0.0, 1.0, model.nv)
    data.ctrl[:] = rng.uniform(-1.0, 1.0, model.nu)
    mujoco.mj_forward(model, data)
    mujoco.mj_rnePostConstraint(model, data)
    return data


@pytest.fixture(scope="session")
def mujoco_state():
    """mujoco_state(body, seed) -> a random state computed by MuJoCo's C simulator, with
    cfrc_ext filled (the reference for feature tests)."""
    return _mujoco_state


@pytest.fixture(scope="session")
def to_mjx():
    """to_mjx(body, MjData) -> the same state as an mjx.Data."""
    return lambda body, data: mjx.put_data(body.model, data, impl="jax")
