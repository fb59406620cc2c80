"""The host loop: call the jitted training step until total_steps, reporting to a callback."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.errors import BodyGroupError
from modular_ppo.ppo.metrics import HostMetrics, metrics_to_host
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks.contract import ModularNetwork
from modular_ppo.ppo.state import (
    BodyGroup,
    TrainingState,
    check_groups,
    new_training_state,
    place_state,
)
from modular_ppo.ppo.exported_step import ExportedSteps
from modular_ppo.ppo.step_ahead import StepAhead, compile_step
from modular_ppo.ppo.step import check_static_arguments

OnIteration = Callable[[TrainingState, HostMetrics], bool]
"""Called after every jitted call with the new state and its metrics; True stops training."""


class TrainResult(NamedTuple):
    groups: tuple[BodyGroup, ...]
    state: TrainingState
    metrics: HostMetrics
    """The last call's metrics."""


def train(
    groups: tuple[BodyGroup, ...],
    state: TrainingState,
    config: PPOConfig,
    *,
    on_iteration: OnIteration | None = None,
    exported: ExportedSteps | None = None,
    pipelined: bool = False,
    device_share: float = 0.0,
    ahead: StepAhead | None = None,
) -> TrainResult:
    """Train until `config.total_steps` environment steps (over every body) or until
    `on_iteration` says stop. Start from `new_training_state` or a restored checkpoint of
    one; the state is first moved to where `config` puts it (`place_state`: one device,
    or split over devices with `config.data_parallel`).

    Each call of the jitted `train_step` runs `config.iterations_per_call` PPO iterations.
    Its metrics (see `metrics_to_host`) also carry "steps" (exact, from the state's
    counter), "time/call_s" and "throughput/env_steps_per_s"; the first call's carry
    "time/compile_s", the time spent compiling, or waiting for the compile `ahead` started
    (near 0 when this process already compiled the same bodies, network structures and
    config), kept out of the throughput. In a run of several processes
    (`initialize_distributed`) every process calls `train` alike, and `on_iteration` must
    decide the same in each (the metrics are the same in each).

    exported: keep the traced training step in this folder under this key, so that a later
    `train` with the same key loads it instead of tracing it (`compile_train_step`).
    pipelined: collect rollouts with the host's C simulator and the device overlapped
    (`pipelined_train_step`, its programs compiled side by side before the first call, and
    kept in `exported` likewise; envs of the CPU backend). device_share: with `pipelined`, about
    this share of each body's environments is stepped by MJX on the device.
    ahead: the step compiled while the state was built (`StepAhead`), taken if it was
    compiled for this state's shapes.
    """
    check_groups(groups, config)
    names = [group.name for group in groups]
    if set(state.groups) != set(names):
        raise BodyGroupError(
            f"a training state of bodies {sorted(state.groups)} cannot train the groups of "
            f"bodies {names}: pass the groups `new_training_state` returned with this state "
            "(or those of the run it was restored for)."
        )
    for group in groups:
        check_static_arguments(group.env, group.graphdef)
    state = place_state(state, groups, config)
    started = time.perf_counter()
    step = ahead.step_for(state) if ahead is not None else None
    if step is None:
        step = compile_step(groups, config, state, exported, pipelined, device_share)
    compile_s = time.perf_counter() - started
    bodies = [group.name for group in groups]
    timing = {"time/compile_s": compile_s}
    steps_per_call = config.iterations_per_call * config.steps_per_iteration
    metrics: HostMetrics = {}
    while int(state.steps) < config.total_steps:
        started = time.perf_counter()
        state, device_metrics = step(state)
        metrics = metrics_to_host(device_metrics, bodies)
        seconds = time.perf_counter() - started
        metrics.update(timing, **{"steps": int(state.steps), "time/call_s": seconds,
                                  "throughput/env_steps_per_s": steps_per_call / seconds})
        timing = {}
        if on_iteration is not None and on_iteration(state, metrics):
            break
    return TrainResult(groups, state, metrics)


def train_from_scratch(
    bodies: Sequence[tuple[ModularEnvProtocol, ModularNetwork]],
    config: PPOConfig,
    *,
    seed: int = 0,
    on_iteration: OnIteration | None = None,
    body_envs: Mapping[str, int] | None = None,
    loss_weights: Mapping[str, float] | None = None,
) -> TrainResult:
    """`train` from `new_training_state(bodies, config, seed, body_envs=..., loss_weights=...)`:
    e.g. `train_from_scratch([(env, network)], config)` for one body."""
    groups, state = new_training_state(bodies, config, seed, body_envs=body_envs,
                                       loss_weights=loss_weights)
    return train(groups, state, config, on_iteration=on_iteration)
