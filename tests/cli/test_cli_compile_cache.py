"""The CLI's persistent compilation cache (modular_ppo.compile_cache): a second `train` of
the same shape, in a new process, loads the training step, the env reset and the
evaluation instead of compiling them (checked by JAX's own cache-hit log, not by timing),
reads the training step the first exported instead of tracing it, and trains exactly as
the first, on MJX and on the CPU backend (whose programs call
MuJoCo's C simulator through host calls, modular_ppo.env.host_call); --no-compile-cache
writes nothing; a folder that cannot be used gives one warning and the command runs
uncached."""

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest
from tiny_body import tiny_xml

from modular_ppo import cli
from modular_ppo.compile_cache import (
    EXPORTED,
    CompileCacheConfig,
    cache_dir,
    persistent_compile_cache,
)

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--ppo.n-envs", "4", "--ppo.n-minibatches", "2", "--ppo.rollout-length", "4",
        "--ppo.n-epochs", "1", "--env.episode-length", "8", "--ppo.total-steps", "32",
        "--eval.n-envs", "2", "--eval.episode-length", "4", "--no-video"]
"""Two iterations of 4 envs x 4 steps, an evaluation at the end."""
CACHED = ("train_step", "reset_envs", "run_episodes")
"""The programs a run compiles that take long enough to matter: the training step, the env
reset and the evaluation."""


@pytest.fixture(autouse=True)
def wide_output(monkeypatch):
    """Rich wraps at COLUMNS: wide enough that paths in messages stay whole."""
    monkeypatch.setenv("COLUMNS", "400")


