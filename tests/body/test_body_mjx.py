"""Every bundled body loads in MJX and steps without NaN, matching MuJoCo's C simulator.

Each body costs one trace and one XLA compile of a whole rollout, about 10 s of CPU. To keep
that down: the generated sizes beyond the first share their template, so one size per
family is stepped here (`test_body_library.py` puts every size through `mjx.put_model` and a
C rollout); XLA's backend optimisation is off, which halves compile time while run time
does not matter for 20 control steps; and two bodies compile at once (XLA compiles without
holding the GIL), so both cores of a CI runner work.
"""

from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from mujoco import mjx

from modular_ppo.body import load_body

STEPPED = [
    "ant-modular",
    "halfcheetah-modular",
    "hopper-modular",
    "humanoid-modular",
    "walker2d-modular",
    "centipede-4",
    "swimmer-4",
]
CONTROL_STEPS = 20
FAST_COMPILE = {"xla_backend_optimization_level": 0}


def mjx_rollout(name: str, ctrls: np.ndarray) -> np.ndarray:
    """[control steps, nq] qpos after each control step, from the body's rest pose."""
    body = load_body(name)
    model = mjx.put_model(body.model)
    data = mjx.make_data(model).replace(qpos=jnp.asarray(body.init_qpos, jnp.float32))

    def control_step(d: mjx.Data, ctrl: jax.Array) -> tuple[mjx.Data, jax.Array]:
        d = d.replace(ctrl=ctrl)
        d = jax.lax.fori_loop(0, body.frame_skip, lambda _, x: mjx.step(model, x), d)
        return d, d.qpos

    run = jax.jit(lambda d, c: jax.lax.scan(control_step, d, c)[1], compiler_options=FAST_COMPILE)
    return np.asarray(run(data, jnp.asarray(ctrls, jnp.float32)))


def c_rollout(name: str, ctrls: np.ndarray) -> np.ndarray:
    body = load_body(name)
    data = mujoco.MjData(body.model)
    data.qpos[:] = body.init_qpos
    qpos = []
    for ctrl in ctrls:
        data.ctrl[:] = ctrl
        mujoco.mj_step(body.model, data, nstep=body.frame_skip)
        qpos.append(data.qpos.copy())
    return np.array(qpos)


def random_ctrls(name: str) -> np.ndarray:
    nu = load_body(name).model.nu
    return np.random.default_rng(0).uniform(-1, 1, (CONTROL_STEPS, nu))


@pytest.fixture(scope="module")
def mjx_qpos() -> dict[str, np.ndarray]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {name: pool.submit(mjx_rollout, name, random_ctrls(name)) for name in STEPPED}
        return {name: run.result() for name, run in runs.items()}


@pytest.mark.parametrize("name", STEPPED)
def test_mjx_steps_the_body_like_mujoco(name, mjx_qpos):
    qpos = mjx_qpos[name]
    assert np.isfinite(qpos).all()
    reference = c_rollout(name, random_ctrls(name))
    np.testing.assert_allclose(qpos[0], reference[0], atol=2e-3)
    assert np.abs(qpos - reference).max() < 0.5, "no blow-up against MuJoCo over the rollout"
