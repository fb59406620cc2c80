"""Imported before every test module.

- `prepare_process` picks the headless GL backend before any test imports mujoco (MuJoCo
  reads MUJOCO_GL once, at its first import).
- XLA's backend optimization is off for the CI suite (and the CLI subprocesses it starts,
  through the environment): the suite is dominated by compiling many small programs that
  then run briefly, and this cuts its CPU time by about 30% (tests/networks: 234 -> 163
  CPU-s) without changing what any test checks; LLVM's expensive passes are off too
  (`CI_SUITE_XLA_FLAGS`). It stays on for runs of `-m benchmark` or
  `-m accelerator` tests, which must run as users' programs run (`ci_suite_only`).
- The programs the test modules compiled are released once the process holds much of
  what Linux allows it or of memory (see `release_compiled_programs`); until then a later
  module reuses them (the session fixtures' envs and training steps, mostly).
- The user's cache folder is a temporary one for the session (`user_cache_in_tmp`): CLI
  commands keep compiled programs there by default, not in ~/.cache.
- `cli_train` runs `cli.py train` into a fresh runs root (the CLI tests' run dirs).
- `pytest -n 2 --dist loadfile` (CI's) hands out a folder of tests at a time, the slowest
  first (`pytest_xdist_make_scheduler`), so the two test processes end together.
"""

import ast
import gc
import os
from collections import OrderedDict
from pathlib import Path

import jax
import pytest

from modular_ppo.headless import prepare_process

prepare_process()


def ci_suite_only(markexpr: str) -> bool:
    """Whether a run with `-m markexpr` is the CI suite: it takes unmarked tests and leaves
    the benchmark ones out (the default `-m 'not benchmark'`), rather than a run of
    benchmark or accelerator tests (`-m benchmark`, `-m accelerator`) or of everything.
    An expression beyond names, `and`, `or`, `not` and parentheses counts as not the suite."""
    try:
        tree = ast.parse(markexpr, mode="eval").body if markexpr else None
    except SyntaxError:
        return False
    try:
        return _holds(tree, set()) and not _holds(tree, {"benchmark"})
    except ValueError:
        return False


