"""Where the bundled body files are: `bodies/` at the top of a clone (and of an editable
install), installed as `modular_ppo/bodies` by a wheel (setup.py)."""

from __future__ import annotations

from pathlib import Path

_INSTALLED = Path(__file__).resolve().parents[1] / "bodies"
_CLONE = Path(__file__).resolve().parents[2] / "bodies"

BODIES_DIR = _INSTALLED if _INSTALLED.is_dir() else _CLONE
"""The folder of the bundled MJCF files."""
