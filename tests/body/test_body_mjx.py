"""Every bundled body loads in MJX and steps without NaN, matching MuJoCo's C simulator
step for step where the two solvers converge alike.

Each body costs one trace and one XLA compile of a whole rollout, about 10 s of CPU. To keep
that down: the generated sizes beyond the first share their template, so one size per
family is stepped here (`test_body_library.py` puts every size through `mjx.put_model` and a
C rollout); XLA's backend optimization is off, which halves compile time while run time
does not matter for 20 control steps; and two bodies compile at once (XLA compiles without
holding the GIL), so both cores of a CI runner work.

Where contacts meet an unconverged solver (the ant's and the centipedes' 1 Newton
iteration) or a gait is chaotic (the humanoid falling), float32 MJX and float64 C part
after the first steps; there the accuracy claim is statistical: a fixed policy's returns
and episode lengths over many episodes (tests/perf/test_perf_sim_to_sim.py).
"""

from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from body_families import one_size_per_family
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
STEP_FOR_STEP = {
    "halfcheetah-modular": 3e-2,
    "hopper-modular": 1e-3,
    "walker2d-modular": 1e-3,
    "swimmer-4": 1e-3,
}
"""Bodies whose MJX rollout stays with MuJoCo's over all CONTROL_STEPS: the largest qpos
difference allowed. Measured: halfcheetah 3e-3, hopper 3e-5, walker2d 9e-5, swimmer 1.3e-5
(the others part: ant 0.43, centipede-4 0.15, humanoid 0.12)."""
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


def test_one_size_of_every_bundled_family_is_stepped():
    assert sorted(STEPPED) == sorted(one_size_per_family())
    assert set(STEP_FOR_STEP) < set(STEPPED)


@pytest.mark.parametrize("name", STEPPED)
def test_mjx_steps_the_body_like_mujoco(name, mjx_qpos):
    qpos = mjx_qpos[name]
    assert np.isfinite(qpos).all()
    reference = c_rollout(name, random_ctrls(name))
    np.testing.assert_allclose(qpos[0], reference[0], atol=2e-3)
    if name in STEP_FOR_STEP:
        np.testing.assert_allclose(qpos, reference, rtol=0, atol=STEP_FOR_STEP[name])


def test_bodies_that_part_from_mujoco_do_so_after_the_first_steps(mjx_qpos):
    """The others agree for the first steps (before contacts build up), not after:
    documents why their claim is statistical."""
    for name in sorted(set(STEPPED) - set(STEP_FOR_STEP)):
        difference = np.abs(mjx_qpos[name] - c_rollout(name, random_ctrls(name))).max(axis=1)
        assert difference[:3].max() < 2e-3 and difference.max() > 1e-2, (name, difference)
