"""What a run keeps in its run dir as training goes: each training call's metrics (a
non-finite value becomes failure.json and the error to stop with), evaluations and
checkpoints when they are due, and at the end the last checkpoint, the final evaluation,
eval.json and videos. `run_training` keeps one `RunBook`; `run_seed_training` one per seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import jax
from rich.console import Console

from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.errors import TrainingFailed
from modular_ppo.runs.failure import nonfinite_failure
from modular_ppo.runs.metrics_log import MetricsLog, to_floats
from modular_ppo.runs.run import Run
from modular_ppo.runs.run_dir import EVAL_FILE, FAILURE_FILE, write_json

Due = Literal["eval", "checkpoint"]


class Schedule:
    """When evaluations and checkpoints are due: once every `eval_every_steps` /
    `checkpoint_every_steps` env steps (0: never), counted in whole periods since the last."""

    def __init__(self, eval_every: int, checkpoint_every: int, last_eval: int,
                 last_checkpoint: int) -> None:
        self.every = {"eval": eval_every, "checkpoint": checkpoint_every}
        self.last = {"eval": last_eval, "checkpoint": last_checkpoint}

    def due(self, kind: Due, steps: int) -> bool:
        every = self.every[kind]
        return every > 0 and steps // every > self.last[kind] // every

    def done(self, kind: Due, steps: int) -> None:
        self.last[kind] = steps


class RunBook:
    """One run dir's metrics log, checkpointer and evaluator, and what is written to them.

    label: put before the messages this book prints and raises (e.g. "seed 3: ")."""

    def __init__(self, run: Run, run_dir: Path, checkpointer: Checkpointer, log: MetricsLog,
                 evaluator: Callable[[Any, Any], dict[str, float]], started_at: float,
                 label: str = "") -> None:
        self.run, self.run_dir, self.checkpointer, self.log = run, run_dir, checkpointer, log
        self.evaluator, self.started_at, self.label = evaluator, started_at, label
        self.eval_key = jax.random.key(run.config.seed + 1)
        self.last_saved: int | None = max(checkpointer.steps(), default=None)

    def metrics(self, host_metrics: dict[str, Any], steps: int
                ) -> tuple[dict[str, float], TrainingFailed | None]:
        """A training call's metrics as floats (flags 0.0 / 1.0, as metrics.jsonl keeps
        them) with the elapsed time, and the error to stop with if they flag non-finite
        values; then they are logged and failure.json is written here."""
        metrics = to_floats(host_metrics)
        metrics["time/elapsed_s"] = time.perf_counter() - self.started_at
        failure = nonfinite_failure(metrics, steps, self.last_saved, self.run_dir)
        if failure is None:
            return metrics, None
        self.log.write(steps, metrics)
        if self.log.enabled:
            write_json(self.run_dir / FAILURE_FILE, failure)
        return metrics, TrainingFailed(f"{self.label}{failure['error']}", self.run_dir)

    def evaluate(self, state: Any, evaluated: dict[str, float] | None = None,
                 seconds: float = 0.0) -> dict[str, float]:
        """The evaluator's metrics of `state` as `eval/*`, with the seconds it took.
        evaluated: metrics of `state` computed elsewhere in `seconds` (the trained bodies'
        of every seed, in one program), joined with the evaluator's."""
        started = time.perf_counter()
        metrics = {**(evaluated or {}), **self.evaluator(state, self.eval_key)}
        out = {f"eval/{k.removeprefix('episode/')}": v for k, v in metrics.items()}
        out["time/eval_s"] = seconds + time.perf_counter() - started
        return out

    def save(self, steps: int, state: Any) -> None:
        self.checkpointer.save(steps, state)
        self.last_saved = steps

    def save_last(self, state: Any) -> None:
        """A checkpoint of `state` unless one of its step is kept already."""
        if int(state.steps) not in self.checkpointer.steps():
            self.save(int(state.steps), state)

    def finish(self, state: Any, console: Console, evaluated: dict[str, float] | None = None,
               seconds: float = 0.0) -> None:
        """The final evaluation (logged and in eval.json; evaluated, seconds: as
        `evaluate`'s) and the videos."""
        steps = int(state.steps)
        final = self.evaluate(state, evaluated, seconds)
        self.log.write(steps, final)
        write_json(self.run_dir / EVAL_FILE, {"step": steps, **final})
        console.print(f"{self.label}final eval at step {steps:,}: {self.run.summary(final)}")
        if self.run.config.video:
            self.run.write_videos(state, self.run_dir, console)

    def close(self) -> None:
        self.log.close()
        self.checkpointer.close()