@pytest.fixture(scope="module")
def body(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("body") / "tiny.xml"
    path.write_text(tiny_xml())
    return path


@pytest.fixture
def no_jax_cache_dir():
    """JAX's own cache folder unset (a session fixture elsewhere may have set it): the CLI's
    default folder is then the user's cache."""
    previous = jax.config.jax_compilation_cache_dir
    jax.config.update("jax_compilation_cache_dir", None)
    yield
    jax.config.update("jax_compilation_cache_dir", previous)


def _train_process(body: Path, runs_root: Path, name: str, cache: Path, backend: str) -> str:
    """`python cli.py train` in a new process, with JAX logging its compiles and cache hits;
    everything it printed."""
    done = subprocess.run(
        [sys.executable, "cli.py", "train", "--body", str(body), *TINY, "--backend", backend,
         "--runs-root",
         str(runs_root), "--run-name", name, "--compile-cache-dir", str(cache)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "JAX_LOG_COMPILES": "1", "COLUMNS": "400"},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _cache_hits(log: str) -> set[str]:
    """The programs JAX loaded from its persistent cache, from its log."""
    return set(re.findall(r"Persistent compilation cache hit for 'jit_(\w+)'", log))


def _cli(*args: object) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main([str(a) for a in args])
    return code, " ".join(out.getvalue().split())


@pytest.fixture(scope="module")
def run_pair(body, tmp_path_factory):
    """run_pair(backend) -> two runs of the same shape, one process each, sharing an empty
    cache folder: (runs root, cache folder, first run's log, second run's log, the exported
    steps' files with their modification times after the first run)."""
    pairs = {}

    def make(backend: str):
        if backend not in pairs:
            root = tmp_path_factory.mktemp(f"runs_{backend}")
            cache = tmp_path_factory.mktemp(f"compile_cache_{backend}")
            first = _train_process(body, root, "first", cache, backend)
            exported = _files_and_times(cache / EXPORTED)
            second = _train_process(body, root, "second", cache, backend)
            pairs[backend] = root, cache, first, second, exported
        return pairs[backend]

    return make


@pytest.fixture(params=["mjx", "cpu"])
def two_runs(run_pair, request):
    return run_pair(request.param)


def _files_and_times(folder: Path) -> dict[str, int]:
    return {path.name: path.stat().st_mtime_ns for path in folder.iterdir()}


def test_a_second_run_loads_its_programs_from_the_cache(two_runs):
    _, cache, first, second, _ = two_runs
    entries = {path.name.split("-")[0] for path in cache.iterdir()}
    assert {f"jit_{name}" for name in CACHED} <= entries, entries
    assert not _cache_hits(first) & set(CACHED)
    assert set(CACHED) <= _cache_hits(second), _cache_hits(second)


def test_a_second_run_reads_the_exported_step_instead_of_tracing_it(two_runs):
    """The step is exported only after it is traced, and then written: a second run that
    traced would have replaced the file."""
    _, cache, _, _, exported = two_runs
    assert len(exported) == 1, exported
    assert _files_and_times(cache / EXPORTED) == exported


def test_the_loaded_programs_train_as_the_compiled_ones(two_runs):
    """Same seed: the second run (programs loaded) logs the first run's metrics, row for
    row, except timings."""
    root, *_ = two_runs

    def rows(name: str) -> list[dict]:
        lines = (root / "tiny" / name / "metrics.jsonl").read_text().splitlines()
        return [{k: v for k, v in json.loads(line).items()
                 if not k.startswith(("time/", "throughput/"))} for line in lines]

    assert rows("second") == rows("first")
    assert len(rows("first")) == 3  # two iterations and the final evaluation


def test_eval_keeps_its_programs_in_the_users_cache_unless_told_not_to(
        run_pair, tmp_path, monkeypatch, no_jax_cache_dir):
    root, *_ = run_pair("mjx")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    default = tmp_path / "modular_ppo" / "jax"
    settings = {name: getattr(jax.config, name) for name in (
        "jax_enable_compilation_cache", "jax_compilation_cache_dir",
        "jax_persistent_cache_min_compile_time_secs")}

    # On the C simulator: its evaluation compiles in seconds, MJX's in tens of seconds, and
    # the cache is set up alike (the C simulator's programs are cached: `two_runs[cpu]`).
    code, out = _cli("eval", "--run", root / "tiny" / "first", "--episodes", 2,
                     "--backend", "cpu", "--no-compile-cache")
    assert code == 0, out
    assert not default.exists()

    code, out = _cli("eval", "--run", root / "tiny" / "first", "--episodes", 2,
                     "--backend", "cpu")
    assert code == 0, out
    assert any(path.name.startswith("jit_run_episodes-") for path in default.iterdir())
    assert settings == {name: getattr(jax.config, name) for name in settings}


def test_a_folder_that_cannot_be_used_warns_once_and_runs_uncached(run_pair, tmp_path):
    """The choice made: not an error, as a cache is only there to save time. (The evaluation
    runs on the C simulator: nothing to compile for MJX, and the same cache set-up.)"""
    root, *_ = run_pair("mjx")
    file = tmp_path / "not_a_folder"
    file.write_text("kept")
    code, out = _cli("eval", "--run", root / "tiny" / "first", "--episodes", 2,
                     "--backend", "cpu", "--compile-cache-dir", file)
    assert code == 0, out
    assert out.count("warning:") == 1
    assert (f"the compile cache folder {file} cannot be used" in out
            and "--compile-cache-dir a folder you can write to" in out
            and "--no-compile-cache" in out), out
    assert "deterministic" in out and "team_return" in out  # the evaluation ran
    assert file.read_text() == "kept"
    warnings = []  # a folder inside a file: the same warning, and no cache in use
    inside = file / "cache"
    with persistent_compile_cache(CompileCacheConfig(compile_cache_dir=inside),
                                  warnings.append) as folder:
        assert folder is None and not jax.config.jax_enable_compilation_cache
    assert len(warnings) == 1 and f"the compile cache folder {inside} cannot be used" in (
        warnings[0])
    assert file.read_text() == "kept"


def test_the_cache_folder_is_the_flag_then_jax_then_the_users_cache(
        tmp_path, monkeypatch, no_jax_cache_dir):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir(CompileCacheConfig()) == str(tmp_path / "xdg/modular_ppo/jax")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")  # the XDG spec: only absolute
    assert cache_dir(CompileCacheConfig()) == str(tmp_path / "home/.cache/modular_ppo/jax")
    # JAX's own setting, read from JAX_COMPILATION_CACHE_DIR or set by the calling program:
    jax.config.update("jax_compilation_cache_dir", str(tmp_path / "jax"))
    assert cache_dir(CompileCacheConfig()) == str(tmp_path / "jax")
    assert cache_dir(CompileCacheConfig(compile_cache_dir=tmp_path / "flag")) == str(
        tmp_path / "flag")
