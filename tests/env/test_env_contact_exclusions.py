"""The contact exclusions a bundled body declares (`<contact><exclude>`, docs/physics.md) are
exact for its task: the pairs they remove never touch in seeded random rollouts of the task,
and the body steps as the same file without them does, on MuJoCo's C simulator (the CPU
backend, with the task's episodes and resets) and on MJX. `collision_pairs` is the list MJX
itself tests."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from env_rollouts import FAST_COMPILE
from mujoco.mjx._src.collision_driver import geom_pairs

from modular_ppo.body import BodyGraph, bundled_names, load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.env.collisions import (
    collision_pairs, excluded_pairs, touching_pairs, without_exclusions)
from modular_ppo.env.physics import Physics

EXCLUDING = [name for name in bundled_names() if excluded_pairs(load_body(name))]


def test_collision_pairs_are_the_pairs_mjx_tests():
    for name in bundled_names():
        model = load_body(name).model
        assert collision_pairs(model) == [(g1, g2) for g1, g2, _ in geom_pairs(model)], name
        assert collision_pairs(without_exclusions(load_body(name)).model) == [
            (g1, g2) for g1, g2, _ in geom_pairs(without_exclusions(load_body(name)).model)]


def test_the_walker_excludes_its_torso_from_the_floor():
    assert EXCLUDING == ["walker2d-modular"]
    walker = load_body("walker2d-modular")
    assert excluded_pairs(walker) == ["floor/torso_geom"]
    assert len(collision_pairs(walker.model)) == 2
    assert len(collision_pairs(without_exclusions(walker).model)) == 3


@pytest.mark.parametrize("name", EXCLUDING)
def test_excluded_pairs_never_touch_in_the_task(name):
    body = load_body(name)
    full = without_exclusions(body)
    excluded = set(excluded_pairs(body))
    for controls in ("uniform", "held"):
        touched = touching_pairs(full, 1500, seed=3, controls=controls)
        assert touched and not excluded & set(touched), (name, controls, touched)
    # The rollouts can reach the pair: without termination a fallen body touches it.
    assert excluded & set(touching_pairs(full, 1500, seed=3, controls="held", terminate=False))


def _cpu_rollout(body: BodyGraph, steps: int):
    env = make_env(body, EnvConfig(episode_length=200), "cpu", nthread=1)

    def one(state, key):
        action = {m: jax.random.uniform(jax.random.fold_in(key, i), (n,), minval=-1.0, maxval=1.0)
                  for i, (m, n) in enumerate(env.action_sizes.items())}
        after = jax.vmap(env.step)(state, jax.tree.map(lambda a: jnp.stack([a, -a]), action))
        return after, (after.data.qpos, after.reward, after.done)

    def run(key):
        start = jax.vmap(env.reset)(jax.random.split(key, 2))
        return jax.lax.scan(one, start, jax.random.split(key, steps))[1]

    return jax.device_get(jax.jit(run)(jax.random.key(11)))


@pytest.mark.parametrize("name", EXCLUDING)
def test_the_cpu_backend_steps_as_without_the_exclusions(name):
    body = load_body(name)
    excluded, full = _cpu_rollout(body, 400), _cpu_rollout(without_exclusions(body), 400)
    assert excluded[2].sum() > 2, "random actions should end several episodes"
    for a, b in zip(jax.tree.leaves(excluded), jax.tree.leaves(full)):
        np.testing.assert_array_equal(a, b)


def _mjx_qpos(body: BodyGraph, qpos0: np.ndarray, ctrls: np.ndarray) -> np.ndarray:
    physics = Physics(body, contact_forces=False)
    data = physics.start(jnp.asarray(qpos0, jnp.float32), jnp.zeros(body.model.nv))
    step = jax.jit(physics.step).lower(data, ctrls[0]).compile(compiler_options=FAST_COMPILE)
    out = []
    for ctrl in ctrls:
        data = step(data, ctrl)
        out.append(np.asarray(data.qpos))
    return np.stack(out)


@pytest.mark.parametrize("name", EXCLUDING)
def test_mjx_steps_as_without_the_exclusions(name):
    body = load_body(name)
    rng = np.random.default_rng(5)
    qpos0 = body.init_qpos + rng.uniform(-0.005, 0.005, body.model.nq)
    ctrls = rng.uniform(-1, 1, (40, body.model.nu)).astype(np.float32)
    excluded = _mjx_qpos(body, qpos0, ctrls)
    full = _mjx_qpos(without_exclusions(body), qpos0, ctrls)
    assert np.isfinite(excluded).all()
    np.testing.assert_allclose(excluded, full, atol=1e-5)


def test_an_mjcf_with_exclusions_loads_partitions_and_drops_limbs():
    walker = load_body("walker2d-modular")
    assert walker.model.nexclude == 1 and len(walker.modules) == 7
    assert "<exclude" in walker.xml and BodyGraph.from_mjcf(walker.xml).model.nexclude == 1
    without_leg = load_body("walker2d-modular-without-foot_left")
    assert without_leg.model.nexclude == 1
    assert mujoco.mj_name2id(without_leg.model, mujoco.mjtObj.mjOBJ_BODY, "torso") > 0
