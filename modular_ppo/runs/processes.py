"""A run of several processes: process 0 writes the run directory, and tells the others
where it is."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
from jax.experimental import multihost_utils

PATH_BYTES = 4096
"""The longest run-directory path process 0 can pass to the others (bytes of UTF-8)."""


def is_primary() -> bool:
    """Whether this process writes the run directory (process 0; true in a one-process run)."""
    return jax.process_index() == 0


def path_of_primary(path: Path | None) -> Path:
    """Process 0's `path`, in every process (the others pass None); collective: every
    process of the run must call it."""
    if jax.process_count() == 1:
        assert path is not None
        return path
    buffer = np.zeros(PATH_BYTES, np.uint8)
    if is_primary():
        encoded = str(path).encode()
        buffer[:len(encoded)] = np.frombuffer(encoded, np.uint8)
    received = np.asarray(multihost_utils.broadcast_one_to_all(buffer))
    return Path(received.tobytes().rstrip(b"\0").decode())
