"""Parameter counts of a network, in total and by part."""

from __future__ import annotations

from collections import Counter

from flax import nnx


def count_parameters(network: nnx.Module) -> dict[str, int]:
    """Number of `nnx.Param` entries: "total", each top-level part ("policy", "value") and
    each part below it ("policy/front_left" for separate networks, "policy/trunk",
    "policy/head" for token networks). Normalizer statistics are not parameters."""
    counts: Counter[str] = Counter()
    for path, variable in nnx.to_flat_state(nnx.state(network, nnx.Param)):
        size = int(variable.get_value().size)
        counts["total"] += size
        names = [str(p) for p in path]
        counts[names[0]] += size
        if len(names) > 2:
            counts[f"{names[0]}/{names[1]}"] += size
    return {"total": counts.pop("total", 0), **dict(sorted(counts.items()))}
