"""Checks that need an accelerator: `pytest -m accelerator -p no:xdist tests/accelerator` (one
process: one program holds the chip).

Every test here carries the `accelerator` marker. Where JAX sees no accelerator (CI) they
skip, saying so, before any fixture compiles. MODULAR_PPO_ACCELERATOR_ON_CPU=1 runs them on
CPU anyway, to debug their logic before spending device time.
"""

import os

import jax
import pytest

ON_CPU = "MODULAR_PPO_ACCELERATOR_ON_CPU"


def accelerator_missing() -> str | None:
    """Why these tests cannot run here; None when they can."""
    if os.environ.get(ON_CPU) == "1":
        return None
    if jax.default_backend() == "cpu":
        return (f"needs an accelerator; JAX runs on CPU here (set {ON_CPU}=1 to run the "
                "check on CPU)")
    return None


def pytest_collection_modifyitems(items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.path).startswith(here):
            item.add_marker(pytest.mark.accelerator)


def pytest_runtest_setup(item):
    if item.get_closest_marker("accelerator"):
        reason = accelerator_missing()
        if reason:
            pytest.skip(reason)
