"""Metric names and reductions: flat dicts with '/'-separated names, per module key.

What `train_step` reports (with several bodies, per-body names carry the body as their
third part, `for_body`: "losses/critic/<body>/<module>", "episode/length/<body>"):
- `losses/actor/<module>`, `losses/critic/<module>`, `losses/clipping_fraction/<module>`,
  `critic/explained_variance/<module>`, `advantages/mean/<module>`,
  `advantages/std/<module>` (each module's own GAE, before combining or normalizing),
  `losses/regularization`; shared: `losses/total` (the loss-weighted sum over bodies),
  `grad_norm` (before clipping).
- `episode/team_return` (summed over modules), `episode/return/<module>`,
  `episode/length`, `episode/forward_velocity`: means over the episodes that finished
  during the call, from the env's `info["last_episode"]`; `episode/count` their number
  (shared: over every body). Host metrics drop a body's episode means when its count is 0.
- `nonfinite/actions/<module>` (sampled in the rollout), `nonfinite/actor/<module>`,
  `nonfinite/critic/<module>`: the modules that were non-finite at the first point (the
  rollout's actions, then each update's losses, iteration after iteration) where any
  was, which names the culprit before NaN spreads to every module through the shared
  update. Shared: `nonfinite/regularization`, `nonfinite/gradients`,
  `nonfinite/parameters` (any floating leaf of the network state), `nonfinite/rollout`
  (observations or rewards): anywhere in the call; `nonfinite/any`. Booleans; the run
  layer decides to stop.
- `iteration`; host only (`train`): `steps` (exact, `StepCounter`), `time/call_s`,
  `throughput/env_steps_per_s`, and on the first call `time/compile_s`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Bool, Float, PyTree

from modular_ppo.ppo.shape_groups import stack_by_shape

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
    """Whether any floating-point leaf holds a NaN or an infinity: one check per stack of
    same-shaped leaves (`stack_by_shape`), not one per leaf, of which a body of many
    modules has hundreds."""
    floats = [leaf for leaf in jax.tree.leaves(tree)
              if jnp.issubdtype(jnp.result_type(leaf), jnp.inexact)]
    return functools.reduce(jnp.logical_or, [
        ~jnp.all(jnp.isfinite(stack)) for stack in stack_by_shape(floats).values()
    ], jnp.zeros((), bool))


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


def body_key(key: str, body: str) -> str:
    """'losses/critic/torso' -> 'losses/critic/<body>/torso'; 'episode/length' ->
    'episode/length/<body>': the body is always the third part of the name."""
    parts = key.split("/")
    return "/".join([*parts[:2], body, *parts[2:]])


def body_of(key: str) -> str | None:
    """The body a metric name of a run of several bodies belongs to (its third part);
    None for shared ones."""
    parts = key.split("/")
    return parts[2] if len(parts) >= 3 else None


def for_body(metrics: Metrics, body: str, bodies: Sequence[str]) -> Metrics:
    """A body's metrics under the run's names: unchanged when the run trains one body,
    else every key renamed with `body_key` ("losses/critic/<body>/<module>", so per-module
    readers see the modules as "<body>/<module>")."""
    if len(bodies) == 1:
        return metrics
    return {body_key(key, body): value for key, value in metrics.items()}


def metrics_to_host(metrics: Metrics, bodies: Sequence[str] = ()) -> HostMetrics:
    """Device scalars -> Python floats (flags -> bools, counters -> ints). A body's episode
    metrics are dropped when none of its episodes finished (its "episode/count" is 0);
    the counts are kept.

    bodies: the run's bodies when it trains several (their metrics carry their names)."""
    host = {}
    for name, value in jax.device_get(metrics).items():
        value = np.asarray(value)
        if value.dtype == bool:
            host[name] = bool(value)
        elif np.issubdtype(value.dtype, np.integer):
            host[name] = int(value)
        else:
            host[name] = float(value)
    names = bodies if len(bodies) > 1 else [None]
    idle = {body for body in names
            if host.get("episode/count" if body is None else body_key("episode/count", body))
            == 0}
    return {
        key: value for key, value in host.items()
        if not (key.startswith("episode/") and key.split("/")[1] != "count"
                and (body_of(key) if len(bodies) > 1 else None) in idle)
    }
