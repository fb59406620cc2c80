"""MJX on the accelerator against MuJoCo's C simulator on ant-modular, with the body's own
physics settings (Newton, 1 iteration, 4 line-search iterations): one control step (frame
skip substeps) from each state of a C trajectory with random controls, the same state
(positions, velocities, solver warm start) and controls on both.

Tolerance: matmuls at 'highest' precision (TPU's default does them in bf16 passes, and
contacts amplify that). MJX is float32 and C float64: where the contact set stays the same
through the step both agree to ~1e-7 in qpos and ~1e-6 in qvel (measured on CPU); the check
allows 1e-4 and 1e-3. Where a contact starts or ends inside the step, float32 can place it a
substep apart and the step differs by up to ~1e-2 / ~1 (measured): those steps count only in
the median over all steps, held to the same tolerance.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from mujoco import mjx

from modular_ppo.body import load_body
from modular_ppo.env.physics import put_model

CONTROL_STEPS = 100
QPOS_TOL, QVEL_TOL = 1e-4, 1e-3


def _c_trajectory(body, controls):
    """The C simulator's (qpos, qvel, qacc_warmstart) before and (qpos, qvel) after each
    control step, and whether the number of contacts stayed the same through it."""
    model = body.model
    data = mujoco.MjData(model)
    data.qpos[:] = body.init_qpos
    mujoco.mj_forward(model, data)
    starts, ends, steady = [], [], []
    for ctrl in controls:
        data.ctrl[:] = ctrl
        starts.append((data.qpos.copy(), data.qvel.copy(), data.qacc_warmstart.copy()))
        contacts = {data.ncon}
        for _ in range(body.frame_skip):
            mujoco.mj_step(model, data)
            contacts.add(data.ncon)
        ends.append((data.qpos.copy(), data.qvel.copy()))
        steady.append((len(contacts) == 1, data.ncon))
    return starts, ends, steady


@pytest.fixture(scope="module")
def errors():
    body = load_body("ant-modular")
    controls = np.random.default_rng(0).uniform(-1, 1, (CONTROL_STEPS, body.model.nu))
    starts, ends, steady = _c_trajectory(body, controls)
    model, blank = put_model(body)

    @jax.jit
    @jax.vmap
    def control_step(qpos, qvel, warmstart, ctrl):
        data = blank.replace(qpos=qpos, qvel=qvel, qacc_warmstart=warmstart, ctrl=ctrl)
        return jax.lax.fori_loop(0, body.frame_skip, lambda _, d: mjx.step(model, d), data)

    start = [jnp.asarray(np.stack([s[i] for s in starts]), jnp.float32) for i in range(3)]
    with jax.default_matmul_precision("highest"):
        moved = control_step(*start, jnp.asarray(controls, jnp.float32))
    qpos_error = np.abs(np.asarray(moved.qpos) - np.stack([e[0] for e in ends])).max(axis=1)
    qvel_error = np.abs(np.asarray(moved.qvel) - np.stack([e[1] for e in ends])).max(axis=1)
    steady_steps, contacts = (np.array(column) for column in zip(*steady))
    return qpos_error, qvel_error, steady_steps, contacts


def test_mjx_agrees_with_c_where_the_contacts_stay(errors):
    qpos_error, qvel_error, steady, contacts = errors
    assert steady.sum() >= CONTROL_STEPS // 4 and (contacts[steady] > 0).any(), (
        "the trajectory should have steady steps, some of them in contact")
    assert qpos_error[steady].max() < QPOS_TOL, qpos_error[steady]
    assert qvel_error[steady].max() < QVEL_TOL, qvel_error[steady]


def test_mjx_agrees_with_c_on_the_median_step(errors):
    qpos_error, qvel_error, _, _ = errors
    assert np.median(qpos_error) < QPOS_TOL and np.median(qvel_error) < QVEL_TOL
