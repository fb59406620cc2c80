"""Brax's own observation on the same joint state as ours (needs Brax: `pip install -e
'.[bench]'`; run with `pytest -m benchmark`): `brax_observation` is the Brax env's
`_get_obs` for the ant, halfcheetah, hopper and walker2d."""

from __future__ import annotations

import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from mujoco import mjx

from modular_ppo.body import load_body
from modular_ppo.interop.mabrax import MABRAX_TASKS, brax_observation


@pytest.mark.benchmark
@pytest.mark.parametrize("task", ["ant_4x2", "halfcheetah_6x1", "hopper_3x1", "walker2d_2x3"])
def test_brax_observation_is_the_brax_envs(task):
    from brax import envs

    body = load_body(*MABRAX_TASKS[task])
    model = body.model
    rng = np.random.default_rng(0)
    data = mujoco.MjData(model)
    data.qpos[:] = body.init_qpos + rng.uniform(-0.1, 0.1, model.nq)
    data.qvel[:] = rng.normal(0.0, 3.0, model.nv)
    mujoco.mj_forward(model, data)
    ours = brax_observation(task, body)(mjx.put_data(model, data, impl="jax"))
    env = envs.create(task.split("_")[0], backend="generalized")
    # The same configuration: joint values measured from each model's own qpos0 (the
    # hopper's and walker's rootz have ref=1.25 here, none in Brax's files).
    q = jnp.asarray(data.qpos - model.qpos0) + jnp.asarray(env.sys.mj_model.qpos0)
    theirs = env._get_obs(env.pipeline_init(q, jnp.asarray(data.qvel)))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)
