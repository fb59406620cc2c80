"""Fixtures of the reliability tests: a JAX compilation cache shared with the subprocesses
the tests start, the tiny body's file, and one straight training run."""

from pathlib import Path

import jax
import pytest
from jax.experimental.compilation_cache import compilation_cache
from reliability_tools import TINY, cli_main, tiny_xml


@pytest.fixture(autouse=True)
def wide_output(monkeypatch):
    """Rich and tyro wrap at COLUMNS: wide enough that paths in messages stay whole."""
    monkeypatch.setenv("COLUMNS", "400")


@pytest.fixture(scope="session")
def compile_cache(tmp_path_factory):
    """A persistent JAX compilation cache for this session and its subprocesses
    (JAX_COMPILATION_CACHE_DIR), unset again afterwards."""
    path = tmp_path_factory.mktemp("jax_cache")
    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", str(path))
    yield path
    jax.config.update("jax_compilation_cache_dir", previous)
    compilation_cache.reset_cache()


@pytest.fixture(scope="session")
def tiny_body(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bodies") / "tiny.xml"
    path.write_text(tiny_xml())
    return path


@pytest.fixture(scope="session")
def runs_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="session")
def straight_run(compile_cache, tiny_body, runs_root) -> Path:
    """4 iterations (64 steps) in one go, checkpoints at 32 and 64."""
    code, out = cli_main("train", "--body", tiny_body, *TINY, "--ppo.total-steps", 64,
                         "--checkpoint-every-steps", 32, "--runs-root", runs_root,
                         "--run-name", "straight")
    assert code == 0, out
    return runs_root / "tiny" / "straight"
