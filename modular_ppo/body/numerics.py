"""Task numerics a body file carries in <custom><numeric>, read and checked once.

- `modular_ppo:frame_skip`: physics steps per control step (a positive integer; default 5).
- `modular_ppo:healthy_z`: "min max" height of the root body for a healthy state; absent
  for bodies that cannot fall (swimmer, half cheetah).
- `modular_ppo:healthy_angle`: "min max" of the root's hinge angle (planar bodies: the
  pitch joint), where the task also ends an episode on tilting (hopper, walker2d).
- `init_qpos`: the rest pose (nq values) where it is not qpos0.
"""

from __future__ import annotations

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError

FRAME_SKIP = "modular_ppo:frame_skip"
HEALTHY_Z = "modular_ppo:healthy_z"
HEALTHY_ANGLE = "modular_ppo:healthy_angle"
INIT_QPOS = "init_qpos"


def read_numerics(model: mujoco.MjModel, where: str) -> dict[str, np.ndarray]:
    numerics = {}
    for i in range(model.nnumeric):
        start, size = int(model.numeric_adr[i]), int(model.numeric_size[i])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i)
        numerics[name] = np.array(model.numeric_data[start : start + size])
    _check(numerics, model, where)
    return numerics


def _check(numerics: dict[str, np.ndarray], model: mujoco.MjModel, where: str) -> None:
    def bad(name: str, need: str) -> BodyGraphError:
        values = " ".join(f"{v:g}" for v in numerics[name])
        return BodyGraphError(
            f'{where}: <numeric name="{name}" data="{values}">: needs {need}. Fix its data.'
        )

    if FRAME_SKIP in numerics:
        value = numerics[FRAME_SKIP]
        if value.size != 1 or value[0] < 1 or value[0] != int(value[0]):
            raise bad(FRAME_SKIP, "one positive integer")
    for name in (HEALTHY_Z, HEALTHY_ANGLE):
        if name in numerics:
            value = numerics[name]
            if value.size != 2 or not value[0] < value[1]:
                raise bad(name, "two values 'min max' with min < max")
    if INIT_QPOS in numerics and numerics[INIT_QPOS].size != model.nq:
        raise bad(INIT_QPOS, f"nq = {model.nq} values, one per qpos entry")
