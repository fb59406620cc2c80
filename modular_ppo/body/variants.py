"""Limb-removed variants (SMP style): a bundled or generated body without some modules.

"walker2d-modular-without-foot_left" is the walker without its left foot;
"humanoid-modular-without-left_arm-without-right_arm" has no arms. Removing a module removes
its bodies and every module below it in the module tree (a limb is a subtree), with their
joints, actuators and rest-pose entries. The variant keeps the base body's default
partition for the modules that remain; its named partitions (e.g. "2x3") are dropped,
since they may group removed bodies.
"""

from __future__ import annotations

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.numerics import INIT_QPOS
from modular_ppo.body.partition import ANNOTATION, NAMED_ANNOTATION, format_annotation

WITHOUT = "-without-"

DEFAULT_VARIANTS = (
    "walker2d-modular-without-foot_left",
    "halfcheetah-modular-without-bfoot",
    "humanoid-modular-without-left_arm",
)
"""Variants `bodies list` shows (besides `bundled_names()`); any module but the root of
any bundled or generated body can be removed."""


def split_variant(name: str) -> tuple[str, tuple[str, ...]] | None:
    """(base body, removed modules) of a variant name, None if `name` is not one."""
    if WITHOUT not in name:
        return None
    base, *removed = name.split(WITHOUT)
    return base, tuple(removed)


def variant_spec(name: str, base_spec: mujoco.MjSpec, base: BodyGraph) -> mujoco.MjSpec:
    """`base_spec` (of the body `base`; edited in place) without the modules `name` lists,
    renamed `name`. Raises BodyGraphError for unknown modules, the root module, nothing
    left to act, or no limb left that can touch the floor."""
    _, removed = split_variant(name)
    gone = _removed_modules(name, base, removed)
    spec = base_spec
    spec.modelname = name
    joints = {j for m in gone for j in base.modules[m].joints}
    for actuator in list(spec.actuators):
        if actuator.target in joints:
            spec.delete(actuator)
    for module in removed:
        if module in gone:  # not already gone with an ancestor removed before it
            for body in base.modules[module].root_bodies:
                if spec.body(body) is not None:
                    spec.delete(spec.body(body))
    _drop_qpos_entries(spec, base.model, joints)
    for text in list(spec.texts):
        if text.name.startswith(NAMED_ANNOTATION):
            spec.delete(text)
        elif text.name == ANNOTATION:
            text.data = format_annotation({
                m: list(module.root_bodies) for m, module in base.modules.items()
                if m not in gone
            })
    if not any(base.modules[m].n_actuators for m in base.modules if m not in gone):
        raise BodyGraphError(
            f"{name}: removing {', '.join(removed)} leaves no module with actuators. "
            "Remove fewer modules."
        )
    limbs = {m for m in _modules_touching_the_world(base) if base.modules[m].parent is not None}
    if limbs and limbs <= gone:
        raise BodyGraphError(
            f"{name}: removing {', '.join(removed)} takes away every limb of '{base.name}' "
            f"that can touch the floor (modules {', '.join(sorted(limbs))}: of its limbs, only "
            f"their geoms collide with the world's), so the variant would sink onto its "
            f"{base.root_module} and could not stand. Keep at least one of them."
        )
    return spec


def _modules_touching_the_world(body: BodyGraph) -> set[str]:
    """Modules with a geom that can collide with a geom of the world body (the floor):
    contype / conaffinity bits that match, or an explicit contact pair."""
    model = body.model
    world = np.flatnonzero(model.geom_bodyid == 0)
    contype, conaffinity = model.geom_contype, model.geom_conaffinity
    touching_geoms = {
        g for g in np.flatnonzero(model.geom_bodyid != 0)
        if any(contype[g] & conaffinity[w] or contype[w] & conaffinity[g] for w in world)
    }
    for g1, g2 in zip(model.pair_geom1, model.pair_geom2):
        if model.geom_bodyid[g1] == 0 or model.geom_bodyid[g2] == 0:
            touching_geoms.update(int(g) for g in (g1, g2) if model.geom_bodyid[g] != 0)
    touching_bodies = {int(model.geom_bodyid[g]) for g in touching_geoms}
    return {m for m, module in body.modules.items()
            if touching_bodies.intersection(int(b) for b in module.body_ids)}


def _removed_modules(name: str, base: BodyGraph, removed: tuple[str, ...]) -> set[str]:
    """The listed modules and every module below them."""
    gone: set[str] = set()
    repeated = sorted({module for module in removed if removed.count(module) > 1})
    if repeated:
        raise BodyGraphError(
            f"{name}: {', '.join(WITHOUT + m for m in repeated)} is given more than once. "
            f"Name each removed module once: {base.name}"
            f"{''.join(WITHOUT + m for m in dict.fromkeys(removed))}."
        )
    for module in removed:
        if module not in base.modules:
            raise BodyGraphError(
                f"{name}: body '{base.name}' has no module '{module}'. Its modules: "
                f"{', '.join(base.module_names)}. Write {base.name}{WITHOUT}<module>."
            )
        if base.modules[module].parent is None:
            raise BodyGraphError(
                f"{name}: '{module}' is the root module of '{base.name}' (it carries the "
                "rest of the body); remove one of its limbs instead: "
                f"{', '.join(base.modules[module].children)}."
            )
        stack = [module]
        while stack:
            current = stack.pop()
            gone.add(current)
            stack.extend(base.modules[current].children)
    return gone


def _drop_qpos_entries(spec: mujoco.MjSpec, model: mujoco.MjModel, joints: set[str]) -> None:
    """Remove the removed joints' entries from the rest pose (init_qpos: one value per
    qpos entry)."""
    numeric = next((n for n in spec.numerics if n.name == INIT_QPOS), None)
    if numeric is None:
        return
    dropped = []
    for joint in joints:
        j = model.joint(joint)
        width = {mujoco.mjtJoint.mjJNT_FREE: 7, mujoco.mjtJoint.mjJNT_BALL: 4}.get(
            mujoco.mjtJoint(model.jnt_type[j.id]), 1)
        dropped.extend(range(int(model.jnt_qposadr[j.id]), int(model.jnt_qposadr[j.id]) + width))
    kept = np.delete(np.asarray(numeric.data, dtype=float), dropped)
    numeric.data = kept.tolist()
    numeric.size = len(kept)
