"""The host loop: call the jitted training step until total_steps, reporting to a callback."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import NamedTuple, TypeVar

from flax import nnx

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks.contract import ModularNetwork
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host
from modular_ppo.ppo.state import TrainingState, new_training_state, place_state
from modular_ppo.ppo.step import check_static_arguments, train_step

OnIteration = Callable[[TrainingState, HostMetrics], bool]
"""Called after every jitted call with the new state and its metrics; True stops training."""


class TrainResult(NamedTuple):
    graphdef: nnx.GraphDef
    state: TrainingState
    metrics: HostMetrics
    """The last call's metrics."""


def train(
    env: ModularEnvProtocol,
    network: ModularNetwork | nnx.GraphDef,
    config: PPOConfig,
    *,
    seed: int = 0,
    on_iteration: OnIteration | None = None,
    initial_state: TrainingState | None = None,
) -> TrainResult:
    """Train until `config.total_steps` environment steps or until `on_iteration` says stop.

    network: a network to train from scratch (or to resume, with `initial_state`), or the
    `nnx.GraphDef` of a run being resumed, with `initial_state`, which is moved to where
    `config` puts the state (`place_state`: one device, or split over devices with
    `config.data_parallel`).
    Each call of the jitted `train_step` runs `config.iterations_per_call` PPO iterations.
    Its metrics (see `metrics_to_host`) also carry "time/call_s" and
    "throughput/env_steps_per_s"; the first call's carry "time/compile_s", the time spent
    compiling (near 0 when this process already compiled the same env, network structure
    and config), kept out of the throughput. In a run of several processes
    (`initialize_distributed`) every process calls `train` alike, and `on_iteration` must
    decide the same in each (the metrics are the same in each).
    """
    if isinstance(network, nnx.GraphDef):
        if initial_state is None:
            raise ValueError(
                "train() got a GraphDef without initial_state: a GraphDef has no parameters. "
                "Pass the network module to start a run, or the state to resume."
            )
        graphdef, state = network, initial_state
    elif initial_state is not None:
        graphdef, state = nnx.graphdef(network), initial_state
    else:
        graphdef, state = new_training_state(env, network, config, seed)

    check_static_arguments(env, graphdef)
    state = place_state(state, config)
    started = time.perf_counter()
    step = train_step.lower(env, graphdef, config, state).compile()
    state, metrics = call_until_done(
        step, state, config, on_iteration, time.perf_counter() - started
    )
    return TrainResult(graphdef, state, metrics)


StepState = TypeVar("StepState")


def call_until_done(
    step: Callable[[StepState], tuple[StepState, Metrics]],
    state: StepState,
    config: PPOConfig,
    on_iteration: Callable[[StepState, HostMetrics], bool] | None,
    compile_s: float,
    to_host: Callable[[Metrics], HostMetrics] = metrics_to_host,
) -> tuple[StepState, HostMetrics]:
    """Call a compiled training step until `state.steps` reaches `config.total_steps` or
    `on_iteration` says stop; returns the last state and the last call's host metrics
    (with "time/call_s", "throughput/env_steps_per_s", and on the first call
    "time/compile_s" = `compile_s`)."""
    timing = {"time/compile_s": compile_s}
    steps_per_call = config.iterations_per_call * config.steps_per_iteration
    metrics: HostMetrics = {}
    while int(state.steps) < config.total_steps:
        started = time.perf_counter()
        state, device_metrics = step(state)
        metrics = to_host(device_metrics)
        seconds = time.perf_counter() - started
        metrics.update(timing, **{"time/call_s": seconds,
                                  "throughput/env_steps_per_s": steps_per_call / seconds})
        timing = {}
        if on_iteration is not None and on_iteration(state, metrics):
            break
    return state, metrics
