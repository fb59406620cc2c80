"""Every number of a run's config checked against its stated range (`runs.limits`), and
its body count against its cap, before any work starts: `check_config`, called when a
`TrainRunConfig` is built, whether from flags, a body's `ppo_preset` or a resumed run's
config.json."""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
import types
import typing
from collections.abc import Callable
from typing import Any

from modular_ppo.runs.errors import RunConfigError
from modular_ppo.runs.limits import LIMITS, MAX_BODIES, Limit


@functools.cache
def numeric_fields(cls: type, prefix: str = "") -> dict[str, str]:
    """Field path -> "int" or "float" for every field of the dataclass `cls` (nested
    dataclasses flattened) whose type is a number, an optional number or a tuple of numbers
    (bools are flags, not numbers)."""
    found: dict[str, str] = {}
    for name, hint in typing.get_type_hints(cls).items():
        path = f"{prefix}{name}"
        if dataclasses.is_dataclass(hint):
            found.update(numeric_fields(hint, f"{path}."))
        elif (kind := _number_kind(hint)) is not None:
            found[path] = kind
    return found


def _number_kind(hint: Any) -> str | None:
    if hint is int:
        return "int"
    if hint is float:
        return "float"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        kinds = {_number_kind(a) for a in args if a is not type(None)}
        return kinds.pop() if len(kinds) == 1 else None
    if origin is tuple and args and (args[-1] is Ellipsis or len(set(args)) == 1):
        return _number_kind(args[0])
    return None


def check_config(config: Any, flag: Callable[[str], str]) -> None:
    """Raise RunConfigError for a number of the run's config outside its stated range
    (`check_numbers`) or more bodies, trained and held out, than `MAX_BODIES`."""
    check_numbers(config, flag)
    bodies = (*config.bodies, *config.held_out_bodies)
    if len(bodies) > MAX_BODIES:
        raise RunConfigError(
            f"--body / --held-out: {len(bodies)} bodies; a run takes at most {MAX_BODIES} "
            "(each compiles its own environment). Give fewer, or split them over runs."
        )


def check_numbers(config: Any, flag: Callable[[str], str]) -> None:
    """Raise RunConfigError, naming the field by `flag(path)`, its value and its range, for
    the first number of the dataclass `config` that is of the wrong type (not a whole
    number where one is needed), not finite or out of its `LIMITS` range; None is left to
    the field's own checks. RunConfigError too for a numeric field with no stated range."""
    for path in numeric_fields(type(config)):
        if path not in LIMITS:
            raise RunConfigError(f"{path}: a number with no stated range; add it to "
                                 "modular_ppo/runs/limits.py LIMITS.")
        value = functools.reduce(getattr, path.split("."), config)
        for item in value if isinstance(value, (tuple, list)) else (value,):
            problem = _problem(item, LIMITS[path])
            if problem:
                shown = value if isinstance(value, (tuple, list)) else item
                raise RunConfigError(f"{flag(path)} {_shown(shown)}: {problem}")


def check_record(record: dict[str, Any], cls: type, flag: Callable[[str], str]) -> None:
    """`check_numbers` on a config as read from JSON (a resumed run's config.json): the
    numbers of `record`, nested dicts by section, before the dataclass `cls` is built from
    it, so a hand-edited value of the wrong type is named rather than failing inside a
    section's own checks. Missing entries are left to the defaults."""
    for path in numeric_fields(cls):
        value: Any = record
        for key in path.split("."):
            value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
        if value is _MISSING:
            continue
        for item in value if isinstance(value, list) else (value,):
            problem = _problem(item, LIMITS[path])
            if problem:
                raise RunConfigError(f"{flag(path)} {_shown(value)}: {problem}")


_MISSING = object()


def _problem(value: object, limit: Limit) -> str | None:
    """What is wrong with `value` under `limit`, as the fix to give; None if nothing."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"not a number ({type(value).__name__}); give {limit.text()}."
    if limit.kind == "int" and not isinstance(value, numbers.Integral):
        return f"not a whole number; give {limit.text()}."
    if not math.isfinite(value):
        return f"not finite; give {limit.text()}."
    if not limit.holds(value):
        return f"out of range; give {limit.text()}."
    return None


def _shown(value: object) -> str:
    """A value as the message shows it: numbers as written, anything else in quotes."""
    if isinstance(value, (tuple, list)):
        return " ".join(map(_shown, value))
    if value is None:
        return "None"
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        return str(value)
    return repr(value)

