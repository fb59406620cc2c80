"""Several seeds of one run config trained as one compiled program (`ppo.seeds`), each seed
keeping a run dir of its own, as `run_training` keeps one run's:

    <runs_root>/<body>/<run name or time stamp>-seed<k>/   config.json (seed k), metrics.jsonl,
                                                         TensorBoard events, checkpoints,
                                                         eval.json, videos

Each dir is a whole run of that seed: `read_metrics`, `cli.py analyze`, `eval` and
`train --resume DIR` (which continues that seed alone) read it as any other. Runs with
`resume`, `init_from`, `data_parallel` or several processes are refused. Evaluations of
the trained bodies are one program for all seeds too (each seed with its own eval key);
held-out bodies are evaluated seed by seed. With
`--backend cpu-pipelined` (auto's on a TPU with host cores to spare) the host's C simulator
steps every seed's environments, the chip the networks, updates and device share of all.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Sequence
from pathlib import Path

import jax
import jax.numpy as jnp
from rich.console import Console

from modular_ppo.ppo import body_key
from modular_ppo.ppo.seeds import one_seed, stack, train_seeds
from modular_ppo.runs.background import cores_to_spare
from modular_ppo.runs.build import Run, build_run, checkpointer_for
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import RunConfigError, TrainingInterrupted
from modular_ppo.runs.held_out import held_out_evaluator
from modular_ppo.runs.interrupts import StopRequests
from modular_ppo.runs.metrics_log import MetricsLog
from modular_ppo.runs.run_dir import CONFIG_FILE, new_run_dir, write_json
from modular_ppo.runs.run_book import RunBook, Schedule

__all__ = ["run_seed_training"]


def build_seed_runs(config: TrainRunConfig, seeds: Sequence[int]) -> list[Run]:
    """`build_run` of `config` with each seed; RunConfigError unless they are one program
    (they are whenever only the seed differs) or the config asks for what seeds cannot do."""
    refused = {"resume": config.resume, "init_from": config.init_from,
               "ppo.data_parallel": config.ppo.data_parallel or None}
    for field, value in refused.items():
        if value is not None:
            raise RunConfigError(f"--seeds with --{field.replace('_', '-')}: several seeds "
                                 "train fresh runs on one device; drop one of them.")
    if not seeds or len(set(seeds)) != len(seeds):
        raise RunConfigError(f"--seeds {' '.join(map(str, seeds))}: give distinct seeds.")
    if jax.process_count() > 1:
        raise RunConfigError("--seeds in a run of several processes: train the seeds in "
                             "one process.")
    runs = [build_run(dataclasses.replace(config, seed=seed, seeds=())) for seed in seeds]
    shapes = [_program(run) for run in runs]
    if any(shape != shapes[0] for shape in shapes):
        raise RunConfigError("the seeds build different programs (bodies, env counts or "
                             "network structures); report this: only values should differ.")
    return runs


def run_seed_training(
    config: TrainRunConfig, seeds: Sequence[int], console: Console | None = None
) -> list[Path]:
    """Train `config` once per seed in `seeds`, all in one compiled program; return the
    seeds' run dirs, in seed order (see module docstring). Raises TrainingFailed when a
    seed's step flags non-finite values (that seed's dir gets failure.json; every seed's
    last checkpoint is kept) and TrainingInterrupted on a stop signal (every seed saved)."""
    console = console or Console()
    console.print(f"building [bold]{config.body}[/] with the [bold]{config.arch}[/] network "
                  f"for seeds {', '.join(map(str, seeds))} ...")
    seed_runs = _SeedRuns(build_seed_runs(config, seeds), seeds, console)
    try:
        with StopRequests(console) as seed_runs.stop:
            console.print("compiling the training step of every seed ...")
            resolved = seed_runs.config
            result = train_seeds(seed_runs.runs[0].groups,
                                 stack([run.state for run in seed_runs.runs]),
                                 resolved.ppo, on_iteration=seed_runs.on_iteration,
                                 pipelined=resolved.pipelined,
                                 device_share=resolved.device_share or 0.0)
        if seed_runs.stopped is not None:
            raise seed_runs.stopped
        seed_runs.finish(result.states)
    finally:
        seed_runs.close()
    return seed_runs.dirs


class _SeedRuns:
    """Every seed's `RunBook`, and what happens after each training call (metrics,
    evaluations, checkpoints, stop requests)."""

    def __init__(self, runs: list[Run], seeds: Sequence[int], console: Console) -> None:
        self.seeds, self.console = list(seeds), console
        self.config = runs[0].config
        stamp = self.config.run_name or dt.datetime.now().strftime("%Y%m%d-%H%M%S")
        self.dirs = [new_run_dir(self.config.runs_root, run.name, f"{stamp}-seed{seed}")
                     for run, seed in zip(runs, seeds)]
        started_at = time.perf_counter()
        self.books = []
        for run, run_dir, seed in zip(runs, self.dirs, seeds):
            write_json(run_dir / CONFIG_FILE, run.record())
            console.print(f"run dir: [bold]{run_dir}[/]")
            self.books.append(RunBook(
                run, run_dir, checkpointer_for(run_dir, run), MetricsLog(run_dir),
                held_out_evaluator(run, self.config.eval), started_at, f"seed {seed}: "))
        self.trained = runs[0].evaluator(self.config.eval, ahead=cores_to_spare(),
                                         seeds=len(runs))
        self.schedule = Schedule(self.config.eval_every_steps,
                                 self.config.checkpoint_every_steps, -1, 0)
        self.stopped: Exception | None = None
        self.stop: StopRequests | None = None

    @property
    def runs(self) -> list[Run]:
        return [book.run for book in self.books]

    def _save(self, states, steps: int) -> None:
        for i, book in enumerate(self.books):
            book.save(steps, one_seed(states, i))
        self.schedule.done("checkpoint", steps)

    def on_iteration(self, states, seed_metrics) -> bool:
        """Log every seed's metrics (and evaluations when due); True to stop training."""
        steps = int(one_seed(states.steps, 0))
        evaluate = self.schedule.due("eval", steps)
        evaluations = self._evaluations(states) if evaluate else None
        for i, (book, host) in enumerate(zip(self.books, seed_metrics)):
            metrics, failed = book.metrics(host, steps)
            if failed is not None:
                self.stopped = self.stopped or failed
                continue
            if evaluations is not None:
                metrics.update(evaluations[i])
            book.log.write(steps, metrics)
        if evaluate:
            self.schedule.done("eval", steps)
        bodies = list(self.books[0].run.bodies)
        keys = ([body_key("episode/team_return", body) for body in bodies] if len(bodies) > 1
                else ["episode/team_return"])
        returns = ", ".join("/".join(f"{m.get(k, float('nan')):.1f}" for k in keys)
                            for m in seed_metrics)
        what = "team return per seed" + (f" ({'/'.join(bodies)})" if len(bodies) > 1 else "")
        self.console.print(f"step {steps:,}: {what} {returns}; "
                           f"{seed_metrics[0]['throughput/env_steps_per_s']:,.0f} env-steps/s")
        if self.stopped is not None:
            return True
        if self.stop.requested or self.schedule.due("checkpoint", steps):
            self._save(states, steps)
        if self.stop.requested:
            self.stopped = TrainingInterrupted(self.dirs[0], steps, True, self.stop.signum)
            return True
        return False

    def _trained_evaluations(self, states) -> tuple[list[dict[str, float]], float]:
        """Every seed's evaluation on its trained bodies, in one program, and its seconds
        (each seed's own eval key, as its run alone would use)."""
        started = time.perf_counter()
        keys = jnp.stack([book.eval_key for book in self.books])
        return self.trained(states, keys), time.perf_counter() - started

    def _evaluations(self, states) -> list[dict[str, float]]:
        """Every seed's `RunBook.evaluate`: trained bodies together, held-out ones per seed."""
        trained, seconds = self._trained_evaluations(states)
        return [book.evaluate(one_seed(states, i), trained[i], seconds)
                for i, book in enumerate(self.books)]

    def finish(self, states) -> None:
        """The last checkpoint, final evaluation, eval.json and videos of every seed."""
        trained, seconds = self._trained_evaluations(states)
        for i, book in enumerate(self.books):
            book.save_last(one_seed(states, i))
            book.finish(one_seed(states, i), self.console, trained[i], seconds)

    def close(self) -> None:
        for book in self.books:
            book.close()


def _program(run: Run) -> tuple:
    """What the compiled program depends on besides the env objects, which each seed's
    build makes anew from the same config (the program steps the first seed's)."""
    return tuple((g.name, g.body_envs, g.loss_weight, g.graphdef) for g in run.groups)
