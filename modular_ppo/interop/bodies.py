"""The body an adapter serves: by name or path (the CLI's `load_body`), or a BodyGraph."""

from __future__ import annotations

from modular_ppo.body import BodyGraph, Partition, load_body
from modular_ppo.interop.errors import InteropError


def resolve_body(body: str | BodyGraph, partition: Partition | None) -> BodyGraph:
    """A body by bundled name, generated-family name ("centipede-6") or MJCF path, with
    `partition` (unknown names and partitions raise BodyGraphError listing the choices),
    or a BodyGraph as it is."""
    if isinstance(body, BodyGraph):
        if partition is not None:
            raise InteropError(
                f"partition={partition!r} given with a BodyGraph, which is already partitioned; "
                "pass the body's name or path with the partition, or load it with "
                "load_body(name, partition)."
            )
        return body
    return load_body(body, partition)
