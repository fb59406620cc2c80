"""The production path, jit(vmap(step)), traced: batched shapes, and a State that a
lax.scan can carry (step returns exactly the structure, shapes and dtypes it takes)."""

import jax
import jax.numpy as jnp

from modular_ppo.env import EnvConfig, make_env

BATCH = 3


def test_vmapped_reset_and_step_keep_one_state_structure(body):
    env = make_env(body("ant-modular"), EnvConfig(neighbor_hops=2, previous_action=True))
    keys = jax.ShapeDtypeStruct((BATCH, 2), jnp.uint32)
    first = jax.eval_shape(jax.vmap(env.reset), keys)
    actions = {
        m: jax.ShapeDtypeStruct((BATCH, k), jnp.float32) for m, k in env.action_sizes.items()
    }
    after = jax.eval_shape(jax.vmap(env.step), first, actions)

    assert jax.tree.structure(after) == jax.tree.structure(first)
    for a, b in zip(jax.tree.leaves(after), jax.tree.leaves(first)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
    assert {m: o.shape for m, o in after.obs.items()} == {
        m: (BATCH, size) for m, size in env.obs_sizes.items()
    }
    assert all(r.shape == (BATCH,) for r in after.reward.values())
    assert after.done.shape == (BATCH,) and after.done.dtype == jnp.float32
    assert set(after.metrics) == {
        "forward_velocity", "invalid_action", "reward/forward_velocity", "reward/healthy",
        "reward/ctrl_cost",
    }
    assert set(after.info["last_episode"]) == {
        "team_return", "length", "forward_velocity", *(f"return/{m}" for m in env.obs_sizes)
    }
