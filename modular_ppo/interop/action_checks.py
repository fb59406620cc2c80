"""The actions a Gymnasium, PettingZoo or JaxMARL user hands an adapter, checked before they
reach JAX: type, agents, shape, dtype and (on the host) finiteness, each error naming the
agent and the space it expects (`AgentActionError`).

Gymnasium and PettingZoo check in numpy on the host (every step, microseconds); JaxMARL's
step is traced, so its check runs once per trace and covers what a trace knows (keys,
shapes, dtypes), not the values.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from jaxtyping import Float

from modular_ppo.env.actions import check_action_keys
from modular_ppo.interop.errors import AgentActionError

Space = Any
"""A Gymnasium or JaxMARL Box: anything with a `shape`."""

_NUMBER_KINDS = "iuf"
"""numpy dtype kinds an action may have: signed and unsigned integers, floats."""


def checked_flat_action(
    action: object, space_shape: tuple[int, ...], slices: Mapping[str, slice]
) -> Float[np.ndarray, "act"]:
    """The Gymnasium view's action (the agents' actions concatenated in agent order, each
    agent's entries at `slices[agent]`) as float32 of shape `space_shape`; AgentActionError
    for anything else, or a non-finite entry (naming its agent)."""
    order = ", ".join(f"{a} ({s.stop - s.start})" for a, s in slices.items())
    expected = (f"give shape {space_shape}: the agents' actions concatenated in "
                f"order {order}, finite numbers in [-1, 1]")
    values = _numbers(action, f"action of type {type(action).__name__}", expected)
    if values.shape != space_shape:
        raise AgentActionError(f"action has shape {values.shape}; {expected}.")
    for agent, part in slices.items():
        _check_finite(values[part], agent, expected)
    return values


def checked_agent_actions(
    actions: object, spaces: Mapping[str, Space]
) -> dict[str, Float[np.ndarray, "act"]]:
    """The PettingZoo view's actions (agent -> array of its space's shape) as float32
    arrays; AgentActionError for another type, a missing or unknown agent, or an agent's
    action of another shape or dtype or with a non-finite entry."""
    shapes = _shapes(spaces)
    check_action_keys(actions, shapes, keyed_by="agent", error=AgentActionError,
                      subject="actions")
    checked = {}
    for agent, shape in shapes.items():
        expected = f"give shape {shape}, finite numbers in [-1, 1] (agent {agent!r}'s Box)"
        values = _numbers(actions[agent], f"the action of agent {agent!r} "
                          f"({type(actions[agent]).__name__})", expected)
        if values.shape != shape:
            raise AgentActionError(
                f"the action of agent {agent!r} has shape {values.shape}; {expected}.")
        _check_finite(values, agent, expected)
        checked[agent] = values
    return checked


def check_traced_actions(actions: object, spaces: Mapping[str, Space]) -> None:
    """The JaxMARL view's check, at trace time: agent -> array of its space's shape with a
    number dtype; AgentActionError otherwise. (Values are unknown while tracing.)"""
    shapes = _shapes(spaces)
    check_action_keys(actions, shapes, keyed_by="agent", error=AgentActionError,
                      subject="actions")
    for agent, shape in shapes.items():
        value = actions[agent]
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            value = np.asarray(value) if _is_numeric_like(value) else None
            dtype = getattr(value, "dtype", None)
        expected = f"give shape {shape}, floats in [-1, 1] (agent {agent!r}'s Box)"
        if dtype is None or np.dtype(dtype).kind not in _NUMBER_KINDS:
            raise AgentActionError(f"the action of agent {agent!r} is "
                                   f"{type(actions[agent]).__name__} of dtype {dtype}; "
                                   f"{expected}.")
        if tuple(np.shape(value)) != shape:
            raise AgentActionError(f"the action of agent {agent!r} has shape "
                                   f"{tuple(np.shape(value))}; {expected}.")


def _shapes(spaces: Mapping[str, Space]) -> dict[str, tuple[int, ...]]:
    return {agent: tuple(space.shape) for agent, space in spaces.items()}


def _is_numeric_like(value: object) -> bool:
    return isinstance(value, (int, float, list, tuple, np.generic)) and not isinstance(value, bool)


def checked_ctrl_action(action: object, space_shape: tuple[int, ...]) -> Float[np.ndarray, "nu"]:
    """A single-agent view's action over every actuator in MuJoCo's order, in ctrl units
    (MaMuJoCo's Gymnasium ids), as float32 of shape `space_shape`; AgentActionError for
    anything else or a non-finite entry."""
    expected = (f"give shape {space_shape}: one finite entry per actuator in MuJoCo's order, "
                "in ctrl units")
    values = _numbers(action, f"action of type {type(action).__name__}", expected)
    if values.shape != space_shape:
        raise AgentActionError(f"action has shape {values.shape}; {expected}.")
    if not np.all(np.isfinite(values)):
        raise AgentActionError(f"action has non-finite entries {values.tolist()}; {expected}.")
    return values


def _numbers(value: object, what: str, expected: str) -> np.ndarray:
    """`value` as a float32 array if it is an array (or nested sequence) of numbers."""
    try:
        array = np.asarray(value) if not isinstance(value, (Mapping, str, bytes)) else None
    except (TypeError, ValueError):  # ragged nested lists, objects numpy cannot hold
        array = None
    if array is None or array.dtype.kind not in _NUMBER_KINDS:
        kind = "" if array is None else f" of dtype {array.dtype}"
        raise AgentActionError(f"{what}{kind} is not an array of numbers; {expected}.")
    with np.errstate(over="ignore"):  # past float32: inf, refused as not finite
        return array.astype(np.float32)


def _check_finite(values: np.ndarray, agent: str, expected: str) -> None:
    if not np.all(np.isfinite(values)):
        raise AgentActionError(
            f"the action of agent {agent!r} has non-finite entries {values.tolist()}; "
            f"{expected}.")
