"""Every number of a run's config has a stated range (runs/limits.py), and the check holds
to it: each end accepted or refused as stated, wrong types refused with the flag named."""

from __future__ import annotations

import dataclasses

import pytest

from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.errors import RunConfigError
from modular_ppo.runs.limits import LIMITS, Limit
from modular_ppo.runs.validate import check_numbers, numeric_fields


def test_every_numeric_field_has_a_stated_range():
    fields = numeric_fields(TrainRunConfig)
    assert len(fields) >= 40  # the enumeration finds the nested sections' numbers
    missing = sorted(set(fields) - set(LIMITS))
    assert not missing, f"numeric fields without a range in runs/limits.py: {missing}"
    assert sorted(set(LIMITS) - set(fields)) == []  # no range for a field that is gone
    assert {path: LIMITS[path].kind for path in fields} == fields


@dataclasses.dataclass(frozen=True)
class Inner:
    rate: float | None = None
    sizes: tuple[int, ...] = ()
    flag_: bool = False
    name: str = ""


@dataclasses.dataclass(frozen=True)
class Outer:
    inner: Inner = Inner()
    count: int = 1


def test_the_enumeration_sees_a_new_numeric_field():
    assert numeric_fields(Outer) == {"inner.rate": "float", "inner.sizes": "int", "count": "int"}
    with pytest.raises(RunConfigError, match="inner.rate: a number with no stated range"):
        check_numbers(Outer(), str)


def _config_with(path: str, value: object) -> object:
    """A default TrainRunConfig with `value` at `path`, built without its own checks."""
    def replaced(config, parts):
        head, *rest = parts
        new = value if not rest else replaced(getattr(config, head), rest)
        copy = object.__new__(type(config))
        for field in dataclasses.fields(config):
            object.__setattr__(copy, field.name, getattr(config, field.name))
        object.__setattr__(copy, head, new)
        return copy
    return replaced(TrainRunConfig(), path.split("."))


def _inside(limit: Limit) -> list[float]:
    ends = [limit.low, limit.high]
    if limit.low_open or limit.high_open:
        ends = [(limit.low + limit.high) / 2]
    return [int(v) if limit.kind == "int" else float(v) for v in ends]


def _outside(limit: Limit) -> list[float]:
    if limit.kind == "int":
        return [limit.low - 1, limit.high + 1]
    return [limit.low if limit.low_open else limit.low - abs(limit.low) - 1,
            limit.high if limit.high_open else limit.high * 2 + 1, float("nan"), float("inf")]


@pytest.mark.parametrize("path", sorted(LIMITS))
def test_each_range_holds_as_stated(path):
    limit = LIMITS[path]
    tuple_field = isinstance(getattr(TrainRunConfig(), path.split(".")[0], None), tuple) or (
        path.endswith("hidden_sizes"))
    wrap = (lambda v: (v,)) if tuple_field else (lambda v: v)
    for value in _inside(limit):
        check_numbers(_config_with(path, wrap(value)), flag)
    for value in _outside(limit):
        with pytest.raises(RunConfigError, match=f"^{flag(path)} .*(out of range|not finite)"):
            check_numbers(_config_with(path, wrap(value)), flag)
    for value in ("1", True) + ((1.0,) if limit.kind == "int" else ()):
        with pytest.raises(RunConfigError, match=f"^{flag(path)} .*not a (whole )?number"):
            check_numbers(_config_with(path, wrap(value)), flag)
