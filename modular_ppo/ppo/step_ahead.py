"""A run's training step compiled while the run is still being built.

Building a run (its networks' initializers, the environments' reset, the optimizer's
state: small eager programs) and compiling its training step do not depend on each other
but on the state's shapes, which tracing the build gives in a fraction of its time. So
`StepAhead` traces the build abstractly (`jax.eval_shape`) and compiles the step for those
shapes in a thread of its own while the caller builds the real state: on a TPU v5e chip's
host, the ant's build (~14 s) and the start of its first compile (~30 s; the device share's
MJX step the longest) then overlap instead of following each other."""

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
                 device_share: float = 0.0, on_traced: Callable[[], None] | None = None
                 ) -> Step:
    """The training step `train` calls, compiled for states shaped like `state` (arrays or
    `jax.ShapeDtypeStruct`s): `pipelined_train_step` or `compile_train_step`. on_traced:
    called once its programs are traced, while they compile."""
    if pipelined:
        return pipelined_train_step(groups, config, state, device_share, exported, on_traced)
    return compile_train_step(groups, config, state, exported, on_traced)


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
        self._traced = threading.Event()
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
                                device_share, self._traced.set)
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits for it
            self._future.set_exception(error)
        else:
            self._future.set_result((avals(state), step))
        finally:
            self._traced.set()

    def wait_traced(self) -> None:
        """Wait until the step's programs are traced (or compiling them failed): then they
        compile without Python's lock. Building the real state meanwhile would share that
        lock with the tracing, whose end starts the longest compile (ant on a TPU v5e's
        host: the device share's step traced in 11.8 s beside the build, ~5 s alone)."""
        self._traced.wait()

    def step_for(self, state: TrainingState) -> Step | None:
        """The compiled step (waiting for it) if it was compiled for states shaped like
        `state`; None where it was not (a restored state of other shapes), or where
        compiling it failed: the caller compiles it then, and meets the error itself."""
        try:
            shapes, step = self._future.result()
        except Exception:  # noqa: BLE001 - raised again where the caller compiles
            return None
        return step if shapes == avals(state) else None
