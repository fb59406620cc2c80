"""rgb_array frames of a body's state, headless, with MuJoCo's own renderer.

`modular_ppo` sets MUJOCO_GL (osmesa where libOSMesa is installed, else egl) before MuJoCo
is first imported; a user's own MUJOCO_GL wins.
"""

from __future__ import annotations

import mujoco
import numpy as np
from jaxtyping import Float, UInt8

from modular_ppo.body import BodyGraph
from modular_ppo.interop.errors import InteropError


class FrameRenderer:
    """Renders the body at a joint configuration, the camera tracking its root body."""

    def __init__(self, body: BodyGraph, width: int = 480, height: int = 480):
        self._model = body.model
        self._data = mujoco.MjData(self._model)
        try:
            self._renderer = mujoco.Renderer(self._model, height=height, width=width)
        except Exception as e:  # noqa: BLE001 - GL set-up failures come in many types
            raise InteropError(
                f"cannot open a headless OpenGL context ({type(e).__name__}: {e}). Install "
                "OSMesa (Debian: apt-get install libosmesa6) or EGL (libegl1 libgl1-mesa-dri) "
                "and set MUJOCO_GL=osmesa or MUJOCO_GL=egl."
            ) from None
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        self._camera.trackbodyid = body.root_body_id
        self._camera.distance = 3.0 * _size(body, self._model, self._data) + 1.0
        self._camera.elevation = -20.0
        self._camera.azimuth = 90.0

    def __call__(self, qpos: Float[np.ndarray, "nq"]) -> UInt8[np.ndarray, "height width 3"]:
        """One frame of the body at `qpos` (its kinematics computed by mj_forward)."""
        self._data.qpos[:] = qpos
        mujoco.mj_forward(self._model, self._data)
        self._renderer.update_scene(self._data, camera=self._camera)
        return self._renderer.render().copy()

    def close(self) -> None:
        self._renderer.close()


def _size(body: BodyGraph, model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Largest distance of any of the agent's bodies from the root, in the model's rest pose."""
    mujoco.mj_forward(model, data)
    ids = np.concatenate([m.body_ids for m in body.modules.values()])
    return float(np.linalg.norm(data.xpos[ids] - data.xpos[body.root_body_id], axis=1).max())
