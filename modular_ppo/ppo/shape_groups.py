"""A pytree's leaves of one shape and dtype stacked into one array, and the optimizer run on
those stacks.

A body of many modules has hundreds of parameter arrays but only a handful of distinct
shapes (centipede-32: 617 arrays, 11 shapes), so an update written per stack is a few
operations where one per array is hundreds, which is what compiling costs. Stacking keeps
each array's own dimensions as the trailing ones: raveling them all into one vector instead
(`optax.flatten`) saves as many operations on CPU, but on a TPU every reshape of a tiled
matrix is a copy of its own, and the training step then took 4x as long to compile
(BENCHMARKS.md, "Compile ... by module count").
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from jaxtyping import Array, PyTree


def shape_key(leaf: jax.typing.ArrayLike) -> str:
    """The name of a leaf's stack: dtype and shape, e.g. "float32_64x64", "int32_scalar"."""
    shape = "x".join(str(size) for size in jnp.shape(leaf)) or "scalar"
    return f"{jnp.result_type(leaf).name}_{shape}"


def stack_by_shape(tree: PyTree) -> dict[str, Array]:
    """Shape key -> the tree's leaves of that dtype and shape stacked along a new first
    axis, in the order of `jax.tree.leaves(tree)`."""
    stacks: dict[str, list[Array]] = {}
    for leaf in jax.tree.leaves(tree):
        stacks.setdefault(shape_key(leaf), []).append(leaf)
    return {key: jnp.stack(leaves) for key, leaves in stacks.items()}


def unstack_by_shape(stacks: dict[str, Array], like: PyTree) -> PyTree:
    """The tree `stack_by_shape(like)` came from, its leaves taken from `stacks` (which may
    hold other values of the same shapes, such as updates)."""
    taken: dict[str, int] = {}

    def take(leaf):
        key = shape_key(leaf)
        index = taken.get(key, 0)
        taken[key] = index + 1
        return stacks[key][index]

    return jax.tree.map(take, like)


def by_shape(inner: optax.GradientTransformation) -> optax.GradientTransformationExtraArgs:
    """`inner` applied to the parameters and updates stacked by shape: the same update
    element by element for any element-wise transformation (Adam, AdamW) and any that only
    sums over every element (global-norm clipping); its state holds the stacks' moments."""
    inner = optax.with_extra_args_support(inner)

    def init(params):
        return inner.init(stack_by_shape(params))

    def update(updates, state, params=None, **extra_args):
        stacked_params = None if params is None else stack_by_shape(params)
        stacked, state = inner.update(stack_by_shape(updates), state, stacked_params,
                                      **extra_args)
        return unstack_by_shape(stacked, updates), state

    return optax.GradientTransformationExtraArgs(init, update)

