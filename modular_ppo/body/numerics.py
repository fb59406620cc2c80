"""The <custom><numeric> values of a model, read once, and the one checked reader every
`modular_ppo:` number (and `init_qpos`) goes through.

`NumberRule` states what a numeric must hold: how many values, their type (a real
number, an integer, a 0/1 flag, a 'min max' range) and their range. `checked_numeric`
refuses anything else (a wrong count, NaN, an infinity where none is meant, a fraction
where an integer is meant, a value out of range) with a `BodyGraphError` naming the file,
the element, the bad value and the fix.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError

INIT_QPOS = "init_qpos"

MAX_MAGNITUDE = 1e6
"""The largest finite value any annotation number may have: far above every sensible
weight, range or pose, and far inside float32 (where rewards and states are computed), so
no product or sum of them overflows to inf."""


@dataclasses.dataclass(frozen=True)
class NumberRule:
    """What one numeric must hold; `need` says it in words for the error message."""

    kind: Literal["real", "integer", "flag", "range"]
    need: str
    count: int = 1
    """How many values (a range: 2)."""
    low: float = -MAX_MAGNITUDE
    high: float = MAX_MAGNITUDE


def checked_numeric(name: str, value: np.ndarray, rule: NumberRule, where: str) -> object:
    """`value` (the numeric's data) as the rule's type: float, int, bool, (lo, hi), or a
    tuple of floats where count > 1; BodyGraphError naming file, element and fix if it breaks
    the rule."""
    value = np.asarray(value, dtype=float).ravel()
    shown = " ".join(f"{v:g}" for v in value)

    def bad(need: str = rule.need) -> BodyGraphError:
        return BodyGraphError(
            f'{where}: <numeric name="{name}" data="{shown}">: needs {need}. Fix its data.'
        )

    if value.size != rule.count:
        raise bad()
    if np.isnan(value).any():
        raise bad()
    if rule.kind == "range":
        lo, hi = float(value[0]), float(value[1])
        if not lo < hi:
            raise bad()
        for v in (lo, hi):
            if math.isfinite(v) and not rule.low <= v <= rule.high:
                raise bad()
        return lo, hi
    if not np.isfinite(value).all() or ((value < rule.low) | (value > rule.high)).any():
        raise bad()
    if rule.kind == "flag":
        if value[0] not in (0.0, 1.0):
            raise bad()
        return bool(value[0])
    if rule.kind == "integer":
        if value[0] != math.floor(value[0]):
            raise bad()
        return int(value[0])
    if rule.count > 1:
        return tuple(float(v) for v in value)
    return float(value[0])


def read_numerics(model: mujoco.MjModel, where: str) -> dict[str, np.ndarray]:
    numerics = {}
    for i in range(model.nnumeric):
        start, size = int(model.numeric_adr[i]), int(model.numeric_size[i])
        name = mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i)
        numerics[name] = np.array(model.numeric_data[start : start + size])
    if INIT_QPOS in numerics:
        rule = NumberRule("real", f"nq = {model.nq} finite values within "
                          f"±{MAX_MAGNITUDE:g}, one per qpos entry", count=model.nq)
        checked_numeric(INIT_QPOS, numerics[INIT_QPOS], rule, where)
    return numerics
