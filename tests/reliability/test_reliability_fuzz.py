"""A property-based fuzz (hypothesis, derandomised) over every numeric field of the run's
config and over the grammar of `modular_ppo:ppo_preset`, partitions and variant names: the
only outcomes are success or one clear line with exit 2, never a traceback, and a refused
input leaves the filesystem as it was.

`train` gets a --runs-root under a file, refused after the config is checked: a config the
checks let through ends there (exit 2, the runs root named), so each example costs no
training, and the property "a value outside its stated range never gets that far" is
checked against `runs/limits.py` independently. CI runs a few dozen examples per test; the
`-m benchmark` twins run 1,000 each.
"""

from __future__ import annotations

import math
from pathlib import Path
from xml.sax.saxutils import quoteattr

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reliability_tools import cli_main, plain, tiny_xml

from modular_ppo.runs.config import flag
from modular_ppo.runs.limits import LIMITS, Limit

FUZZ = dict(deadline=None, derandomize=True, database=None,
            suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
CI, MANY = settings(max_examples=25, **FUZZ), settings(max_examples=1000, **FUZZ)

TUPLE_FIELDS = ("body_env_shares", "body_loss_shares", "network.policy_hidden_sizes",
                "network.value_hidden_sizes")
SKIPPED = ("distributed.",)  # flags of several processes: test_reliability_multihost.py
FIELDS = sorted(p for p in LIMITS if not p.startswith(SKIPPED) and p not in
                ("body_env_shares", "body_loss_shares"))  # shares need several bodies


def _values(limit: Limit) -> st.SearchStrategy[str]:
    """Values as a user types them: near each end, huge, tiny, non-finite, fractional,
    not numbers."""
    ends = [limit.low, limit.high]
    near = [v + d for v in ends for d in (-1, -1e-9, 0, 1e-9, 1)]
    return st.one_of(
        st.sampled_from(near).map(lambda v: str(int(v)) if v == int(v) else repr(v)),
        st.integers(-10**30, 10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(["nan", "inf", "-inf", "1e308", "1e-320", "-0", "0.5", "1e3", "x",
                         "", "0x10", "1_000", str(2**64), "None"]),
    )


def _within(path: str, text: str) -> bool | None:
    """Whether the text, as tyro would parse it, lies in the field's range; None if tyro
    cannot parse it as the field's type (it refuses it itself)."""
    limit = LIMITS[path]
    try:
        value = int(text) if limit.kind == "int" else float(text)
    except ValueError:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return limit.holds(value)


def _tree(folder: Path) -> dict[Path, bytes | None]:
    return {p: (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


def _assert_one_clear_line(code: int, out: str) -> str:
    text = plain(out)
    assert code in (0, 2), out
    assert "Traceback" not in out, out
    if code == 2:
        assert text.count("error:") + text.count("For full helptext") == 1, out
    return text


@pytest.fixture
def tmp(tmp_path) -> Path:
    (tmp_path / "a_file.txt").write_text("not a folder")
    (tmp_path / "body.xml").write_text(tiny_xml())
    return tmp_path


def _numeric_flags(tmp: Path, data) -> None:
    paths = data.draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3, unique=True))
    argv = ["train", "--body", tmp / "body.xml", "--runs-root", tmp / "a_file.txt" / "runs"]
    given_values = {}
    for path in paths:
        value = data.draw(_values(LIMITS[path]))
        given_values[path] = value
        argv += [flag(path), value]
    before = _tree(tmp)
    text = _assert_one_clear_line(*cli_main(*argv))
    assert _tree(tmp) == before
    outside = [p for p, v in given_values.items() if _within(p, v) is False]
    if outside:  # refused by a check, before the runs root is looked at
        assert "--runs-root" not in text or "is a file" not in text, (given_values, text)


# The grammar of presets, partitions and variant names.

PPO_FIELDS = ["gamma", "n_envs", "n_minibatches", "learning_rate", "weight_decay",
              "normalize_advantages", "total_steps", "clip_range", "gama", "ppo.gamma"]
names = st.one_of(st.sampled_from(PPO_FIELDS), st.from_regex(r"[a-z_ .]{0,8}", fullmatch=True))
values = st.one_of(
    st.sampled_from(["0.99", "4", "none", "None", "true", "0", "1e9", "4000000", "-1", "nan",
                     "inf", "1e400", "", "0.5", "2", "1.5", "x", "=", str(2**70)]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-10**12, 10**12).map(str),
)


@st.composite
def presets(draw) -> str:
    """"k=v; k=v" items, with repeats, empty items, missing parts and stray separators."""
    items = []
    for _ in range(draw(st.integers(0, 4))):
        form = draw(st.sampled_from(["kv", "kv", "kv", "k", "=v", "kvv", "empty", "spaces"]))
        key, value = draw(names), draw(values)
        items.append({"kv": f"{key}={value}", "k": key, "=v": f"={value}",
                      "kvv": f"{key}={value}={value}", "empty": "",
                      "spaces": f" {key} = {value} "}[form])
    if items and draw(st.booleans()):
        items.append(items[0])  # a repeated key
    return draw(st.sampled_from([";", "; ", ";;", ","])).join(items)


@st.composite
def partitions(draw) -> str:
    modules = []
    for _ in range(draw(st.integers(0, 3))):
        module = draw(st.sampled_from(["a", "b", "", "a b", "base"]))
        bodies = draw(st.lists(st.sampled_from(["base", "arm", "nosuch", "", " "]), max_size=3))
        modules.append(f"{module}={', '.join(bodies)}" if draw(st.booleans()) else module)
    return "; ".join(modules)


variant_names = st.builds(
    lambda base, removed: base + "".join(f"-without-{m}" for m in removed),
    st.sampled_from(["walker2d-modular", "hopper-modular", "centipede-4", "tiny"]),
    st.lists(st.sampled_from(["foot_left", "thigh_left", "torso", "", "leg_1", "nosuch",
                              "foot_left-without-foot_left"]), max_size=3),
)


def _grammar(tmp: Path, data) -> None:
    custom = [f'<text name="modular_ppo:ppo_preset" data={quoteattr(data.draw(presets()))}/>']
    if data.draw(st.booleans()):
        custom.append(f'<text name="modular_ppo:partition" '
                      f'data={quoteattr(data.draw(partitions()))}/>')
    body = tmp / "annotated.xml"
    body.write_text(tiny_xml(custom=f"<custom>{''.join(custom)}</custom>"))
    before = _tree(tmp)
    _assert_one_clear_line(*cli_main("bodies", "show", body))
    code, out = cli_main("train", "--body", body, "--runs-root", tmp / "a_file.txt" / "runs")
    _assert_one_clear_line(code, out)
    assert code == 2  # the body's error or the runs root's: never trains
    code, out = cli_main("bodies", "show", data.draw(variant_names))
    _assert_one_clear_line(code, out)
    assert _tree(tmp) == before


PROPERTIES = {"numeric_fields": _numeric_flags,
              "preset_partition_and_variant_grammar": _grammar}


@pytest.mark.parametrize("check", PROPERTIES.values(), ids=PROPERTIES.keys())
@CI
@given(data=st.data())
def test_property(tmp, check, data):
    check(tmp, data)


@pytest.mark.benchmark
@pytest.mark.parametrize("check", PROPERTIES.values(), ids=PROPERTIES.keys())
@MANY
@given(data=st.data())
def test_property_many(tmp, check, data):
    check(tmp, data)
