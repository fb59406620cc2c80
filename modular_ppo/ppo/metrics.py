"""Metric names and reductions: flat dicts with '/'-separated names, per module key."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, PyTree

Metrics = dict[str, Array]
HostMetrics = dict[str, float | int | bool]


def per_key(prefix: str, values: dict[str, Array]) -> Metrics:
    return {f"{prefix}/{key}": value for key, value in values.items()}


def explained_variance(
    values: Float[Array, "*batch"], targets: Float[Array, "*batch"]
) -> Float[Array, ""]:
    """1 - Var(targets - values) / Var(targets): 1 is a perfect critic, 0 no better than a
    constant, negative worse."""
    return 1.0 - jnp.var(targets - values) / (jnp.var(targets) + 1e-8)


def nonfinite(tree: PyTree) -> Bool[Array, ""]:
    """Whether any floating-point leaf holds a NaN or an infinity."""
    leaves = [leaf for leaf in jax.tree.leaves(tree) if jnp.issubdtype(leaf.dtype, jnp.inexact)]
    if not leaves:
        return jnp.zeros((), bool)
    return jnp.any(jnp.stack([jnp.any(~jnp.isfinite(leaf)) for leaf in leaves]))


def first_failure(failed: dict[str, Bool[Array, "order"]]) -> dict[str, Bool[Array, ""]]:
    """Given per-key failure flags along an ordered axis (updates, or iterations), the keys
    that failed at the first position where any did; all False if none did. Once one
    module's loss is NaN the shared update spreads NaN to every module, so only the first
    failure names the culprit."""
    any_failed = functools.reduce(jnp.logical_or, failed.values())
    first = jnp.argmax(any_failed)
    return {key: flags[first] for key, flags in failed.items()}


def combine_iterations(
    averaged: Metrics, episode_sums: Metrics, module_flags: Metrics, flags: Metrics
) -> Metrics:
    """Reduce K stacked iterations ([K] leaves) to one record.

    Losses and statistics are averaged over the iterations, episode values over the
    episodes that finished in them ("episode/count" is their number). Per-module
    non-finite flags are those of the first iteration that raised any (`first_failure`),
    the other flags are true if any iteration raised them; "nonfinite/any" joins them all.
    """
    flags = {**first_failure(module_flags), **{k: jnp.any(v) for k, v in flags.items()}}
    flags["nonfinite/any"] = jnp.any(jnp.stack(list(flags.values())))
    return {
        **jax.tree.map(jnp.mean, averaged),
        **episode_means(episode_sums),
        **flags,
    }


def episode_means(episode_sums: Metrics) -> Metrics:
    """"episode/<key>": each sum (over stacked iterations, or none) divided by the number
    of episodes that finished, and "episode/count" that number."""
    count = jnp.sum(episode_sums["count"])
    means = {
        f"episode/{key}": jnp.sum(total) / jnp.maximum(count, 1.0)
        for key, total in episode_sums.items()
        if key != "count"
    }
    return {**means, "episode/count": count.astype(jnp.int32)}


def metrics_to_host(metrics: Metrics) -> HostMetrics:
    """Device scalars -> Python floats (flags -> bools, counters -> ints). Episode metrics
    are dropped when no episode finished ("episode/count" is then 0)."""
    host = {}
    for name, value in jax.device_get(metrics).items():
        value = np.asarray(value)
        if value.dtype == bool:
            host[name] = bool(value)
        elif np.issubdtype(value.dtype, np.integer):
            host[name] = int(value)
        else:
            host[name] = float(value)
    if host.get("episode/count") == 0:
        host = {k: v for k, v in host.items() if not k.startswith("episode/") or
                k == "episode/count"}
    return host
