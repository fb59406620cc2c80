"""Checkpoints of format 2 (modular_ppo up to commit 384ff9a, before the optimizer ran on
one raveled parameter vector): their layout, and their upgrade to today's `TrainingState`.

Format 2 is today's layout but for the optimizer state: Adam's moments were trees shaped
like the parameters, where `optax.flatten` now keeps each as one vector of the parameters
raveled in leaf order (`jax.flatten_util.ravel_pytree`). Every other leaf is the same.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import numpy as np
from jax.flatten_util import ravel_pytree

from modular_ppo.ppo import TrainingState


def _is_raveled(leaf: object, size: int) -> bool:
    return np.ndim(leaf) == 1 and np.size(leaf) == size


def v2_layout(template: TrainingState) -> tuple[TrainingState, Callable[[TrainingState],
                                                                        TrainingState]]:
    """The format-2 layout of `template`'s state (as a template of the same leaves), and the
    function that turns a restored one into today's layout."""
    raveled, unravel = ravel_pytree(template.params)
    size = raveled.size
    per_array = jax.tree.map(lambda leaf: unravel(leaf) if _is_raveled(leaf, size) else leaf,
                             template.opt_state)

    def upgrade(old: TrainingState) -> TrainingState:
        opt_state = jax.tree.map(
            lambda leaf, moments: ravel_pytree(moments)[0] if _is_raveled(leaf, size)
            else moments,
            template.opt_state, old.opt_state)
        return old.replace(opt_state=opt_state)

    return template.replace(opt_state=per_array), upgrade
