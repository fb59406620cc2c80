"""No traceback, whatever the input: generated flag values and generated `modular_ppo:`
annotation values go through `modular_ppo.cli.main` in this process, and each run ends
with exit code 0 (done) or 2 (a clear one-line error), never a Python traceback.

Nothing here trains: `train` always gets a --runs-root under a file, which the path check
refuses before any work, so its generated flags only meet parsing and validation; the
annotations go through `bodies show` (the body loaded, no network compiled).
"""

from __future__ import annotations

import contextlib
import io
import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tiny_body import tiny_xml

from modular_ppo import cli
from modular_ppo.body.task import NUMBER_RULES

SETTINGS = settings(max_examples=40, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


def _main(*args: object) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue()


def _assert_no_traceback(code: int, out: str) -> None:
    assert code in (0, 2), out
    assert "Traceback" not in out, out
    if code == 2:  # our one-line error, or tyro's usage error
        assert "error:" in out or "For full helptext" in out, out


@pytest.fixture(autouse=True)
def wide_output(monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")


# Generated values.

text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"),
               max_size=20)
"""Any text a shell can pass as one argument (no NUL, no lone surrogates)."""

floats = st.floats(allow_nan=True, allow_infinity=True)
numbers = st.one_of(
    floats.map(repr), st.integers(-10**30, 10**30).map(str),
    st.sampled_from(["nan", "inf", "-inf", "-0", "1e308", "1e-320", "0x10", "1_000", ""]),
)
flag_values = st.one_of(numbers, text)


@st.composite
def output_paths(draw, tmp: Path, suffix: str) -> str:
    """A path under `tmp`: in missing folders, an existing folder, under a file, with
    another file type, or any text."""
    kind = draw(st.sampled_from(["missing", "dir", "under_file", "suffix", "text", "empty"]))
    if kind == "missing":
        parts = draw(st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), min_size=1,
                              max_size=3))
        return str(tmp.joinpath(*parts) / f"out{suffix}")
    if kind == "dir":
        return str(tmp)
    if kind == "under_file":
        return str(tmp / "a_file.txt" / f"out{suffix}")
    if kind == "suffix":
        return str(tmp / f"out.{draw(st.from_regex(r'[a-z0-9]{0,4}', fullmatch=True))}")
    if kind == "empty":
        return ""
    return draw(text)


@pytest.fixture
def tmp(tmp_path) -> Path:
    (tmp_path / "a_file.txt").write_text("not a folder")
    (tmp_path / "body.xml").write_text(tiny_xml())
    return tmp_path


# Flags.

TRAIN_FLAGS = ["--ppo.n-envs", "--ppo.gamma", "--ppo.learning-rate", "--ppo.clip-range",
               "--ppo.total-steps", "--env.episode-length", "--env.ctrl-cost-weight",
               "--eval.n-envs", "--keep-checkpoints", "--seed", "--max-modules", "--arch",
               "--run-name", "--partition", "--video-length", "--backend"]


@SETTINGS
@given(data=st.data())
def test_train_flags_end_in_a_clear_exit(tmp, data):
    flags = data.draw(st.lists(st.sampled_from(TRAIN_FLAGS), min_size=1, max_size=3, unique=True))
    argv = ["train", "--body", tmp / "body.xml", "--runs-root", tmp / "a_file.txt" / "runs"]
    for flag in flags:
        argv += [flag, data.draw(flag_values)]
    _assert_no_traceback(*_main(*argv))


@SETTINGS
@given(data=st.data())
def test_train_body_and_runs_root_end_in_a_clear_exit(tmp, data):
    body = data.draw(st.one_of(text, st.just(str(tmp / "body.xml"))))
    root = data.draw(output_paths(tmp, ""))
    code, out = _main("train", "--body", body, "--runs-root", root, "--ppo.n-envs", "3")
    _assert_no_traceback(code, out)
    assert code == 2  # n_envs 3 is not a multiple of the minibatches: never trains


@SETTINGS
@given(data=st.data())
def test_output_and_number_flags_of_the_other_commands_end_in_a_clear_exit(tmp, data):
    run = data.draw(st.one_of(text, st.just(str(tmp / "no_run"))))
    argv = data.draw(st.sampled_from([
        ["render", "--run", run, "--out", data.draw(output_paths(tmp, ".mp4")),
         "--steps", data.draw(flag_values)],
        ["eval", "--run", run, "--episodes", data.draw(flag_values),
         "--warmup-steps", data.draw(flag_values)],
        ["analyze", run, "--png", data.draw(output_paths(tmp, ".png"))],
        ["analyse", run],
        ["bodies", "show", tmp / "body.xml", "--png", data.draw(output_paths(tmp, ".png"))],
        ["bodies", "show", data.draw(text), "--partition", data.draw(text)],
    ]))
    _assert_no_traceback(*_main(*argv))


# Annotations.

NUMERIC_KEYS = [f"modular_ppo:{key}" for key in NUMBER_RULES] + ["init_qpos"]
TEXT_KEYS = ["modular_ppo:velocity_source", "modular_ppo:healthy_bounds",
             "modular_ppo:ppo_preset", "modular_ppo:partition", "modular_ppo:task_reference",
             "modular_ppo:ctrl_cost_on", "modular_ppo:partition:mine"]


@st.composite
def annotations(draw) -> str:
    """One to three `<numeric>` / `<text>` elements with generated data."""
    elements = []
    for _ in range(draw(st.integers(1, 3))):
        if draw(st.booleans()):
            key = draw(st.sampled_from(NUMERIC_KEYS))
            values = draw(st.lists(st.one_of(
                floats.map(lambda v: "nan" if math.isnan(v) else repr(v)),
                st.integers(-10**20, 10**20).map(str),
                st.sampled_from(["0", "1", "5", "-1", "1000", "1001", "0.5"]),
            ), min_size=1, max_size=3))
            elements.append(f'<numeric name="{key}" data="{" ".join(values)}"/>')
        else:
            key = draw(st.sampled_from(TEXT_KEYS))
            data = draw(st.one_of(
                text, st.sampled_from(["root", "com", "base", "strict", "a=base; b=arm",
                                       "gamma=nan", "gamma=1e400", "n_envs=-4", "base=arm"]),
            ))
            elements.append(f"<text name={quoteattr(key)} data={quoteattr(data)}/>")
    return "".join(elements)


@SETTINGS
@given(custom=annotations())
def test_generated_annotations_end_in_a_clear_exit(tmp, custom):
    body = tmp / "annotated.xml"
    body.write_text(tiny_xml(custom=f"<custom>{custom}</custom>"))
    code, out = _main("bodies", "show", body)
    _assert_no_traceback(code, out)
    code, out = _main("train", "--body", body, "--runs-root", tmp / "a_file.txt" / "runs")
    _assert_no_traceback(code, out)
    assert code == 2  # the body's error, or the runs root's: never trains


def test_output_folders_that_do_not_exist_are_created(tmp):
    png = tmp / "new" / "folders" / "graph.png"
    code, out = _main("bodies", "show", tmp / "body.xml", "--png", png)
    assert code == 0, out
    assert png.is_file()
