"""Contact forces on the CPU backend: MuJoCo's cfrc_ext of the state after the step, as
`mj_forward` + `mj_rnePostConstraint` give it, in observations and the contact cost."""

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env


def test_cpu_backend_contact_forces_are_mujocos():
    body = load_body("humanoid-modular")  # Humanoid-v5's task has a contact cost
    env = make_env(body, EnvConfig(contact_forces=True), "cpu")
    assert env.task.needs_contact_forces
    state = env.reset(jax.random.PRNGKey(0))
    zero = {m: jnp.zeros(n) for m, n in env.action_sizes.items()}
    step = jax.jit(env.step)
    model, data = body.model, mujoco.MjData(body.model)
    for _ in range(10):
        state = step(state, zero)
        after = jax.device_get(state.data)
        data.qpos[:], data.qvel[:], data.qacc_warmstart[:] = after.qpos, after.qvel, after.qacc_warmstart
        data.ctrl[:] = after.ctrl
        mujoco.mj_forward(model, data)
        mujoco.mj_rnePostConstraint(model, data)
        np.testing.assert_allclose(after.cfrc_ext, data.cfrc_ext, rtol=1e-3, atol=1e-2)
    assert np.abs(after.cfrc_ext).sum() > 100, "the feet stand on the floor"
    contact = 5e-7 * np.sum(np.square(data.cfrc_ext))
    np.testing.assert_allclose(-float(state.metrics["reward/contact_cost"]), min(contact, 10.0),
                               rtol=1e-3)
