"""Checkpoints of formats 2 and 3: their layouts, and their upgrade to today's
`TrainingState` (format 4).

The three differ only in how the optimizer state holds Adam's moments (every other leaf
is the same): format 4 keeps each as a dict of the parameters' stacks by shape
(`ppo.shape_groups`), format 3 (commits 7301b12 to ca66584) as one vector of the
parameters raveled in leaf order (`optax.flatten`, `jax.flatten_util.ravel_pytree`), and
format 2 (up to commit 384ff9a) as a tree shaped like the parameters.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
from jax.flatten_util import ravel_pytree

from modular_ppo.ppo import TrainingState
from modular_ppo.ppo.shape_groups import shape_key, stack_by_shape, unstack_by_shape

Upgrade = Callable[[TrainingState], TrainingState]


def v2_layout(template: TrainingState) -> tuple[TrainingState, Upgrade]:
    """The format-2 layout of `template`'s state (a template of the same leaves), and the
    function that turns a restored one into today's layout."""
    return _moments_layout(template, lambda stacks, params: unstack_by_shape(stacks, params),
                           lambda moments, params: stack_by_shape(moments))


def v3_layout(template: TrainingState) -> tuple[TrainingState, Upgrade]:
    """The format-3 layout of `template`'s state, and its upgrade to today's layout."""
    unravel = ravel_pytree(template.params)[1]
    return _moments_layout(
        template,
        lambda stacks, params: ravel_pytree(unstack_by_shape(stacks, params))[0],
        lambda moments, params: stack_by_shape(unravel(moments)))


def _moments_layout(template: TrainingState, to_old, from_old) -> tuple[TrainingState, Upgrade]:
    """Every dict of stacks in `template.opt_state` laid out by `to_old(stacks, params)`;
    the upgrade lays each back with `from_old(moments, params)`."""
    keys = {shape_key(leaf) for leaf in jax.tree.leaves(template.params)}

    def is_stacks(node) -> bool:
        return isinstance(node, dict) and set(node) == keys

    def map_stacks(function, *trees):
        return jax.tree.map(
            lambda node, *rest: function(node, *rest) if is_stacks(node) else
            (rest[0] if rest else node),
            template.opt_state, *trees, is_leaf=is_stacks)

    old_opt_state = map_stacks(lambda stacks: to_old(stacks, template.params))

    def upgrade(old: TrainingState) -> TrainingState:
        return old.replace(opt_state=map_stacks(
            lambda _, moments: from_old(moments, template.params), old.opt_state))

    return template.replace(opt_state=old_opt_state), upgrade
