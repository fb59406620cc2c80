"""The <custom><numeric> values of a model, read once.

Task numerics (`modular_ppo:*`) are checked by `task.read_task`; `init_qpos` (the rest
pose, nq values, where it is not qpos0) is checked here.
"""

from __future__ import annotations

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError

INIT_QPOS = "init_qpos"


def read_numerics(model: mujoco.MjModel, where: str) -> dict[str, np.ndarray]:
    numerics = {}
    for i in range(model.nnumeric):
        start, size = int(model.numeric_adr[i]), int(model.numeric_size[i])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i)
        numerics[name] = np.array(model.numeric_data[start : start + size])
    if INIT_QPOS in numerics:
        value = numerics[INIT_QPOS]
        if value.size != model.nq or not np.isfinite(value).all():
            values = " ".join(f"{v:g}" for v in value)
            raise BodyGraphError(
                f'{where}: <numeric name="{INIT_QPOS}" data="{values}">: needs nq = '
                f"{model.nq} finite values, one per qpos entry. Fix its data."
            )
    return numerics
