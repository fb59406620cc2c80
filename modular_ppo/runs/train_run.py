"""A training run: build body, env, network and PPO from a config; drive them; keep a run dir.

The run dir holds config.json, metrics.jsonl, TensorBoard events, checkpoints of the full
training state, eval.json and a video. Ctrl-C saves a checkpoint and exits cleanly; a
non-finite loss stops the run with the module named, keeps the last good checkpoint and
writes failure.json.
"""

from __future__ import annotations

import dataclasses
import json
import platform
import signal
import time
from pathlib import Path
from typing import Any

import jax
from flax import nnx
from rich.console import Console

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import ModularEnv, make_env
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import count_parameters, make_network
from modular_ppo.ppo import TrainingState, make_evaluator, new_training_state, train
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import TrainRunConfig, config_from_json, config_to_json
from modular_ppo.runs.metrics_log import MetricsLog, to_floats
from modular_ppo.runs.progress import Progress
from modular_ppo.runs.run_dir import (
    CHECKPOINT_DIR,
    CONFIG_FILE,
    EVAL_FILE,
    FAILURE_FILE,
    VIDEO_DIR,
    existing_run_dir,
    new_run_dir,
    write_json,
)


@dataclasses.dataclass
class Run:
    """Everything built from a run's config."""

    config: TrainRunConfig
    body: BodyGraph
    env: ModularEnv
    graphdef: nnx.GraphDef
    state: TrainingState


def build_run(config: TrainRunConfig) -> Run:
    """Body, env, network and a fresh training state from the config (nothing on disk)."""
    body = load_body(config.body, config.partition)
    env = make_env(body, config.env)
    network = make_network(body, env.obs_sizes, config.network, rngs=nnx.Rngs(config.seed))
    graphdef, state = new_training_state(env, network, config.ppo, config.seed)
    return Run(config, body, env, graphdef, state)


def load_run_config(run_dir: Path) -> TrainRunConfig:
    run_dir = existing_run_dir(run_dir)
    return config_from_json(json.loads((run_dir / CONFIG_FILE).read_text())["config"])


def checkpointer_for(run_dir: Path, run: Run) -> Checkpointer:
    return Checkpointer(
        run_dir / CHECKPOINT_DIR,
        {"body": run.body.name, "arch": run.config.arch},
        max_to_keep=run.config.keep_checkpoints,
    )


def restore_run(run_dir: Path) -> tuple[Run, int]:
    """A run rebuilt from its directory, at its latest readable checkpoint."""
    run = build_run(load_run_config(run_dir))
    checkpointer = checkpointer_for(Path(run_dir), run)
    step, state = checkpointer.restore_latest(run.state)
    checkpointer.close()
    return dataclasses.replace(run, state=state), step


def _run_record(config: TrainRunConfig, run: Run) -> dict[str, Any]:
    return {
        "config": config_to_json(config),
        "body": run.body.name,
        "arch": config.arch,
        "modules": list(run.body.module_names),
        "actuated_modules": list(run.body.actuated_modules),
        "obs_sizes": run.env.obs_sizes,
        "action_sizes": run.env.action_sizes,
        "parameters": count_parameters(nnx.merge(run.graphdef, run.state.network)),
        "versions": {
            "python": platform.python_version(),
            "jax": jax.__version__,
            "devices": [str(d) for d in jax.devices()],
        },
    }


def _nonfinite_message(metrics: dict[str, float]) -> str | None:
    if not metrics.get("nonfinite/any"):
        return None
    flagged = [k.removeprefix("nonfinite/") for k, v in metrics.items()
               if k.startswith("nonfinite/") and k != "nonfinite/any" and v]
    modules = [k.split("/", 1)[1] for k in flagged if k.startswith(("actor/", "critic/"))]
    where = f"module(s) {', '.join(dict.fromkeys(modules))}" if modules else "the network"
    return (f"non-finite values in {', '.join(flagged)} (first in {where}). Training "
            "stopped; the last good checkpoint is kept. Lower --ppo.learning-rate, check the "
            "body's rewards, or resume from the checkpoint with another seed.")


class _StopRequests:
    """Turns the first Ctrl-C into a request to save and stop; a second one interrupts."""

    def __init__(self) -> None:
        self.requested = False
        self._previous = None

    def __enter__(self) -> _StopRequests:
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    def __exit__(self, *exc) -> None:
        signal.signal(signal.SIGINT, self._previous)


