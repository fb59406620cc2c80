"""Which body each actuator acts on: the body its module must own.

- joint transmission: the joint's body;
- site transmission (with or without refsite) and slider-crank: the body of the (crank) site;
- body transmission (adhesion): that body;
- tendon: the deepest common ancestor of the moving bodies the tendon passes through
  (joint and site wraps), so a tendon coupling two legs belongs to the body they hang from.
A joint, site or body transmission on a body welded to the world moves nothing: refused.
"""

from __future__ import annotations

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.naming import name_of

_SITE_TRANSMISSIONS = (mujoco.mjtTrn.mjTRN_SITE, mujoco.mjtTrn.mjTRN_SLIDERCRANK)
_JOINT_TRANSMISSIONS = (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT)


def actuator_bodies(model: mujoco.MjModel, where: str) -> np.ndarray:
    """[nu] the body id each actuator acts on."""
    return np.array([_actuator_body(model, a, where) for a in range(model.nu)], dtype=np.int32)


def _actuator_body(model: mujoco.MjModel, act: int, where: str) -> int:
    trntype = int(model.actuator_trntype[act])
    target = int(model.actuator_trnid[act, 0])
    if trntype == mujoco.mjtTrn.mjTRN_TENDON:
        return _tendon_body(model, act, target, where)
    if trntype in _JOINT_TRANSMISSIONS:
        return int(model.jnt_bodyid[target])
    if trntype in _SITE_TRANSMISSIONS or trntype == mujoco.mjtTrn.mjTRN_BODY:
        body = int(model.site_bodyid[target]) if trntype != mujoco.mjtTrn.mjTRN_BODY else target
        if model.body_weldid[body] == 0:
            raise BodyGraphError(
                f"{where}: actuator '{name_of(model, 'actuator', act)}' acts on body "
                f"'{name_of(model, 'body', body)}', which is welded to the world (no joint "
                "between them), so it moves nothing. Put its site on a moving body, or remove "
                "the actuator."
            )
        return body
    raise BodyGraphError(
        f"{where}: actuator '{name_of(model, 'actuator', act)}' has transmission "
        f"{mujoco.mjtTrn(trntype).name}, which cannot be assigned to a module. Drive a joint, "
        "site, tendon or body instead."
    )


def _tendon_body(model: mujoco.MjModel, act: int, tendon: int, where: str) -> int:
    start, num = int(model.tendon_adr[tendon]), int(model.tendon_num[tendon])
    spanned = set()
    for w in range(start, start + num):
        wtype, obj = int(model.wrap_type[w]), int(model.wrap_objid[w])
        if wtype == mujoco.mjtWrap.mjWRAP_JOINT:
            spanned.add(int(model.jnt_bodyid[obj]))
        elif wtype == mujoco.mjtWrap.mjWRAP_SITE:
            spanned.add(int(model.site_bodyid[obj]))
    moving = sorted(b for b in spanned if model.body_weldid[b] != 0)
    act_name, tendon_name = name_of(model, "actuator", act), name_of(model, "tendon", tendon)
    if not moving:
        raise BodyGraphError(
            f"{where}: actuator '{act_name}' drives tendon '{tendon_name}', which passes "
            "through no joint or site of a moving body, so no module can own it. Route the "
            "tendon through the joints or sites of the limb it should move."
        )
    common = set(_ancestors(model, moving[0]))
    for b in moving[1:]:
        common &= set(_ancestors(model, b))
    owner = max(common, key=lambda b: len(_ancestors(model, b)))
    if owner == 0:
        names = ", ".join(f"'{name_of(model, 'body', b)}'" for b in moving)
        raise BodyGraphError(
            f"{where}: actuator '{act_name}' drives tendon '{tendon_name}', which couples "
            f"separate bodies ({names}) with no common moving ancestor, so no single module "
            "can own it. Split it into one tendon per body, or join the bodies in one tree."
        )
    return owner


def _ancestors(model: mujoco.MjModel, body: int) -> list[int]:
    """The body and its ancestors up to the world body (id 0)."""
    chain = [body]
    while chain[-1] != 0:
        chain.append(int(model.body_parentid[chain[-1]]))
    return chain