def _holds(node: ast.expr | None, marks: set[str]) -> bool:
    """A mark expression's value for a test that carries exactly `marks`."""
    if isinstance(node, ast.Name):
        return node.id in marks
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _holds(node.operand, marks)
    if isinstance(node, ast.BoolOp):
        values = [_holds(value, marks) for value in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    raise ValueError(f"not a plain mark expression: {ast.dump(node) if node else None}")


CI_SUITE_XLA_FLAGS = {
    "--xla_backend_optimization_level": "0",
    "--xla_llvm_disable_expensive_passes": "true",
}
"""XLA:CPU's compile-time savers for the CI suite: backend optimization off, and LLVM's
expensive passes skipped as well (the env tests' own FAST_COMPILE): a few percent of the
CPU time of compile-bound files (tests/env/test_env_device_twin.py: 37.6 -> 35.2 and
39.2 -> 38.9 CPU-s in two repeats; one reading of it with
tests/interop/test_interop_jaxmarl.py gave 71 -> 60)."""


def pytest_configure(config):
    """XLA's backend optimization off for the CI suite (JAX reads XLA_FLAGS when its first
    backend starts, after this); a flag already in XLA_FLAGS stays as given."""
    flags = os.environ.get("XLA_FLAGS", "")
    if ci_suite_only(config.option.markexpr):
        added = [f"{name}={value}" for name, value in CI_SUITE_XLA_FLAGS.items()
                 if name not in flags]
        os.environ["XLA_FLAGS"] = " ".join([flags, *added]).strip()


FOLDER_SECONDS = {
    "tests/reliability": 480, "tests/ppo": 430, "tests/networks": 270, "tests/interop": 250,
    "tests/perf": 240, "tests/env": 240, "tests/cli": 190, "tests/body": 140,
    "tests/runs": 120, "tests/multibody": 110, "tests/docs": 70, "tests/learning": 40,
    "tests/packaging": 25,
}
"""Seconds the tests of each folder took in all, in `pytest -n 2 --dist loadfile` on a
2-core machine with the folders' files handed out one by one (rounded; only their order
matters here; a folder not named comes after these)."""


def _folder(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].rpartition("/")[0]


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` (CI's) hands out a folder's files together, the slowest folders
    first (`FOLDER_SECONDS`); other `--dist` modes are xdist's own.

    File by file, xdist hands out the files of most tests first: files of few tests and long
    fixtures (a run trained in subprocesses) came last, and one process ran them alone for
    minutes at the end. File by file slowest first, the two processes end together, but the
    files of a folder, which share session fixtures (the reliability tests' straight runs,
    the env tests' compiled envs) and compiled programs, are split between the processes
    and each computes them: 7% more CPU time (2,450 s against 2,280 s). A folder at a time,
    slowest first, keeps both: what is left at the end is short (the whole suite on a
    2-core machine: 1,535 s, file by file slowest first 1,324 s, a folder at a time
    1,247 s, the processes ending 20 s apart)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowFoldersFirst(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            return _folder(nodeid)

        def _assign_work_unit(self, node):
            if not self.ordered:  # the work queue is complete before the first assignment
                self.workqueue = OrderedDict(sorted(
                    self.workqueue.items(), key=lambda unit: -FOLDER_SECONDS.get(unit[0], 0)))
                self.ordered = True
            super()._assign_work_unit(node)

    return SlowFoldersFirst(config, log)


@pytest.fixture(scope="session", autouse=True)
def user_cache_in_tmp(tmp_path_factory):
    """XDG_CACHE_HOME, where CLI commands (also in the subprocesses tests start) keep their
    compilation cache by default, set to a session folder; restored afterwards."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("user_cache")))
        yield


RESIDENT_LIMIT = 3 * 2**30
"""Bytes of resident memory past which a test process drops its compiled programs, or a
quarter of the machine's memory where that is less (two test processes on CI)."""


def release_due() -> bool:
    """Whether this process should drop its compiled programs now: it holds half of the
    memory mappings Linux allows a process, or more resident memory than `RESIDENT_LIMIT`;
    True where /proc cannot say (not Linux)."""
    try:
        with open("/proc/self/maps") as maps:
            mappings = sum(1 for _ in maps)
        with open("/proc/sys/vm/max_map_count") as limit:
            max_mappings = int(limit.read())
        with open("/proc/self/statm") as statm:
            resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return True
    return mappings > max_mappings // 2 or resident > min(RESIDENT_LIMIT, memory // 4)


@pytest.fixture(scope="module", autouse=True)
def release_compiled_programs():
    """Drop JAX's caches of compiled programs after a test module once the process holds
    much (`release_due`); below that a later module that calls the same function (a session
    fixture's env or training step) does not compile it again (tests/env in one process:
    168 -> 150 CPU-s).

    XLA:CPU maps three memory regions for every piece of machine code it compiles and keeps
    them while the program is cached. The whole suite in one process compiles enough to pass
    Linux's default limit of 65,530 mappings per process (vm.max_map_count), and XLA then
    aborts inside a compile; one module adds a few thousand (1,300-6,000 in tests/networks).
    Programs held across modules also hold memory: tests/env grows from 1.2 to 2.4 GB.
    """
    yield
    if release_due():
        jax.clear_caches()
        gc.collect()


@pytest.fixture(scope="session")
def cli_train(tmp_path_factory):
    """(flags, body folder, run name) -> the run dir that `cli.py train` with these flags
    writes into a fresh runs root, asserting it exits 0."""
    from modular_ppo import cli

    def train(flags: list[str], body_folder: str, run_name: str) -> Path:
        root = tmp_path_factory.mktemp("runs")
        assert cli.main(["train", *flags, "--runs-root", str(root), "--run-name", run_name]) == 0
        return root / body_folder / run_name

    return train