def run_training(config: TrainRunConfig, console: Console | None = None) -> Path:
    """Train as configured; return the run directory."""
    started_at = time.perf_counter()
    console = console or Console()
    resume_step = None
    if config.resume is not None:
        saved = load_run_config(config.resume)
        total = max(saved.ppo.total_steps, config.ppo.total_steps)
        config = dataclasses.replace(
            saved, resume=config.resume, ppo=dataclasses.replace(saved.ppo, total_steps=total)
        )
    console.print(f"building [bold]{config.body}[/] with the [bold]{config.arch}[/] network ...")
    run = build_run(config)
    if config.resume is not None:
        run_dir = existing_run_dir(config.resume)
        checkpointer = checkpointer_for(run_dir, run)
        resume_step, state = checkpointer.restore_latest(run.state)
        run = dataclasses.replace(run, state=state)
        console.print(f"resuming {run_dir} from step {resume_step:,}")
    else:
        run_dir = new_run_dir(config.runs_root, run.body.name, config.run_name)
        checkpointer = checkpointer_for(run_dir, run)
    write_json(run_dir / CONFIG_FILE, _run_record(config, run))
    console.print(f"run dir: [bold]{run_dir}[/]")

    log = MetricsLog(run_dir)
    evaluator = make_evaluator(run.env, run.graphdef, config.eval)
    eval_key = jax.random.key(config.seed + 1)
    last = {"eval": int(run.state.steps) if resume_step is not None else -1,
            "checkpoint": int(run.state.steps)}
    result: dict[str, Any] = {"stopped": None}

    def evaluate(state: TrainingState) -> dict[str, float]:
        started = time.perf_counter()
        metrics = to_floats(evaluator(state.network, eval_key))
        out = {f"eval/{k.removeprefix('episode/')}": v for k, v in metrics.items()}
        out["time/eval_s"] = time.perf_counter() - started
        return out

    def due(kind: str, every: int, steps: int) -> bool:
        return every > 0 and steps // every > last[kind] // every

    with Progress(config.ppo.total_steps, run.body.module_names, console) as progress, \
            _StopRequests() as stop:
        progress.message("compiling the training step (the first call takes a while on CPU) ...")

        def on_iteration(state: TrainingState, device_metrics: dict[str, Any]) -> bool:
            steps = int(state.steps)
            metrics = to_floats(device_metrics)
            metrics["time/elapsed_s"] = time.perf_counter() - started_at
            failure = _nonfinite_message(metrics)
            if failure is not None:
                log.write(steps, metrics)
                write_json(run_dir / FAILURE_FILE, {"step": steps, "error": failure,
                                                    "metrics": metrics})
                result["stopped"] = failure
                return True
            if due("eval", config.eval_every_steps, steps):
                metrics.update(evaluate(state))
                last["eval"] = steps
            log.write(steps, metrics)
            progress.update(steps, metrics)
            if stop.requested:
                checkpointer.save(steps, state)
                result["stopped"] = f"interrupted at step {steps:,}; checkpoint saved"
                return True
            if due("checkpoint", config.checkpoint_every_steps, steps):
                checkpointer.save(steps, state)
                last["checkpoint"] = steps
            return False

        outcome = train(run.env, run.graphdef, config.ppo, seed=config.seed,
                        on_iteration=on_iteration, initial_state=run.state)
    state = outcome.state
    steps = int(state.steps)
    if result["stopped"] is not None and not stop.requested:
        log.close()
        checkpointer.close()
        console.print(f"[bold red]training failed[/]: {result['stopped']}")
        raise TrainingFailed(result["stopped"], run_dir)
    if result["stopped"] is None and steps not in checkpointer.steps():
        checkpointer.save(steps, state)
    checkpointer.close()
    final = evaluate(state)
    log.write(steps, final)
    log.close()
    write_json(run_dir / EVAL_FILE, {"step": steps, **final})
    console.print(
        f"final eval at step {steps:,}: team return {final['eval/team_return']:.1f}, "
        f"forward velocity {final.get('eval/forward_velocity', float('nan')):.2f}"
    )
    if config.video and result["stopped"] is None:
        _final_video(run, state, run_dir, console)
    if result["stopped"] is not None:
        console.print(f"[bold yellow]{result['stopped']}[/]; continue with "
                      f"`python cli.py train --resume {run_dir}`")
    console.print(f"done: {run_dir}")
    return run_dir


class TrainingFailed(ModularPPOError):
    """Training stopped on non-finite values; the run dir keeps the last good checkpoint."""

    def __init__(self, message: str, run_dir: Path):
        super().__init__(message)
        self.run_dir = run_dir


def _final_video(run: Run, state: TrainingState, run_dir: Path, console: Console) -> None:
    from modular_ppo.runs.episode import record_episode
    from modular_ppo.runs.video import RenderError, render_frames, write_video

    qpos = record_episode(run.env, run.graphdef, state.network, jax.random.key(run.config.seed),
                          run.config.video_length)
    try:
        frames = render_frames(run.body, qpos)
    except RenderError as e:
        console.print(f"[yellow]no video[/]: {e}")
        return
    path = write_video(frames, run_dir / VIDEO_DIR / "final.mp4", fps=1.0 / run.env.dt)
    console.print(f"video: {path}")
