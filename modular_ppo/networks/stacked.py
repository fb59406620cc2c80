"""Streams of the same shapes run as one call over their stacked weights."""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.recurrent import Carry
from modular_ppo.networks.stream import Stream


def run_streams(
    streams: Mapping[str, Stream],
    carries: Mapping[str, Carry],
    inputs: Mapping[str, Float[Array, "batch _in"]],
) -> tuple[dict[str, Carry], dict[str, Any]]:
    """`streams[key](carries[key], inputs[key])` for every key, as dicts of next carries and
    outputs.

    Streams with the same structure whose variables, carries and inputs have the same
    shapes (the ant's four legs) run as one `vmap` over their weights stacked on a new
    leading axis: one batched matrix product per layer instead of one per module, in the
    forward and the backward pass. The results equal calling the streams one by one up to
    float rounding. Streams must not change their own variables when called (none does:
    their variables are parameters).
    """
    next_carries, outputs = {}, {}
    for keys in same_shapes(streams, carries, inputs):
        if len(keys) == 1:
            (key,) = keys
            next_carries[key], outputs[key] = streams[key](carries[key], inputs[key])
            continue
        graphdef, _ = nnx.split(streams[keys[0]])
        stacked = _stack([(nnx.state(streams[k]), carries[k], inputs[k]) for k in keys])

        def call(state, carry, x):
            return nnx.merge(graphdef, state)(carry, x)

        group_carries, group_outputs = jax.vmap(call)(*stacked)
        for i, key in enumerate(keys):
            next_carries[key] = jax.tree.map(lambda leaf: leaf[i], group_carries)
            outputs[key] = jax.tree.map(lambda leaf: leaf[i], group_outputs)
    return {k: next_carries[k] for k in streams}, {k: outputs[k] for k in streams}


def same_shapes(
    streams: Mapping[str, Stream],
    carries: Mapping[str, Carry],
    inputs: Mapping[str, Float[Array, "batch _in"]],
) -> list[list[str]]:
    """The streams' keys grouped by structure and by the shapes and dtypes of their
    variables, carries and inputs, in order of first appearance."""
    groups: dict[Hashable, list[str]] = {}
    for key, stream in streams.items():
        graphdef, state = nnx.split(stream)
        signature = _signature(graphdef, (state, carries[key], inputs[key]))
        groups.setdefault(signature, []).append(key)
    return list(groups.values())


def _signature(graphdef: nnx.GraphDef, tree: Any) -> Hashable:
    leaves, structure = jax.tree.flatten(tree)
    return graphdef, structure, tuple((jnp.shape(x), jnp.result_type(x)) for x in leaves)


def _stack(trees: list[Any]) -> Any:
    return jax.tree.map(lambda *leaves: jnp.stack(leaves), *trees)
