"""Checks of what runs write, by content: videos show the body, each module in its color,
moving; analysis PNGs show a curve in every module's panels. (Imported by name: pytest puts
tests/ on sys.path for tests/conftest.py.)"""

from __future__ import annotations

import colorsys
from pathlib import Path

import imageio.v3 as iio
import numpy as np
from jaxtyping import Bool, UInt8
from matplotlib.colors import rgb_to_hsv, to_rgb

from modular_ppo.body import BodyGraph
from modular_ppo.runs.video import module_colors

HUE_TOLERANCE = 0.03
"""How far (in hue, 0-1) a lit, video-compressed pixel of a module may drift from its
module's color. The module hues are 1/modules apart (a hopper: 0.25)."""
MIN_SATURATION = 0.45
"""Module colors have saturation 0.65; the scene's floor and sky pixels near a module's
hue are paler or darker."""
MIN_VALUE = 0.25


def video_frames(path: Path) -> UInt8[np.ndarray, "time height width 3"]:
    frames = iio.imread(path, plugin="pyav") if Path(path).suffix == ".mp4" else iio.imread(path)
    return np.asarray(frames)[..., :3]


def module_pixels(
    frames: UInt8[np.ndarray, "time height width 3"], body: BodyGraph
) -> dict[str, Bool[np.ndarray, "time height width"]]:
    """module -> where a pixel has its color (hue within HUE_TOLERANCE, saturated and
    bright enough)."""
    hsv = rgb_to_hsv(frames / 255.0)
    saturated = (hsv[..., 1] > MIN_SATURATION) & (hsv[..., 2] > MIN_VALUE)
    pixels = {}
    for name, rgba in module_colors(body).items():
        hue = colorsys.rgb_to_hsv(*rgba[:3])[0]
        off = np.abs((hsv[..., 0] - hue + 0.5) % 1.0 - 0.5)
        pixels[name] = (off < HUE_TOLERANCE) & saturated
    return pixels


def assert_frames_not_blank_and_moving(frames: UInt8[np.ndarray, "time height width 3"]) -> None:
    assert frames.ndim == 4 and len(frames) >= 2, frames.shape
    spread = frames.reshape(len(frames), -1).std(axis=1)
    assert np.all(spread > 10), f"blank or flat frames (pixel std per frame {spread})"
    change = np.abs(np.diff(frames.astype(np.int16), axis=0)).mean(axis=(1, 2, 3))
    assert change.max() > 0.3, f"the video does not change over time ({change})"


def assert_video_shows_the_body(
    frames: UInt8[np.ndarray, "time height width 3"], body: BodyGraph,
    min_modules: int | None = None,
) -> None:
    """Frames that are not blank, change over time and show the body's module colors:
    the colors of at least `min_modules` modules (default: all) somewhere in the video
    (fewer where the camera's side view hides modules, such as a centipede's left legs).

    Measured on the CLI test's hopper video (320x240): 300-400 module-colored pixels per
    frame, at least 240 per module over the video, a mean change of 0.9-2.7 per pixel
    between frames; without module colors 10-17 pixels pass the color test, and
    the same frame repeated changes by under 0.05 (codec noise)."""
    assert_frames_not_blank_and_moving(frames)
    counts = {name: where.sum(axis=(1, 2)) for name, where in module_pixels(frames, body).items()}
    in_every_frame = np.sum(list(counts.values()), axis=0)
    assert np.all(in_every_frame >= 50), f"frames without the body's colors: {counts}"
    shown = [name for name, per_frame in counts.items() if per_frame.sum() >= 50]
    expected = len(body.module_names) if min_modules is None else min_modules
    assert len(shown) >= expected, f"module colors seen: {counts}"


def assert_gif_shows_the_videos_pictures(
    gif: UInt8[np.ndarray, "time height width 3"],
    video: UInt8[np.ndarray, "time height width 3"],
    body: BodyGraph,
) -> None:
    """A GIF of the episode a checked video shows (same policy, same key) shows the same
    pictures: close overall, and close where the video shows the body. A GIF's 256-color
    palette shifts a small module's color too far for the color test itself.

    Measured on the CLI test's hopper: 5.8 per pixel overall, 15-18 on the body's pixels,
    where the floor is 77 away."""
    assert_frames_not_blank_and_moving(gif)
    video = video[:len(gif)].astype(np.int16)
    difference = np.abs(gif.astype(np.int16) - video)
    overall = difference.mean(axis=(1, 2, 3))
    assert np.all(overall < 12), f"the GIF shows other pictures ({overall})"
    on_body = np.any(list(module_pixels(video.astype(np.uint8), body).values()), axis=0)
    assert np.all(on_body.sum(axis=(1, 2)) >= 50)
    body_difference = [float(difference[t][on_body[t]].mean()) for t in range(len(gif))]
    assert max(body_difference) < 35, f"the GIF lacks the body ({body_difference})"


def assert_png_shows_every_panels_curve(png: Path, figure, min_pixels: int = 20) -> None:
    """Every axes of the saved `figure` holds a curve with finite points, and the PNG
    shows it: pixels of the curve's color inside that axes' box."""
    image = np.asarray(iio.imread(png))[..., :3].astype(np.int16)
    height = image.shape[0]
    scale = image.shape[1] / figure.bbox.width  # savefig's dpi over the figure's
    for ax in figure.axes:
        lines = [line for line in ax.get_lines() if np.isfinite(line.get_ydata()).any()]
        assert lines, f"panel {ax.get_title()!r} has no curve"
        x0, y0, x1, y1 = (np.asarray(ax.get_window_extent().extents) * scale).astype(int)
        box = image[height - y1:height - y0, x0:x1]
        color = np.asarray(to_rgb(lines[-1].get_color())) * 255
        near = (np.abs(box - color).max(axis=-1) < 40).sum()
        assert near >= min_pixels, f"panel {ax.get_title()!r}: {near} pixels of its curve"
