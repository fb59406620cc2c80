"""`env.device_twin`: a CPU-backend env stepped by MJX on `CpuData` states is the MJX env
(what `--device-share` steps on the accelerator; docs/backends.md)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from pipelined_reference import assert_close

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, EnvError, make_env
from modular_ppo.env.cpu_simulator import CpuData
from modular_ppo.env.device_twin import device_twin


def test_the_device_twin_steps_as_the_mjx_env():
    """hopper-modular from the same starts under the same random actions for 30 steps,
    several episodes ending (episode length 10) and the tilted env terminating."""
    body, config = load_body("hopper-modular"), EnvConfig(episode_length=10)
    twin, mjx_env = device_twin(make_env(body, config, "cpu", nthread=1)), make_env(body, config)
    keys = jax.random.split(jax.random.key(0), 4)
    states = [jax.vmap(env.reset)(keys) for env in (twin, mjx_env)]
    tilted = states[0].data.qpos.at[1, 2].set(0.6)
    states[0] = states[0].replace(data=states[0].data.replace(qpos=tilted))
    states[1] = states[1].replace(data=states[1].data.replace(qpos=tilted))
    steps = [jax.jit(jax.vmap(env.step)) for env in (twin, mjx_env)]
    dones = 0.0
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
    assert dones >= 8  # the time limit at steps 10, 20, 30, and the tilted env's fall


def test_a_device_twin_of_an_env_off_the_cpu_backend_is_refused():
    with pytest.raises(EnvError, match="CPU-backend env"):
        device_twin(make_env(load_body("hopper-modular"), EnvConfig(episode_length=10)))
