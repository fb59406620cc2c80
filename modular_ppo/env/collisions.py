"""Which geom pairs a body's simulators test for contact, which of them ever touch in random
rollouts, and the body without its contact exclusions (per-body physics settings,
docs/physics.md).

MJX tests every candidate pair on every physics step, touching or not (its cost grows with
the number of pairs), where MuJoCo's C simulator first culls them by bounding boxes. A pair
that never touches in the body's task can be declared in its MJCF with
`<contact><exclude body1=... body2=.../>` (which removes every geom pair of the two
bodies); `excluded_pairs` lists the pairs a body's exclusions remove, `touching_pairs`
finds the pairs that touch.
"""

from __future__ import annotations

import collections
import itertools
import types
from collections.abc import Callable
from typing import Literal

import jax
import jax.numpy as jnp
import mujoco
import numpy as np

from modular_ppo.body import BodyGraph
from modular_ppo.env.modular_env import start_pose
from modular_ppo.env.tasks import healthy_check

Pair = tuple[int, int]
"""Two geom ids, the lower geom type first (as MJX orders them)."""

Controls = Literal["uniform", "held"]
"""Random controls of a rollout: "uniform", a fresh U(-1, 1) per actuator each control step;
"held", -1 or +1 per actuator held for 2 to 19 control steps (large, sustained motions:
flips and falls that uniform noise rarely reaches)."""


def collision_pairs(model: mujoco.MjModel) -> list[Pair]:
    """The geom pairs MJX tests for contact at every step (its `geom_pairs`): the model's
    explicit `<pair>`s, then every pair of geoms whose contype / conaffinity share a bit,
    on bodies that are not welded together, not parent and child (unless the filterparent
    flag is disabled) and not excluded by `<contact><exclude>`; plane-plane and
    plane-hfield pairs left out."""
    pairs = [_ordered(model, int(a), int(b)) for a, b in zip(model.pair_geom1, model.pair_geom2)]
    excluded = set(int(s) for s in model.exclude_signature)
    filter_parent = not model.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_FILTERPARENT
    weld, parent = model.body_weldid, model.body_parentid
    colliding = [
        [g for g in range(model.body_geomadr[b], model.body_geomadr[b] + model.body_geomnum[b])
         if model.geom_contype[g] | model.geom_conaffinity[g]]
        for b in range(model.nbody)
    ]
    for b1, b2 in itertools.combinations_with_replacement(range(model.nbody), 2):
        if not colliding[b1] or not colliding[b2] or (b1 << 16) + b2 in excluded:
            continue
        w1, w2 = weld[b1], weld[b2]
        if w1 == w2 or (filter_parent and w1 and w2
                        and (w1 == weld[parent[w2]] or w2 == weld[parent[w1]])):
            continue
        for g1, g2 in itertools.product(colliding[b1], colliding[b2]):
            pair = _ordered(model, g1, g2)
            if _may_touch(model, *pair) and pair not in pairs:
                pairs.append(pair)
    return pairs


def _ordered(model: mujoco.MjModel, g1: int, g2: int) -> Pair:
    return (g2, g1) if model.geom_type[g1] > model.geom_type[g2] else (g1, g2)


def _may_touch(model: mujoco.MjModel, g1: int, g2: int) -> bool:
    plane, hfield = mujoco.mjtGeom.mjGEOM_PLANE, mujoco.mjtGeom.mjGEOM_HFIELD
    if model.geom_type[g1] == plane and model.geom_type[g2] in (plane, hfield):
        return False
    return bool(model.geom_contype[g1] & model.geom_conaffinity[g2]
                or model.geom_contype[g2] & model.geom_conaffinity[g1])


def pair_label(model: mujoco.MjModel, pair: Pair) -> str:
    """"geom1/geom2" by name (an unnamed geom as "<body name>#<geom id>")."""
    return "/".join(_geom_name(model, g) for g in pair)


def _geom_name(model: mujoco.MjModel, geom: int) -> str:
    name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, geom)
    if name:
        return name
    body = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_BODY, int(model.geom_bodyid[geom]))
    return f"{body or 'world'}#{geom}"


