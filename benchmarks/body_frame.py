"""One frame of a body, each module's geoms in its own color, with a legend, to a PNG.

The body rests for `--settle-s` seconds of simulated time with zero controls (it drops onto
the floor and stands) before the frame is taken. Colors are the ones `cli.py render` and the
training videos use (`modular_ppo.runs.video.module_colors`). Headless: `modular_ppo`
picks MUJOCO_GL=osmesa where libOSMesa is installed (Debian: apt-get install libosmesa6),
else egl.

    python benchmarks/body_frame.py --body ant-modular --png docs/images/ant_modules.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from jaxtyping import Float, UInt8

from modular_ppo.headless import prepare_process

prepare_process()  # an entry point that renders: MUJOCO_GL before anything imports MuJoCo

from modular_ppo.body import BodyGraph, load_body  # noqa: E402
from modular_ppo.runs.video import module_colors, render_frames  # noqa: E402


def settled_qpos(body: BodyGraph, seconds: float) -> Float[np.ndarray, "nq"]:
    """The body's joint configuration after `seconds` of simulation from its rest pose
    (the model's qpos0, zero velocity) with zero controls."""
    import mujoco  # after modular_ppo, which chooses MUJOCO_GL before MuJoCo's first import

    data = mujoco.MjData(body.model)
    for _ in range(round(seconds / body.model.opt.timestep)):
        mujoco.mj_step(body.model, data)
    return data.qpos.copy()


def frame_with_legend(
    body: BodyGraph, frame: UInt8[np.ndarray, "height width 3"], path: Path
) -> Path:
    """Save `frame` beside a legend of the body's modules in their colors."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    height, width, _ = frame.shape
    dpi = 100
    fig, ax = plt.subplots(figsize=(width / dpi * 1.35, height / dpi), dpi=dpi)
    ax.imshow(frame)
    ax.set_axis_off()
    colors = module_colors(body)
    handles = [Patch(color=colors[name][:3], label=name) for name in body.module_names]
    ax.legend(handles=handles, title=f"{body.name}: modules", loc="center left",
              bbox_to_anchor=(1.01, 0.5), fontsize=8, title_fontsize=8, frameon=False)
    fig.subplots_adjust(left=0.0, right=0.74, top=1.0, bottom=0.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight", pad_inches=0.02)  # the legend whole
    plt.close(fig)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", default="ant-modular", help="a bundled body or an MJCF path")
    parser.add_argument("--png", type=Path, default=Path("docs/images/ant_modules.png"))
    parser.add_argument("--width", type=int, default=480)
    parser.add_argument("--height", type=int, default=360)
    parser.add_argument("--settle-s", type=float, default=1.0,
                        help="simulated seconds with zero controls before the frame")
    args = parser.parse_args()

    body = load_body(args.body)
    qpos = settled_qpos(body, args.settle_s)
    frame = render_frames(body, qpos[None], width=args.width, height=args.height)[0]
    path = frame_with_legend(body, frame, args.png)
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KB): {body.name}, "
          f"{len(body.module_names)} modules")


if __name__ == "__main__":
    main()
