"""Videos of a body acting, rendered with MuJoCo's own renderer, modules colored apart.

Rendering is headless: `modular_ppo` picks `MUJOCO_GL=osmesa` when libOSMesa is installed,
else `egl` (set MUJOCO_GL yourself to override). On Debian: `apt-get install libosmesa6`.
"""

from __future__ import annotations

import colorsys
from pathlib import Path

import mujoco
import numpy as np
from jaxtyping import Float, UInt8

from modular_ppo.body import BodyGraph
from modular_ppo.runs.errors import RenderError


def module_colors(body: BodyGraph) -> dict[str, tuple[float, float, float, float]]:
    """A distinct RGBA color per module (evenly spaced hues)."""
    n = len(body.modules)
    return {
        name: (*colorsys.hsv_to_rgb(i / max(n, 1), 0.65, 0.95), 1.0)
        for i, name in enumerate(body.module_names)
    }


def colored_model(body: BodyGraph) -> mujoco.MjModel:
    """A copy of the body's model whose geoms take their module's color."""
    model = mujoco.MjModel.from_xml_string(body.xml)
    colors = module_colors(body)
    for name, module in body.modules.items():
        for geom in np.flatnonzero(np.isin(model.geom_bodyid, module.body_ids)):
            model.geom_rgba[geom] = colors[name]
            model.geom_matid[geom] = -1
    return model


def render_frames(
    body: BodyGraph,
    qpos: Float[np.ndarray, "time nq"],
    width: int = 320,
    height: int = 240,
) -> UInt8[np.ndarray, "time height width 3"]:
    """Render one frame per row of `qpos`, tracking the root body."""
    model = colored_model(body)
    data = mujoco.MjData(model)
    try:
        renderer = mujoco.Renderer(model, height=height, width=width)
    except Exception as e:  # noqa: BLE001 - GL set-up failures come in many types
        raise RenderError(
            f"cannot open a headless OpenGL context ({type(e).__name__}: {e}). Install "
            "OSMesa (Debian: apt-get install libosmesa6) or EGL (libegl1 libgl1-mesa-dri) "
            "and set MUJOCO_GL=osmesa or MUJOCO_GL=egl."
        ) from None
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_TRACKING
    camera.trackbodyid = body.root_body_id
    camera.distance = 3.0 * _body_size(body, model, data) + 1.0
    camera.elevation = -20.0
    camera.azimuth = 90.0
    frames = []
    try:
        for q in np.asarray(qpos):
            data.qpos[:] = q
            mujoco.mj_forward(model, data)
            renderer.update_scene(data, camera=camera)
            frames.append(renderer.render().copy())
    finally:
        renderer.close()
    return np.stack(frames)


def _body_size(body: BodyGraph, model: mujoco.MjModel, data: mujoco.MjData) -> float:
    """Largest distance of any of the agent's bodies from the root, in the rest pose."""
    mujoco.mj_forward(model, data)
    ids = np.concatenate([m.body_ids for m in body.modules.values()])
    return float(np.linalg.norm(data.xpos[ids] - data.xpos[body.root_body_id], axis=1).max())


def write_video(frames: UInt8[np.ndarray, "time h w 3"], path: Path, fps: float) -> Path:
    """Write frames to .mp4 (ffmpeg via imageio) or .gif, chosen by the file suffix."""
    import imageio.v3 as iio

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".gif":
        iio.imwrite(path, frames, duration=1000.0 / fps, loop=0)
    elif path.suffix == ".mp4":
        try:
            iio.imwrite(path, frames, fps=fps, codec="libx264", plugin="pyav")
        except (ImportError, ModuleNotFoundError):
            raise RenderError(
                f"{path}: writing .mp4 needs the 'av' package (pip install av); "
                "or ask for a .gif."
            ) from None
    else:
        raise RenderError(f"{path}: unknown video format '{path.suffix}'; use .mp4 or .gif.")
    return path
