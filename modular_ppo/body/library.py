"""Bundled morphologies, by name."""

from __future__ import annotations

from pathlib import Path

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.partition import Partition

BODIES_DIR = Path(__file__).resolve().parents[2] / "bodies"


def bundled_names() -> list[str]:
    return sorted(p.stem for p in BODIES_DIR.glob("*.xml"))


def load_body(name_or_path: str, partition: Partition | None = None) -> BodyGraph:
    """A bundled body by name, or any MJCF file by path."""
    if name_or_path in bundled_names():
        return BodyGraph.from_mjcf(BODIES_DIR / f"{name_or_path}.xml", partition, name_or_path)
    if name_or_path.endswith(".xml") or "/" in name_or_path:
        return BodyGraph.from_mjcf(Path(name_or_path), partition)
    import difflib

    near = difflib.get_close_matches(name_or_path, bundled_names(), n=3, cutoff=0.4)
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    raise BodyGraphError(
        f"unknown body '{name_or_path}'.{hint} Bundled bodies: {', '.join(bundled_names())}; "
        "or give the path of an MJCF .xml file."
    )
