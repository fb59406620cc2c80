"""Raw env-steps/s of jit(vmap(env.step)) on the ant, against raw vmapped mjx.step with the
same frame skip (run on purpose: pytest tests/env -m benchmark -s).

DESIGN.md: raw vmapped mjx.step with 5 substeps reaches ~12-15k env-steps/s on the 2-core
CPU machines; the env adds observations, rewards and auto-reset on top of it. Rounds of
env and raw calls alternate and the best round of each counts, so load from other
processes hits both alike.
"""

import time

import jax
import jax.numpy as jnp
import pytest
from mujoco import mjx

from modular_ppo.env import EnvConfig, make_env

N_ENVS = 128
ROUNDS = 5
CALLS_PER_ROUND = 20


def _best_rate(function, state, *args) -> tuple[float, object]:
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS_PER_ROUND):
            state = function(state, *args)
        jax.block_until_ready(state)
        best = min(best, time.perf_counter() - start)
    return N_ENVS * CALLS_PER_ROUND / best, state


@pytest.mark.benchmark
def test_ant_env_steps_per_second_close_to_raw_mjx(body):
    ant = body("ant-modular")
    env = make_env(ant, EnvConfig())
    model = env.mjx_model

    def raw_step(data, ctrl):
        data = data.replace(ctrl=ctrl)
        return jax.lax.fori_loop(0, ant.frame_skip, lambda _, d: mjx.step(model, d), data)

    step, raw = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(raw_step))
    state = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.PRNGKey(0), N_ENVS))
    actions = {m: jnp.zeros((N_ENVS, k)) for m, k in env.action_sizes.items()}
    ctrl = jnp.zeros((N_ENVS, ant.model.nu))
    state = jax.block_until_ready(step(state, actions))  # compile
    data = jax.block_until_ready(raw(state.data, ctrl))

    env_rate, _ = _best_rate(step, state, actions)
    raw_rate, _ = _best_rate(raw, data, ctrl)
    print(f"\nant-modular, {N_ENVS} envs: env {env_rate:,.0f} env-steps/s, "
          f"raw mjx.step x{ant.frame_skip} {raw_rate:,.0f} env-steps/s "
          f"({env_rate / raw_rate:.0%})")
    assert env_rate > 0.75 * raw_rate
