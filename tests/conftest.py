"""Imported before every test module.

- modular_ppo picks the headless GL backend before any test imports mujoco (MuJoCo reads
  MUJOCO_GL once, at its first import).
- XLA's backend optimization is off for the whole suite (and the CLI subprocesses it
  starts, through the environment): the suite is dominated by compiling many small
  programs that then run briefly, and this cuts its CPU time by about 30% (tests/networks:
  234 -> 163 CPU-s) without changing what any test checks.
"""

import os

if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"
    ).strip()

import modular_ppo  # noqa: E402, F401
