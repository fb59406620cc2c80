"""The bundled bodies, one size per generated family (imported by name: pytest puts tests/
on sys.path for tests/conftest.py)."""

import re

from modular_ppo.body import bundled_names


def one_size_per_family() -> list[str]:
    """Every bundled body, with generated families (centipede-N, swimmer-N) at the first
    size `bundled_names()` lists: all their sizes come from one generator."""
    families: dict[str, str] = {}
    for name in bundled_names():
        families.setdefault(re.sub(r"-\d+$", "", name), name)
    return list(families.values())
