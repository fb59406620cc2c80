"""Frames of a body's state, headless, with MuJoCo's own renderer: the camera tracks the
root body from a distance set by the body's size.

The command line sets MUJOCO_GL (osmesa where libOSMesa is installed, else egl) before MuJoCo
is first imported (`modular_ppo.headless.prepare_process`, which a program that renders
calls first); a user's own MUJOCO_GL wins.
"""

from __future__ import annotations

import mujoco
import numpy as np
from jaxtyping import Float, UInt8

from modular_ppo.body.graph import BodyGraph

NO_GL_FIX = (
    "Install OSMesa (Debian: apt-get install libosmesa6) or EGL (libegl1 libgl1-mesa-dri) "
    "and set MUJOCO_GL=osmesa or MUJOCO_GL=egl."
)


class BodyRenderer:
    """Renders `body` (or `model`, a recolored copy of its model) at joint configurations.

    `error` is the exception type raised, with the fix, when no headless OpenGL context
    can be opened: each caller's own stage error.
    """

    def __init__(
        self,
        body: BodyGraph,
        *,
        model: mujoco.MjModel | None = None,
        width: int,
        height: int,
        error: type[Exception],
    ):
        self._model = body.model if model is None else model
        self._data = mujoco.MjData(self._model)
        try:
            self._renderer = mujoco.Renderer(self._model, height=height, width=width)
        except Exception as e:  # noqa: BLE001 - GL set-up failures come in many types
            raise error(
                f"cannot open a headless OpenGL context ({type(e).__name__}: {e}). {NO_GL_FIX}"
            ) from None
        self._camera = mujoco.MjvCamera()
        self._camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
        self._camera.trackbodyid = body.root_body_id
        self._camera.distance = 3.0 * self._rest_size(body) + 1.0
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

    def __enter__(self) -> BodyRenderer:
        return self

    def __exit__(self, *_) -> None:
        self.close()

    def _rest_size(self, body: BodyGraph) -> float:
        """Largest distance of any of the agent's bodies from the root, in the rest pose."""
        mujoco.mj_forward(self._model, self._data)
        ids = np.concatenate([m.body_ids for m in body.modules.values()])
        xpos = self._data.xpos
        return float(np.linalg.norm(xpos[ids] - xpos[body.root_body_id], axis=1).max())
