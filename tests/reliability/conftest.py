"""Fixtures of the reliability tests: a JAX compilation cache shared with the subprocesses
the tests start, the tiny body's file, and straight training runs (one per backend)."""

from pathlib import Path

import jax
import pytest
from jax.experimental.compilation_cache import compilation_cache
from reliability_tools import TINY, TINY_ACTUATORS, cli_main, tiny_xml


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


STRAIGHT_RUN_NAMES = {"cpu": "straight", "mjx": "straight-mjx", "two bodies": "straight"}


@pytest.fixture(scope="session")
def second_tiny_body(tmp_path_factory) -> Path:
    """Another tiny body (its own name, a weaker arm motor), to train two in one run."""
    path = tmp_path_factory.mktemp("bodies") / "tiny-two.xml"
    path.write_text(tiny_xml(name="tiny-two", actuators=TINY_ACTUATORS.replace(
        'gear="5"', 'gear="3"')))
    return path


@pytest.fixture(scope="session")
def case_flags(tiny_body, second_tiny_body):
    """case_flags(case) -> (the train flags that choose the case's bodies and backend, the
    run's folder name under the runs root). Cases: "cpu" and "mjx" (the tiny body on
    that backend), "two bodies" (both tiny bodies, one shared network, CPU backend)."""

    def flags(case: str) -> tuple[list, str]:
        if case == "two bodies":
            return (["--body", f"{tiny_body},{second_tiny_body}", "--arch", "shared",
                     "--backend", "cpu"], "tiny+tiny-two")
        return ["--body", tiny_body, "--backend", case], "tiny"

    return flags


@pytest.fixture(scope="session")
def straight_runs(compile_cache, case_flags, runs_root):
    """straight_runs(case) -> the run dir of 4 iterations (64 steps) in one go of that
    case (see `case_flags`), checkpoints at 32 and 64; trained once per session."""
    runs: dict[str, Path] = {}

    def straight(case: str) -> Path:
        if case not in runs:
            name = STRAIGHT_RUN_NAMES[case]
            body_flags, folder = case_flags(case)
            code, out = cli_main("train", *body_flags, *TINY,
                                 "--ppo.total-steps", 64, "--checkpoint-every-steps", 32,
                                 "--runs-root", runs_root, "--run-name", name)
            assert code == 0, out
            runs[case] = runs_root / folder / name
        return runs[case]

    return straight


@pytest.fixture(scope="session")
def straight_run(straight_runs) -> Path:
    """The CPU backend's straight run (what CI machines train on by default)."""
    return straight_runs("cpu")
