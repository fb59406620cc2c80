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
    return _moments_layout(template, unstack_by_shape,
                           lambda moments, _: stack_by_shape(moments))


def v3_layout(template: TrainingState) -> tuple[TrainingState, Upgrade]:
    """The format-3 layout of `template`'s state, and its upgrade to today's layout."""
    unravel = ravel_pytree(template.params)[1]
    return _moments_layout(
        template,
        lambda stacks, params: ravel_pytree(unstack_by_shape(stacks, params))[0],
        lambda moments, _: stack_by_shape(unravel(moments)))


def _moments_layout(template: TrainingState, to_old, from_old) -> tuple[TrainingState, Upgrade]:
    """Every dict of stacks in `template.opt_state` laid out by `to_old(stacks, params)`;
    the upgrade lays each back with `from_old(moments, params)`."""
    params = template.params
    keys = {shape_key(leaf) for leaf in jax.tree.leaves(params)}

    def is_stacks(node) -> bool:
        return isinstance(node, dict) and set(node) == keys

    old_opt_state = jax.tree.map(
        lambda node: to_old(node, params) if is_stacks(node) else node,
        template.opt_state, is_leaf=is_stacks)

    def upgrade(old: TrainingState) -> TrainingState:
        return old.replace(opt_state=jax.tree.map(
            lambda node, moments: from_old(moments, params) if is_stacks(node) else moments,
            template.opt_state, old.opt_state, is_leaf=is_stacks))

    return template.replace(opt_state=old_opt_state), upgrade
