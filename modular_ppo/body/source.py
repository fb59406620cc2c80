"""Reading MJCF from a path, an XML string or a `mujoco.MjSpec`, with errors that say where."""

from __future__ import annotations

import re
from pathlib import Path

import mujoco

from modular_ppo.body.errors import BodyGraphError

MjcfSource = str | Path | mujoco.MjSpec

_FIX_XML = "Fix the XML at that line (syntax, or an element / attribute MJCF does not know)."


def load_spec(source: MjcfSource) -> tuple[mujoco.MjSpec, str]:
    """The spec and a label for error messages: the file path, "<xml string>" or "<MjSpec>"."""
    if isinstance(source, mujoco.MjSpec):
        return source, "<MjSpec>"
    text = str(source)
    if isinstance(source, Path) or not text.lstrip().startswith("<"):
        path = Path(text)
        if not _is_file(path):
            raise BodyGraphError(
                f"{path}: no such MJCF file. Give the path of an existing .xml file, "
                "or a bundled body name (see `python cli.py bodies list`)."
            )
        try:
            return mujoco.MjSpec.from_file(str(path)), str(path)
        except ValueError as e:
            raise BodyGraphError(
                f"{path}: not a valid MJCF file: {_one_line(e)}. {_FIX_XML}"
            ) from None
    try:
        return mujoco.MjSpec.from_string(text), "<xml string>"
    except ValueError as e:
        raise BodyGraphError(
            f"<xml string>: not a valid MJCF document: {_one_line(e)}. {_FIX_XML}"
        ) from None


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a path the OS refuses to look up (too long)."""
    try:
        return path.is_file()
    except OSError:
        return False


def compile_spec(spec: mujoco.MjSpec, where: str) -> mujoco.MjModel:
    try:
        return spec.compile()
    except ValueError as e:
        raise BodyGraphError(
            f"{where}: MuJoCo could not compile the model: {_one_line(e)}. Fix that element."
        ) from None


def _one_line(error: Exception) -> str:
    """MuJoCo's message (which names the element and line) without its line breaks."""
    return re.sub(r"\s*\n\s*", "; ", str(error).strip())
