"""A run's training step compiled while the run is still being built.

Building a run (its networks' initializers, the environments' reset, the optimizer's
state: small eager programs) and compiling its training step do not depend on each other
but on the state's shapes, which tracing the build gives in a fraction of its time. So
`StepAhead` traces the build abstractly (`jax.eval_shape`) and compiles the step for those
shapes in a thread of its own while the caller builds the real state. On a TPU v5e chip's
host (ant, 4,096 envs, empty caches) the build took 15 s before the compile started; now
the device share's step (the longest program: traced in 12 s, compiled in 25 s) starts
with the build, which the thread's tracing slows to 21 s. Making the build wait for the
tracing was tried and not kept (first progress 61.3 s against 59.1 s)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

import jax

from modular_ppo.ppo.ahead import avals
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.exported_step import ExportedSteps, compile_train_step
from modular_ppo.ppo.metrics import Metrics
from modular_ppo.ppo.pipelined_step import pipelined_train_step
from modular_ppo.ppo.state import BodyGroup, TrainingState

Step = Callable[[TrainingState], tuple[TrainingState, Metrics]]


def compile_step(groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState,
                 exported: ExportedSteps | None = None, pipelined: bool = False,
                 device_share: float = 0.0) -> Step:
    """The training step `train` calls, compiled for states shaped like `state` (arrays or
    `jax.ShapeDtypeStruct`s): `pipelined_train_step` or `compile_train_step`."""
    if pipelined:
        return pipelined_train_step(groups, config, state, device_share, exported)
    return compile_train_step(groups, config, state, exported)


class StepAhead:
    """`compile_step` for the state `build` makes, started now in a thread of its own.

    build: () -> (groups, state), traced only (`jax.eval_shape`: nothing is computed), so
    it must build with JAX's operations and may not use the state's values; the caller then
    builds the real state itself. Not for data parallelism (the abstract state carries no
    shardings). The thread is not a daemon: the interpreter finishes the compile at exit
    rather than stopping it inside XLA (as runs.background.Background)."""

    def __init__(self, build: Callable[[], tuple[tuple[BodyGroup, ...], TrainingState]],
                 config: PPOConfig, exported: ExportedSteps | None = None,
                 pipelined: bool = False, device_share: float = 0.0):
        self._future: Future = Future()
        args = build, config, exported, pipelined, device_share
        threading.Thread(target=self._compile, args=args, name="compile training step").start()

    def _compile(self, build, config, exported, pipelined, device_share) -> None:
        built: dict[str, Any] = {}

        def abstract_state() -> TrainingState:
            built["groups"], state = build()
            return state

        try:
            state = jax.eval_shape(abstract_state)
            step = compile_step(built["groups"], config, state, exported, pipelined,
                                device_share)
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits for it
            self._future.set_exception(error)
        else:
            self._future.set_result((avals(state), step))

    def step_for(self, state: TrainingState) -> Step | None:
        """The compiled step (waiting for it) if it was compiled for states shaped like
        `state`; None where it was not (a restored state of other shapes), or where
        compiling it failed: the caller compiles it then, and meets the error itself."""
        try:
            shapes, step = self._future.result()
        except Exception:  # noqa: BLE001 - raised again where the caller compiles
            return None
        return step if shapes == avals(state) else None
