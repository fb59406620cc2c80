"""benchmarks/accelerator.sh on CPU with tiny shapes: every part of the plan gives its JSON
row and its table line, the table prints again from the JSON, parts the budget cannot hold
are skipped with a row saying so, and tests/conftest.py keeps XLA's optimization off for the
CI suite only. The accelerator run itself is DEVICE_CALL.md's; no timing is checked here."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tiny_body import tiny_xml

ROOT = Path(__file__).resolve().parents[2]
PLAN = ["raw/4", "train-first/4", "train-second/4", "backend/cpu-pipelined/4", "host/4"]
TRAIN_FLAGS = ["--backend", "cpu", "--ppo.n-minibatches", "2", "--ppo.rollout-length", "4",
               "--ppo.n-epochs", "1", "--env.episode-length", "8", "--ppo.total-steps", "160"]
"""MuJoCo's C simulator for training (no MJX training program to compile on CPU); the raw
part is MJX's, the one the accelerator runs. 10 calls of 4 envs x 4 steps: the progress
line at the last step comes after the part's timed calls, where without an end the part
waited for the next line (one every 5 s) and trained ~700 calls meanwhile."""
BODY_XML = tiny_xml(world='<geom name="floor" type="plane" size="5 5 0.1"/>')
"""The tiny body (`--body` its file): far cheaper to compile than the script's default ant."""


def _load(name: str, path: Path, monkeypatch):
    """The module at `path`, registered as `name` for the test (dataclasses look it up)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def accelerator(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    return _load("accelerator", ROOT / "benchmarks/accelerator.py", monkeypatch)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("accelerator")
    body = out / "tiny.xml"
    body.write_text(BODY_XML)
    done = subprocess.run(
        ["bash", str(ROOT / "benchmarks/accelerator.sh"), "--budget-s", "3000", "--time-scale",
         "10", "--body", str(body), "--out", str(out), "--plan", *PLAN, "--", *TRAIN_FLAGS],
        cwd=ROOT, capture_output=True, text=True, timeout=3000,
        env={**os.environ, "PYTHON": sys.executable, "COLUMNS": "200"})
    assert done.returncode == 0, done.stdout + done.stderr
    return done, out, str(body)


def test_every_part_gives_its_row_and_line(tiny_run):
    done, out, body = tiny_run
    record = json.loads((out / "accelerator.json").read_text())
    assert record["devices"]["platform"] == "cpu" and record["devices"]["host_cores"] >= 1
    assert done.stdout.startswith("device: cpu x 1 (JAX platform cpu)")
    assert record["body"] == body
    assert all(row.get("body") == body or body in row["flags"] for row in record["rows"])
    rows = {row["part"]: row for row in record["rows"]}
    assert list(rows) == PLAN
    for row in rows.values():
        assert row["steps_per_s"] > 0 and row["n_envs"] == 4, row
    assert rows["raw/4"]["program_bytes"] > 0 and rows["raw/4"]["compile_s"] > 0
    for part in ("train-first/4", "train-second/4"):
        assert rows[part]["compile_s"] > 0 and rows[part]["calls"] >= 2, rows[part]
        assert rows[part]["first_progress_s"] > 0, rows[part]
    table = (out / "accelerator.md").read_text()
    assert re.search(r"- Device: cpu x 1 \(JAX platform cpu\); host .+, \d+ cores", table)
    assert table.startswith("## Accelerator run of ") and f"({body})" in table.splitlines()[0]
    for part in PLAN:
        assert re.search(rf"^\| {part} \| .+ \| 4 \| [\d,]+ \| [\d.]+ \|", table, re.MULTILINE), (
            part, table)


def test_the_table_prints_again_from_the_json(tiny_run):
    _, out, _ = tiny_run
    again = subprocess.run([sys.executable, str(ROOT / "benchmarks/accelerator.py"), "--table",
                            str(out / "accelerator.json")], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
    assert again.returncode == 0, again.stderr
    assert again.stdout == (out / "accelerator.md").read_text()


def test_parts_the_budget_cannot_hold_are_skipped_saying_so(accelerator):
    rows = []
    accelerator.run_plan(["raw/4096", "brax/current"], 30.0, time.perf_counter(), [],
                         Path("unused"), rows.append)
    assert [row["part"] for row in rows] == ["raw/4096", "brax/current"]
    assert all(re.fullmatch(r"\d+ s of the budget left, it needs about \d+ s", row["skipped"])
               for row in rows), rows


def test_a_part_that_fails_at_once_is_tried_once_more(accelerator, monkeypatch):
    tries = []

    def first_refused(kind, argument, timeout_s, flags, cache, body):
        tries.append((kind, argument))
        if len(tries) == 1:
            return {"error": "the chip is busy"}
        return {"n_envs": 4, "steps_per_s": 1.0}

    monkeypatch.setattr(accelerator, "_run_part", first_refused)
    monkeypatch.setattr(accelerator, "RETRY_WAIT_S", 0.0)
    rows = []
    accelerator.run_plan(["raw/4"], 100.0, time.perf_counter(), [], Path("unused"), rows.append)
    assert tries == [("raw", "4")] * 2
    assert rows == [dict(part="raw/4", kind="raw", first_try_error="the chip is busy",
                         timeout_s=75.0, n_envs=4, steps_per_s=1.0)]


def test_a_plan_part_of_an_unknown_kind_is_refused_naming_the_kinds(accelerator):
    with pytest.raises(SystemExit, match="'gpu/4096': a part is KIND/ARG with KIND one of raw"):
        accelerator.parse_part("gpu/4096")


def test_a_backend_part_names_the_backend_and_the_env_count(accelerator):
    assert accelerator.parse_part("backend/cpu-pipelined/4096") == ("backend",
                                                                     "cpu-pipelined/4096")
    with pytest.raises(SystemExit, match="backend/ takes a --backend value and an env count"):
        accelerator.parse_part("backend/4096")


@pytest.mark.parametrize(("markexpr", "ci"), [
    ("not benchmark", True),
    ("not benchmark and not accelerator", True),
    ("benchmark", False),
    ("accelerator", False),
    ("", False),
    ("not (benchmark or accelerator)", True),
    ("benchmark or not benchmark", False),
    ("not slow", False),  # takes benchmark tests too: they must run as users' programs run
    ("not benchmark and marker(x=1)", False),  # beyond names: not taken for the suite
    ("not (", False),
])
def test_only_the_ci_suite_runs_without_xla_optimization(markexpr, ci, monkeypatch):
    conftest = _load("root_conftest", ROOT / "tests/conftest.py", monkeypatch)
    assert conftest.ci_suite_only(markexpr) == ci


@pytest.mark.benchmark
def test_both_engines_at_once_step_every_env(monkeypatch):
    """The split case (a draft of the two-engine split) on CPU: its figures are there and
    the two engines' envs add up; how much the overlap hides is the accelerator's to say."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    throughput = _load("throughput", ROOT / "benchmarks/throughput.py", monkeypatch)
    result = throughput.run_case_process("split-step/16/8", 900)
    assert "error" not in result, result
    assert result["n_envs"] == 16 and result["host_envs"] == 8 and result["steps_per_s"] > 0
    assert result["device_call_s"] > 0 and result["host_call_s"] > 0 and result["compile_s"] > 0
