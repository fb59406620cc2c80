"""`env.device_twin`: a CPU-backend env stepped by MJX on `CpuData` states is the MJX env
(what `--device-share` steps on the accelerator; docs/backends.md)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from pipelined_reference import assert_close

from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import EnvConfig, EnvError, make_env
from modular_ppo.env.cpu_simulator import CpuData
from modular_ppo.env.device_twin import device_twin


FOOT = '<geom name="foot" type="sphere" size="0.1" pos="0 0 -0.45"/>'
"""A foot pressed into the floor: a contact in every state, so the solver (and the warm
start a state carries to it) shapes every step; cheap for MJX to compile."""


def test_the_device_twin_steps_as_the_mjx_env():
    """From the same starts under the same random actions for 30 steps, episodes of 10."""
    xml = tiny_xml(world='<geom name="floor" type="plane" size="5 5 0.1"/>', base=FOOT)
    body, config = BodyGraph.from_mjcf(xml), EnvConfig(episode_length=10)
    twin, mjx_env = device_twin(make_env(body, config, "cpu", nthread=1)), make_env(body, config)
    keys = jax.random.split(jax.random.key(0), 4)
    # Jitted as the steps are: some of an eager reset's arrays are not committed to the
    # device as a step's outputs are, and each step would compile a second time for those.
    states = [jax.jit(jax.vmap(env.reset))(keys) for env in (twin, mjx_env)]
    steps = [jax.jit(jax.vmap(env.step)) for env in (twin, mjx_env)]
    dones = warm_start = 0.0
    for t in range(30):
        action = {m: jax.random.uniform(jax.random.key(t), (4, n), minval=-1, maxval=1)
                  for m, n in twin.action_sizes.items()}
        states = [step(state, action) for step, state in zip(steps, states)]
        ours, theirs = states
        assert isinstance(ours.data, CpuData)
        for name in ("qpos", "qvel", "qacc_warmstart", "xpos", "cvel"):
            np.testing.assert_allclose(getattr(ours.data, name), getattr(theirs.data, name),
                                       rtol=1e-5, atol=1e-5, err_msg=f"{name} at step {t}")
        assert_close(theirs.replace(data=None), ours.replace(data=None))
        dones += float(ours.done.sum())
        warm_start = max(warm_start, float(np.abs(ours.data.qacc_warmstart).max()))
    assert dones == 12  # the time limit at steps 10, 20 and 30
    assert warm_start > 0  # the solver ran, and its warm start was carried


def test_a_device_twin_of_an_env_off_the_cpu_backend_is_refused():
    with pytest.raises(EnvError, match="CPU-backend env"):
        device_twin(make_env(load_body("hopper-modular"), EnvConfig(episode_length=10)))
