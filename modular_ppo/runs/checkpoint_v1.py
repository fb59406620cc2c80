"""Checkpoints of format 1 (modular_ppo up to commit dc7da1c, before one body and several
became one training path): their layouts, and their upgrade to today's `TrainingState`.

A format-1 checkpoint holds a single-body `TrainingState` (the whole network state, one
body's env and recurrent states, an int32 step count) or a `MultiBodyState` (today's
layout but for the step count). The identity's structure fingerprint tells which.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp
import optax
from flax import nnx, struct
from jaxtyping import Array, Int, PRNGKeyArray

from modular_ppo.env.types import State
from modular_ppo.networks.contract import NetState
from modular_ppo.ppo import GroupState, StepCounter, TrainingState


@struct.dataclass
class SingleBodyStateV1:
    """The field names and order of format 1's single-body `TrainingState`."""

    network: nnx.State
    opt_state: optax.OptState
    env_state: State
    recurrent: NetState
    key: PRNGKeyArray
    steps: Int[Array, ""]
    iteration: Int[Array, ""]


@struct.dataclass
class MultiBodyStateV1:
    """The field names and order of format 1's `MultiBodyState`."""

    params: nnx.State
    opt_state: optax.OptState
    groups: dict[str, GroupState]
    key: PRNGKeyArray
    steps: Int[Array, ""]
    iteration: Int[Array, ""]


Upgrade = Callable[[object], TrainingState]


def v1_layouts(template: TrainingState) -> list[tuple[object, Upgrade]]:
    """The format-1 layouts a checkpoint of `template`'s run may have (as templates of
    the same leaves), each with the function that turns a restored one into a
    `TrainingState`."""
    steps = jnp.zeros((), jnp.int32)
    layouts: list[tuple[object, Upgrade]] = [(
        MultiBodyStateV1(template.params, template.opt_state, template.groups, template.key,
                         steps, template.iteration),
        lambda old: TrainingState(old.params, old.opt_state, old.groups, old.key,
                                  StepCounter.of(int(old.steps)), old.iteration),
    )]
    if len(template.groups) == 1:
        ((name, own),) = template.groups.items()
        layouts.append((
            SingleBodyStateV1(nnx.merge_state(template.params, own.network),
                              template.opt_state, own.env_state, own.recurrent,
                              template.key, steps, template.iteration),
            lambda old: _upgrade_single(old, name),
        ))
    return layouts


def _upgrade_single(old: SingleBodyStateV1, name: str) -> TrainingState:
    params, rest = nnx.split_state(old.network, nnx.Param, ...)
    return TrainingState(
        params=params,
        opt_state=old.opt_state,
        groups={name: GroupState(rest, old.env_state, old.recurrent)},
        key=old.key,
        steps=StepCounter.of(int(old.steps)),
        iteration=old.iteration,
    )
