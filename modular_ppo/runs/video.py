"""Videos of a body acting, rendered with MuJoCo's own renderer, modules colored apart.

Rendering is headless: the command line (`modular_ppo.headless.prepare_process`) picks
`MUJOCO_GL=osmesa` when libOSMesa is installed, else `egl` (set MUJOCO_GL yourself to
override). On Debian: `apt-get install libosmesa6`.
"""

from __future__ import annotations

import colorsys
from pathlib import Path

import mujoco
import numpy as np
from jaxtyping import Float, UInt8

from modular_ppo.body import BodyGraph
from modular_ppo.body.render import BodyRenderer
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
    """Render one frame per row of `qpos`, modules colored apart, tracking the root body."""
    with BodyRenderer(
        body, model=colored_model(body), width=width, height=height, error=RenderError
    ) as render:
        return np.stack([render(q) for q in np.asarray(qpos)])


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
