"""Imported before every test module.

- modular_ppo picks the headless GL backend before any test imports mujoco (MuJoCo reads
  MUJOCO_GL once, at its first import).
- XLA's backend optimization is off for the whole suite (and the CLI subprocesses it
  starts, through the environment): the suite is dominated by compiling many small
  programs that then run briefly, and this cuts its CPU time by about 30% (tests/networks:
  234 -> 163 CPU-s) without changing what any test checks.
- The programs a test module compiled are released when it ends (see
  `release_compiled_programs`).
- The user's cache folder is a temporary one for the session (`user_cache_in_tmp`): CLI
  commands keep compiled programs there by default, not in ~/.cache.
"""

import gc
import os

if "--xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level=0"
    ).strip()

import jax  # noqa: E402
import pytest  # noqa: E402

import modular_ppo  # noqa: E402, F401


@pytest.fixture(scope="session", autouse=True)
def user_cache_in_tmp(tmp_path_factory):
    """XDG_CACHE_HOME, where CLI commands (also in the subprocesses tests start) keep their
    compilation cache by default, set to a session folder; restored afterwards."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user_cache")))
        yield


@pytest.fixture(scope="module", autouse=True)
def release_compiled_programs():
    """Drop JAX's caches of compiled programs after each test module.

    XLA:CPU maps three memory regions for every piece of machine code it compiles and keeps
    them while the program is cached. The whole suite in one process compiles enough to pass
    Linux's default limit of 65,530 mappings per process (vm.max_map_count), and XLA then
    aborts inside a compile. Session fixtures keep what they hold; a later module that calls
    a released function compiles it again.
    """
    yield
    jax.clear_caches()
    gc.collect()
