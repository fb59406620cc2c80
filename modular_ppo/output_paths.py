"""Every path a command writes, checked before the work starts.

`output_file` (a file to write: `bodies show --png`, `render --out`, `analyze --png`) and
`output_folder` (a folder to write into: `train --runs-root`, a resumed run's directory)
raise `OutputPathError` naming the flag, the path and the fix when the path cannot be
written: a directory where a file is meant, a file where a folder is meant (the path's
own or one of its parents), a folder without write permission, a name the system
refuses, a file type the writer does not know. Missing folders are fine: each writer
creates them (`make_parent` for a file) when it writes, so a command refused for another
reason leaves nothing behind.
"""

from __future__ import annotations

import os
from pathlib import Path

from modular_ppo.errors import OutputPathError


def output_file(path: Path | str, flag: str, suffixes: tuple[str, ...] = ()) -> Path:
    """`path` as a Path if a file can be written there (its folder exists or can be
    created, is writable, and the path is not a directory); `suffixes`: the file types
    the writer knows (e.g. (".mp4", ".gif")), any if empty."""
    path = Path(path)
    status = _status(path, flag)
    if status == "dir":
        raise OutputPathError(
            f"{flag} {path}: is a directory; a file is written there. Give a file path, "
            f"e.g. {flag} {path / ('out' + (suffixes[0] if suffixes else ''))}."
        )
    if suffixes and path.suffix.lower() not in suffixes:
        kinds = " or ".join(suffixes)
        raise OutputPathError(
            f"{flag} {path}: unknown file type '{path.suffix}'. Give a path ending in {kinds}, "
            f"e.g. {flag} out{suffixes[0]}."
        )
    if status == "file" and not os.access(path, os.W_OK):
        raise OutputPathError(
            f"{flag} {path}: the file exists and is not writable. Give another path, or make "
            "it writable."
        )
    _check_folder(path.parent, flag, path)
    return path


def output_folder(path: Path | str, flag: str) -> Path:
    """`path` as a Path if files can be written into it: an existing writable folder, or
    a missing one whose nearest existing parent is a writable folder."""
    path = Path(path)
    _check_folder(path, flag, path)
    return path


def make_parent(path: Path) -> Path:
    """Create the folder of a file `output_file` accepted; `path`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputPathError(
            f"{path.parent}: cannot create the folder ({e.strerror}). Give a path in a folder "
            "you can write to."
        ) from None
    return path


def _check_folder(folder: Path, flag: str, given: Path) -> None:
    """The folder files go into: existing and writable, or creatable (its nearest
    existing parent is a writable folder)."""
    current = folder
    while True:
        status = _status(current, flag)
        if status == "dir":
            break
        if status == "file":
            raise OutputPathError(
                f"{flag} {given}: {current} is a file, not a folder. Give a path in a "
                "folder you can write to."
            )
        if current.parent == current:  # a root that does not exist: nothing to create in
            raise OutputPathError(f"{flag} {given}: {current} does not exist. Give a path in "
                                  "a folder you can write to.")
        current = current.parent
    if not os.access(current, os.W_OK | os.X_OK):
        what = "the folder" if current == folder else f"{current}, where its folder would be created,"
        raise OutputPathError(
            f"{flag} {given}: {what} is not writable. Give a path in a folder you can "
            "write to."
        )


def _status(path: Path, flag: str) -> str:
    """"dir", "file" (anything not a directory) or "missing"."""
    try:
        if path.is_dir():
            return "dir"
        return "file" if path.exists() or path.is_symlink() else "missing"
    except (OSError, ValueError) as e:  # a name too long, a NUL byte, ...
        raise OutputPathError(
            f"{flag} {path!s}: not a usable path ({getattr(e, 'strerror', None) or e}). Give "
            "another path."
        ) from None
