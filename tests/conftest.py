"""Imported before every test module: modular_ppo picks the headless GL backend before any
test imports mujoco (MuJoCo reads MUJOCO_GL once, at its first import)."""

import modular_ppo  # noqa: F401
