"""A training run: build body, env, network and PPO from a config; drive them; keep a run dir.

The run dir holds config.json, metrics.jsonl, TensorBoard events, checkpoints of the full
training state, eval.json and a video. Ctrl-C (or SIGTERM) saves a checkpoint and stops
(`TrainingInterrupted`); a non-finite loss, gradient or parameter stops the run with the
module named, keeps the last good checkpoint and writes failure.json (`TrainingFailed`).
A resumed run continues from its latest readable checkpoint, exactly as if it had never
stopped; metrics logged after that checkpoint (by a killed process) are dropped first.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import jax
from rich.console import Console

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.runs.background import cores_to_spare
from modular_ppo.runs.build import checkpointer_for, new_run
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import TrainingFailed, TrainingInterrupted
from modular_ppo.runs.held_out import evaluator_with_held_out
from modular_ppo.runs.init_from import start_from
from modular_ppo.runs.interrupts import StopRequests
from modular_ppo.runs.metrics_log import MetricsLog
from modular_ppo.runs.processes import is_primary, path_of_primary
from modular_ppo.runs.progress import Progress
from modular_ppo.runs.resolve import LoadedBodies, resolve_train_config
from modular_ppo.runs.run_book import RunBook, Schedule
from modular_ppo.runs.run_dir import (
    CONFIG_FILE,
    FAILURE_FILE,
    existing_run_dir,
    new_run_dir,
    read_metrics,
    rewind_metrics,
    write_json,
)

__all__ = ["run_training"]


def run_training(
    config: TrainRunConfig,
    console: Console | None = None,
    *,
    env: ModularEnvProtocol | None = None,
    loaded: LoadedBodies | None = None,
) -> Path:
    """Train as configured (resolved once by `runs.resolve.resolve_train_config`); return
    the run directory. With several bodies in --body, one network is trained on all of them.

    env: train in this environment instead of the one the config describes (a custom
    task or wrapper); its body's name is recorded as the run's body. Resume such a run
    by passing the same env again. loaded: bodies the caller has loaded already.
    Raises TrainingFailed (non-finite values) and TrainingInterrupted (a stop signal), both
    after saving what can be saved; their messages say what is kept and what to do.

    In a run of several processes (`ppo.start_distributed` first) every process calls it
    alike; process 0 alone prints, writes the run directory, evaluates and renders, and
    every process saves its part of each checkpoint.
    """
    started_at = time.perf_counter()
    primary = is_primary()
    console = (console or Console()) if primary else Console(quiet=True)
    resolved = resolve_train_config(config, env, loaded)
    config = resolved.config
    console.print(f"building [bold]{config.body}[/] with the [bold]{config.arch}[/] network ...")
    run = new_run(resolved, compile_ahead=cores_to_spare())
    if config.init_from is not None and config.resume is None:
        run = start_from(run, config.init_from)
        console.print(f"starting from the parameters of {config.init_from} (its latest "
                      "checkpoint), normalizer statistics from --new-body-statistics "
                      f"{config.new_body_statistics}, optimizer state from --init-optimizer "
                      f"{config.init_optimizer}")
    # A body it cannot hold is refused here. Process 0 alone evaluates, so it alone compiles
    # the evaluations ahead, while the training step compiles, where cores are to spare.
    evaluator = evaluator_with_held_out(run, config.eval, ahead=primary and cores_to_spare())
    if config.resume is not None:
        run_dir = existing_run_dir(config.resume)
        checkpointer = checkpointer_for(run_dir, run)
        resume_step, state = checkpointer.restore_latest(run.state, set_aside=primary)
        run = dataclasses.replace(run, state=state)
        if primary:
            _report_resume(run_dir, resume_step, config, console)
    else:
        run_dir = path_of_primary(
            new_run_dir(config.runs_root, run.name, config.run_name) if primary else None)
        checkpointer = checkpointer_for(run_dir, run)
    if primary:
        write_json(run_dir / CONFIG_FILE, run.record())
    console.print(f"run dir: [bold]{run_dir}[/]")

    book = RunBook(run, run_dir, checkpointer, MetricsLog(run_dir, enabled=primary),
                       evaluator, started_at)
    try:
        with StopRequests(console) as stop:
            state, stopped = _train(book, stop, console)
        if stopped is not None:
            raise stopped
        book.save_last(state)
        if primary:
            book.finish(state, console)
            console.print(f"done: {run_dir}")
    finally:
        book.close()
    return run_dir


def _report_resume(run_dir: Path, step: int, config: TrainRunConfig, console: Console) -> None:
    logged = max((int(row.get("step", 0)) for row in read_metrics(run_dir)), default=0)
    rewind_metrics(run_dir, step)
    redone = (f" (metrics logged after it, up to step {logged:,}, are dropped: those steps "
              "are trained again)" if logged > step else "")
    console.print(f"resuming {run_dir} from its checkpoint at step {step:,}{redone}")
    if (run_dir / FAILURE_FILE).is_file():
        console.print(f"[yellow]warning[/]: this run stopped on non-finite values (see "
                      f"{run_dir / FAILURE_FILE}); resuming replays the same steps, so it "
                      "will likely fail again. A new run with other settings is the way out.")
    if step >= config.ppo.total_steps:
        console.print(f"the run already reached --ppo.total-steps {config.ppo.total_steps:,}; "
                      "give a larger --ppo.total-steps to train it further.")


def _train(book: RunBook, stop: StopRequests, console: Console
           ) -> tuple[Any, TrainingFailed | TrainingInterrupted | None]:
    """The training loop with its evaluations and checkpoints. Returns the final state and
    why training stopped early (None: it reached total_steps)."""
    run, config, log = book.run, book.run.config, book.log
    start = int(run.state.steps)
    schedule = Schedule(config.eval_every_steps, config.checkpoint_every_steps,
                        last_eval=start if config.resume is not None else -1,
                        last_checkpoint=start)
    outcome: dict[str, Any] = {"stopped": None}

    def on_iteration(state: Any, host_metrics: dict[str, Any]) -> bool:
        steps = int(state.steps)
        metrics, outcome["stopped"] = book.metrics(host_metrics, steps)
        if outcome["stopped"] is not None:
            return True
        # The iteration's progress shows before its evaluation runs: the first line of a run
        # then comes as soon as training does, not an evaluation's seconds later.
        progress.update(steps, metrics)
        if schedule.due("eval", steps) and log.enabled:
            evaluation = book.evaluate(state)
            progress.show_evaluation(evaluation)
            metrics.update(evaluation)
            schedule.done("eval", steps)
        log.write(steps, metrics)
        if stop.requested or schedule.due("checkpoint", steps):
            book.save(steps, state)
            schedule.done("checkpoint", steps)
        if stop.requested:
            outcome["stopped"] = TrainingInterrupted(book.run_dir, steps, True, stop.signum)
            return True
        return False

    with Progress(config.ppo.total_steps, run.progress_modules, console,
                  bodies=run.progress_bodies) as progress:
        progress.message(f"compiling the training step for {jax.devices()[0].device_kind} "
                         f"({config.backend_in_words}) ...")
        try:
            state = run.fit(on_iteration)
        except KeyboardInterrupt:  # a second stop signal: no time to save
            step = book.last_saved if book.last_saved is not None else start
            raise TrainingInterrupted(book.run_dir, step, False, stop.signum or 2) from None
    return state, outcome["stopped"]
