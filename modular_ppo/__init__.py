"""modular_ppo: train modular bodies as teams of agents with PPO on JAX, Flax NNX and MJX.

The package is a pipeline; each stage imports only earlier ones:
body -> env -> networks -> ppo -> runs -> analysis.
"""

import contextlib
import ctypes.util
import importlib
import io
import os

# Rendering is headless. MuJoCo reads MUJOCO_GL when it is first imported, so the choice is
# made here (a user's own MUJOCO_GL wins): OSMesa where installed, else EGL.
os.environ.setdefault("MUJOCO_GL", "osmesa" if ctypes.util.find_library("OSMesa") else "egl")

# MJX prints a notice about its optional warp backend on import; keep it off the output.
with contextlib.redirect_stdout(io.StringIO()):
    importlib.import_module("mujoco.mjx")

__version__ = "0.1.0"
