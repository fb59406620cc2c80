"""What code a run ran: library versions, JAX devices, and modular_ppo's own git commit.

Two runs with the same config and seed give the same metrics, bit for bit, only on the same
code: config.json records the commit, and whether the code's tracked files (the package and
the bundled bodies) differed from it (a run started from a working tree being edited is not
reproducible from the commit alone; changed docs or benchmark results do not count).
"""

from __future__ import annotations

import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

import jax

from modular_ppo.body.bundled_dir import BODIES_DIR

PACKAGE_DIR = Path(__file__).resolve().parents[1]
CODE_DIRS = (PACKAGE_DIR, BODIES_DIR)
"""What a run's code is: the package and the bundled bodies' MJCF files."""
LIBRARIES = ("jax", "flax", "optax", "mujoco", "mujoco-mjx")


def library_version(name: str) -> str | None:
    """The installed version of distribution `name`, None where it is not installed."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, Any]:
    """{"python", each of LIBRARIES (None where not installed), "devices", "modular_ppo":
    {"commit", "modified"}} with commit and modified None outside a git checkout."""
    return {
        "python": platform.python_version(),
        **{name: library_version(name) for name in LIBRARIES},
        "devices": [str(d) for d in jax.devices()],
        "modular_ppo": git_state(*CODE_DIRS),
    }


def git_state(directory: Path, *more: Path) -> dict[str, Any]:
    """{"commit": HEAD's hash, "modified": whether tracked files under `directory` (and the
    folders `more`) differ from it}, both None where `directory` is not in a git checkout
    (or git is missing)."""
    commit = _git(directory, "rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "modified": None}
    paths = [str(path) for path in (directory, *more) if path.exists()]
    changes = _git(directory, "status", "--porcelain", "--untracked-files=no", "--", *paths)
    return {"commit": commit, "modified": None if changes is None else bool(changes)}


def _git(directory: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(directory), *args], capture_output=True,
                              text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
