"""Replacing a run's file in one step, so a kill mid-write leaves the old file whole."""

from __future__ import annotations

from pathlib import Path


def write_atomically(path: Path, data: str | bytes, tmp_name: str | None = None) -> None:
    """Write `data` beside `path` (as `tmp_name`, default `<name>.tmp`) and rename it over
    `path`."""
    tmp = path.with_name(tmp_name or path.name + ".tmp")
    if isinstance(data, bytes):
        tmp.write_bytes(data)
    else:
        tmp.write_text(data)
    tmp.replace(path)
