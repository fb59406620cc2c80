"""Process setup for headless use, done by the entry points (the command line, the test
suite) before anything imports MuJoCo; importing modular_ppo itself does no work."""

from __future__ import annotations

import contextlib
import ctypes.util
import importlib
import io
import os


def prepare_process() -> None:
    """Choose MuJoCo's headless rendering (MUJOCO_GL: OSMesa where installed, else EGL; a
    user's own MUJOCO_GL wins) and import MJX with its import notice kept off the output.

    MuJoCo reads MUJOCO_GL once, when it is first imported: call this before that."""
    os.environ.setdefault("MUJOCO_GL", "osmesa" if ctypes.util.find_library("OSMesa") else "egl")
    with contextlib.redirect_stdout(io.StringIO()):  # MJX's notice about its warp backend
        importlib.import_module("mujoco.mjx")