def without_exclusions(body: BodyGraph) -> BodyGraph:
    """The same body with every `<contact><exclude>` removed (the reference its exclusions
    are checked against)."""
    spec = mujoco.MjSpec.from_string(body.xml)
    for exclude in list(spec.excludes):
        spec.delete(exclude)
    return BodyGraph.from_mjcf(spec, None, body.name)


def excluded_pairs(body: BodyGraph) -> list[str]:
    """The labels of the geom pairs MJX would test but for the body's exclusions."""
    kept = set(collision_pairs(body.model))
    full = without_exclusions(body).model
    return [pair_label(full, p) for p in collision_pairs(full) if p not in kept]


def touching_pairs(
    body: BodyGraph, control_steps: int, seed: int, controls: Controls = "uniform",
    terminate: bool = True, episode_length: int = 1000,
) -> dict[str, int]:
    """Pair label -> the number of physics steps on which MuJoCo's C simulator listed a
    contact of that pair, over `control_steps` control steps of random `controls` (held
    `frame_skip` physics steps each). Episodes start as the body's task resets (init_qpos
    plus its reset noise) and end after `episode_length` control steps, when the state
    leaves the task's healthy range (where `terminate` and the task terminates), or when it
    turns non-finite. Pairs that never touched are absent."""
    model, data = body.model, mujoco.MjData(body.model)
    rng = np.random.default_rng(seed)
    healthy = _healthy_on_host(body) if terminate and body.task.terminate_when_unhealthy else None
    seen: collections.Counter[Pair] = collections.Counter()
    length, ctrl, hold = episode_length, np.zeros(model.nu), 0
    for _ in range(control_steps):
        if length >= episode_length:
            _reset(body, data, rng)
            length = 0
        if controls == "uniform" or hold == 0:
            ctrl = _random_ctrl(model, rng, controls)
            hold = int(rng.integers(2, 20))
        hold -= 1
        data.ctrl[:] = ctrl
        for _ in range(body.frame_skip):
            mujoco.mj_step(model, data)
            seen.update({tuple(map(int, g)) for g in data.contact.geom[:data.ncon]})
        length += 1
        finite = np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()
        if not finite or (healthy is not None and not healthy(data)):
            length = episode_length
    return {pair_label(model, _ordered(model, *p)): n for p, n in sorted(seen.items())}


def _random_ctrl(model: mujoco.MjModel, rng: np.random.Generator, controls: Controls) -> np.ndarray:
    """Actions in [-1, 1] mapped onto each actuator's ctrlrange (as `ActionMap` does)."""
    action = (rng.uniform(-1, 1, model.nu) if controls == "uniform"
              else rng.choice([-1.0, 1.0], model.nu))
    low, high = model.actuator_ctrlrange.T
    limited = model.actuator_ctrllimited.astype(bool)
    return np.where(limited, (low + high) / 2 + action * (high - low) / 2, action)


def _reset(body: BodyGraph, data: mujoco.MjData, rng: np.random.Generator) -> None:
    """`data` at a fresh start of the body's task (`modular_env.start_pose`, on the CPU)."""
    key = jax.random.key(int(rng.integers(2**31)))
    with jax.default_device(jax.devices("cpu")[0]):
        qpos, qvel = start_pose(jnp.asarray(body.init_qpos, jnp.float32), body.model.nv,
                                body.task, key)
    mujoco.mj_resetData(body.model, data)
    data.qpos[:], data.qvel[:] = qpos, qvel
    mujoco.mj_forward(body.model, data)


def _healthy_on_host(body: BodyGraph) -> Callable[[mujoco.MjData], bool]:
    """The task's healthy check (`tasks.healthy_check`) on an MjData, jitted on the CPU."""
    check = healthy_check(body, body.task)
    cpu = jax.devices("cpu")[0]
    jitted = jax.jit(lambda qpos, qvel, xpos: check(types.SimpleNamespace(
        qpos=qpos, qvel=qvel, xpos=xpos)))

    def healthy(data: mujoco.MjData) -> bool:
        with jax.default_device(cpu):
            return bool(jitted(data.qpos, data.qvel, data.xpos))

    return healthy
