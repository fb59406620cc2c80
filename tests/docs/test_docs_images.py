"""The README's picture of a body, `benchmarks/body_frame.py`: every module shows in its own
color (the colors of the training videos), and the PNG stays small."""

from __future__ import annotations

import colorsys
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import numpy as np

from modular_ppo.body import load_body
from modular_ppo.runs.video import module_colors

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 240
"""The frame's width in pixels; the legend lies to its right."""


def hues(image: np.ndarray) -> np.ndarray:
    """The hue of every clearly colored pixel (saturation and value above 0.3): the floor,
    the sky and highlights are grey or white."""
    rgb = image[..., :3].reshape(-1, 3) / 255.0
    hsv = np.array([colorsys.rgb_to_hsv(*p) for p in np.unique(rgb, axis=0)])
    return hsv[(hsv[:, 1] > 0.3) & (hsv[:, 2] > 0.3), 0]


def test_every_module_shows_in_its_color_in_the_frame(tmp_path):
    png = tmp_path / "hopper.png"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "body_frame.py"),
                    "--body", "hopper-modular", "--png", str(png),
                    "--width", str(WIDTH), "--height", "180"], check=True, cwd=tmp_path)
    image = iio.imread(png)
    frame = image[:, :WIDTH]
    frame_hues = hues(frame)
    for module, (r, g, b, _) in module_colors(load_body("hopper-modular")).items():
        hue = colorsys.rgb_to_hsv(r, g, b)[0]
        distance = np.minimum(abs(frame_hues - hue), 1 - abs(frame_hues - hue))
        assert (distance < 0.03).sum() >= 20, f"module {module} (hue {hue:.2f}) not in the frame"
    assert png.stat().st_size < 200_000
