"""Names of MuJoCo objects, with a stable stand-in for unnamed ones."""

from __future__ import annotations

import mujoco

_OBJ = {
    "body": mujoco.mjtObj.mjOBJ_BODY,
    "joint": mujoco.mjtObj.mjOBJ_JOINT,
    "actuator": mujoco.mjtObj.mjOBJ_ACTUATOR,
    "geom": mujoco.mjtObj.mjOBJ_GEOM,
    "site": mujoco.mjtObj.mjOBJ_SITE,
    "tendon": mujoco.mjtObj.mjOBJ_TENDON,
}


def name_of(model: mujoco.MjModel, kind: str, index: int) -> str:
    """The object's MJCF name, or "<kind>#<id>" when it has none ('#' never occurs in the
    stand-in of a named object, so the two cannot clash)."""
    return mujoco.mj_id2name(model, _OBJ[kind], index) or f"{kind}#{index}"
