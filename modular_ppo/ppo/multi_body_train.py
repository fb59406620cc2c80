"""The host loop of a multi-body run: `train` for several bodies sharing one network."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import NamedTuple

from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.metrics import HostMetrics
from modular_ppo.ppo.multi_body_metrics import multi_body_metrics_to_host
from modular_ppo.ppo.multi_body_state import BodyGroup, MultiBodyState, check_groups
from modular_ppo.ppo.multi_body_step import multi_body_train_step
from modular_ppo.ppo.step import check_static_arguments
from modular_ppo.ppo.train import call_until_done

OnMultiBodyIteration = Callable[[MultiBodyState, HostMetrics], bool]
"""Called after every jitted call with the new state and its metrics; True stops training."""


class MultiBodyTrainResult(NamedTuple):
    groups: tuple[BodyGroup, ...]
    state: MultiBodyState
    metrics: HostMetrics
    """The last call's metrics."""


def train_multi_body(
    groups: tuple[BodyGroup, ...],
    state: MultiBodyState,
    config: PPOConfig,
    *,
    on_iteration: OnMultiBodyIteration | None = None,
) -> MultiBodyTrainResult:
    """Train the shared parameters on every body until `config.total_steps` environment
    steps (over all bodies) or until `on_iteration` says stop. Start from
    `new_multi_body_state` or a restored checkpoint of one. Host metrics as `train`'s,
    with each body's episode metrics dropped while none of its episodes has finished."""
    check_groups(groups, config)
    for group in groups:
        check_static_arguments(group.env, group.graphdef)
    started = time.perf_counter()
    step = multi_body_train_step.lower(groups, config, state).compile()
    to_host = functools.partial(multi_body_metrics_to_host,
                                bodies=[group.name for group in groups])
    state, metrics = call_until_done(step, state, config, on_iteration,
                                     time.perf_counter() - started, to_host)
    return MultiBodyTrainResult(groups, state, metrics)
