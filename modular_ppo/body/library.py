"""Bundled morphologies by name: MJCF files in `bodies/`, generated families
("centipede-N", "swimmer-N" for any valid N) and the SMP / AMORPHEUS files
("smp-walker_3_main", `modular_ppo.body.smp`)."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from pathlib import Path

import mujoco

from modular_ppo.body.bundled_dir import BODIES_DIR
from modular_ppo.body.centipede import CENTIPEDE_SIZES, centipede_spec, is_centipede_size
from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.partition import Partition
from modular_ppo.body.smp import smp_spec
from modular_ppo.body.swimmer import SWIMMER_SIZES, is_swimmer_size, swimmer_spec
from modular_ppo.body.variants import WITHOUT, split_variant, variant_spec

GENERATORS: dict[str, tuple[Callable[[int], mujoco.MjSpec], Callable[[int], bool], str]] = {
    "centipede": (centipede_spec, is_centipede_size, CENTIPEDE_SIZES),
    "swimmer": (swimmer_spec, is_swimmer_size, SWIMMER_SIZES),
}
"""Family name -> (builder of the spec for size N, whether the family has size N, the
sizes it has in words); N is legs for centipedes, segments for swimmers."""

DEFAULT_GENERATED = ("centipede-4", "centipede-6", "centipede-8", "swimmer-4", "swimmer-6")

MAX_SIZE_DIGITS = 9
"""Sizes with more digits are past every family's cap (refused as 10**9, never converted)."""

MAX_RANGE_SIZES = 1024
"""The most sizes a family range ("centipede-4..8") may span."""

_GENERATED_NAME = re.compile(r"^(?P<family>[a-z]+)-(?P<size>[^-]+)$")


def bundled_names() -> list[str]:
    """The bodies in `bodies/` and a few default sizes of the generated families (e.g.
    "centipede-6", "swimmer-4"; `load_body` takes any valid size)."""
    return sorted(p.stem for p in BODIES_DIR.glob("*.xml")) + list(DEFAULT_GENERATED)


def body_spec(name: str) -> mujoco.MjSpec | None:
    """The spec of a generated body such as "centipede-6", None if `name` is no family's."""
    match = _GENERATED_NAME.match(name)
    if match is None or match["family"] not in GENERATORS:
        return None
    if not match["size"].isdigit():
        raise BodyGraphError(
            f"{name}: the size of a generated body is a whole number, as in "
            f"{match['family']}-6. Write {match['family']}-N."
        )
    build, has_size, sizes = GENERATORS[match["family"]]
    digits = match["size"]
    size = int(digits) if len(digits) <= MAX_SIZE_DIGITS else 10**MAX_SIZE_DIGITS
    if not has_size(size):
        raise BodyGraphError(f"{match['family']}-{size}: {sizes}")
    return build(size)


def family_members(stem: str, first: int, last: int) -> tuple[str, ...]:
    """The names `stem`-N for N in first..last (inclusive) that a generated family has
    ("centipede", 3, 7 -> centipede-4, centipede-6: centipedes have an even number of legs);
    every N for any other stem (each name then loads, or fails, on its own)."""
    if last - first >= MAX_RANGE_SIZES:
        raise BodyGraphError(
            f"{stem}-{first}..{last}: a range spans at most {MAX_RANGE_SIZES} sizes. Give a "
            f"narrower range, e.g. {stem}-{first}..{first + 8}."
        )
    _, has_size, _ = GENERATORS.get(stem, (None, lambda size: True, ""))
    return tuple(f"{stem}-{size}" for size in range(first, last + 1) if has_size(size))


def load_body(name_or_path: str, partition: Partition | None = None) -> BodyGraph:
    """A bundled body by name (`bundled_names()`, any size of a generated family, or a
    limb-removed variant "<body>-without-<module>", see `variants`), or any MJCF file by
    path."""
    xml = BODIES_DIR / f"{name_or_path}.xml"
    if "/" not in name_or_path and len(xml.name) < 256 and xml.is_file():  # no OS error
        return BodyGraph.from_mjcf(xml, partition, name_or_path)
    spec = body_spec(name_or_path) or smp_spec(name_or_path)
    if spec is not None:
        return BodyGraph.from_mjcf(spec, partition, name_or_path)
    variant = split_variant(name_or_path)
    if variant is not None and "/" not in name_or_path:
        base = load_body(variant[0])
        base_spec = body_spec(base.name) or mujoco.MjSpec.from_file(str(BODIES_DIR / f"{base.name}.xml"))
        spec = variant_spec(name_or_path, base_spec, base)
        return BodyGraph.from_mjcf(spec, partition, name_or_path)
    if name_or_path.endswith(".xml") or "/" in name_or_path:
        return BodyGraph.from_mjcf(Path(name_or_path), partition)
    near = difflib.get_close_matches(name_or_path, bundled_names(), n=3, cutoff=0.4)
    hint = f" Did you mean: {', '.join(near)}?" if near else ""
    raise BodyGraphError(
        f"unknown body '{name_or_path}'.{hint} Bundled bodies: {', '.join(bundled_names())} "
        f"(generated families take any size: {', '.join(f'{f}-N' for f in GENERATORS)}; "
        f"any bundled body without some limbs: <body>{WITHOUT}<module>); "
        "or give the path of an MJCF .xml file."
    )
