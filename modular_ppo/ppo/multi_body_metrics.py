"""Metric names of a multi-body run: every per-body metric carries the body's name.

A single-body metric "a/b/<module>" becomes "a/b/<body>/<module>" (so per-module readers
see the modules as "<body>/<module>"), and "a/b" becomes "a/b/<body>": the body is always
the third part of the name. Shared quantities (the gradient, the summed loss, the
non-finite flags of the run) keep their single-body names.
"""

from __future__ import annotations

from collections.abc import Iterable

from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host


def body_key(key: str, body: str) -> str:
    """'losses/critic/torso' -> 'losses/critic/<body>/torso'; 'episode/length' ->
    'episode/length/<body>'."""
    parts = key.split("/")
    return "/".join([*parts[:2], body, *parts[2:]])


def for_body(metrics: Metrics, body: str) -> Metrics:
    """Every key of `metrics` renamed with `body_key`."""
    return {body_key(key, body): value for key, value in metrics.items()}


def body_of(key: str) -> str | None:
    """The body a metric name belongs to (its third part), None for shared ones."""
    parts = key.split("/")
    return parts[2] if len(parts) >= 3 else None


def multi_body_metrics_to_host(metrics: Metrics, bodies: Iterable[str]) -> HostMetrics:
    """`metrics_to_host`, dropping each body's episode metrics when none of its episodes
    finished ("episode/count/<body>" is 0)."""
    host = metrics_to_host(metrics)
    idle = {body for body in bodies if host.get(body_key("episode/count", body)) == 0}
    return {
        key: value for key, value in host.items()
        if not (key.startswith("episode/") and body_of(key) in idle
                and key.split("/")[1] != "count")
    }
