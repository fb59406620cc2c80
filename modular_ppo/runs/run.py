"""`Run`: a training run built from its resolved config (nothing on disk): its bodies,
their envs and networks, and the training state; how it trains, evaluates, records and
renders."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
from flax import nnx
from rich.console import Console

from modular_ppo.body import BodyGraph
from modular_ppo.compile_cache import exported_folder
from modular_ppo.networks import count_parameters
from modular_ppo.ppo import (
    BodyGroup,
    EvalConfig,
    ExportedSteps,
    OnIteration,
    StepAhead,
    TrainingState,
    body_key,
    for_body,
    make_evaluator,
    train,
)
from modular_ppo.ppo.seeds import one_seed, stack
from modular_ppo.ppo.sharding import to_local
from modular_ppo.runs.background import Background
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import config_to_json, task_record
from modular_ppo.runs.errors import RenderError
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.program_key import program_key
from modular_ppo.runs.run_dir import VIDEO_DIR
from modular_ppo.runs.versions import versions


def exported_steps(config: TrainRunConfig, bodies: dict[str, BodyGraph],
                   custom_env: bool) -> ExportedSteps | None:
    """Where a run keeps its traced training step (`Run.fit`): with JAX's compilation cache
    on (a local folder), except with data_parallel, where a program would be tied to the
    devices' assignment, and on a custom env (`runs.program_key` names what the config
    builds)."""
    folder = exported_folder()
    if folder is None or custom_env or config.ppo.data_parallel:
        return None
    return ExportedSteps(folder, program_key(config, bodies))


@dataclasses.dataclass
class Run:
    """Everything built from a run's config (nothing on disk): one body, or several
    sharing one network. Names follow the metrics' rule (`ppo.for_body`): with one body
    they are the body's own, with several each carries its body's name."""

    config: TrainRunConfig
    """The run's resolved config (`runs.resolve`), read and never rewritten."""
    bodies: dict[str, BodyGraph]
    groups: tuple[BodyGroup, ...]
    state: TrainingState
    custom_env: bool = False
    """Built on an env given in code, not from the config: its training step is traced
    every time (`runs.program_key` can name only what the config builds)."""
    step_ahead: StepAhead | None = None
    """Its training step, compiling since the run was built (`runs.build.new_run`)."""

    @property
    def name(self) -> str:
        """The run's name in run directories and checkpoints: the bodies joined by '+'."""
        return "+".join(self.bodies)

    @property
    def progress_modules(self) -> tuple[str, ...]:
        """The module names the metrics use ("<body>/<module>" with several bodies)."""
        return tuple(self._named(body, module)
                     for body, graph in self.bodies.items() for module in graph.module_names)

    @property
    def progress_bodies(self) -> tuple[str, ...]:
        """The bodies shown apart in the progress display (none when there is one)."""
        return tuple(self.bodies) if len(self.bodies) > 1 else ()

    def record(self) -> dict[str, Any]:
        """What config.json holds besides the config: bodies, modules, sizes, parameters,
        versions. Per-body entries are the body's own with one body, keyed by body with
        several."""
        first = self.groups[0]
        envs = {group.name: group.env for group in self.groups}
        network = nnx.merge(first.graphdef, self.state.network_state(first.name))
        several = {
            "bodies": list(self.bodies),
            "body_envs": {group.name: group.body_envs for group in self.groups},
            "body_loss_weights": {group.name: group.loss_weight for group in self.groups},
        } if len(self.bodies) > 1 else {}
        return {
            "config": config_to_json(self.config),
            "body": self.name,
            **several,
            "arch": self.config.arch,
            "env": type(first.env).__name__,
            "task": self._per_body({name: task_record(env) for name, env in envs.items()}),
            "modules": list(self.progress_modules),
            "actuated_modules": self._per_body(
                {name: list(body.actuated_modules) for name, body in self.bodies.items()}),
            "obs_sizes": self._per_body({name: env.obs_sizes for name, env in envs.items()}),
            "action_sizes": self._per_body(
                {name: env.action_sizes for name, env in envs.items()}),
            "parameters": count_parameters(network),
            "versions": versions(),
        }

    def evaluator(self, config: EvalConfig, ahead: bool = False, seeds: int = 0
                  ) -> Callable[[TrainingState, Any], Any]:
        """(state, key) -> every body's evaluation metrics ("episode/team_return", ...,
        named with `ppo.for_body`), computed by this process alone.

        ahead: start compiling the evaluations now, in a background thread, so that they
        compile while the training step does; the first call waits for them (and raises
        what compiling raised). seeds: > 0 for states and keys stacked along a leading axis
        of that many seeds (`ppo.seeds`, this run's state one of them), all evaluated in
        one program; the call then returns each seed's metrics, in order."""
        evaluators = {g.name: make_evaluator(g.env, g.graphdef, config, seeded=seeds > 0)
                      for g in self.groups}

        def like(name: str) -> tuple[Any, Any]:
            network_state, key = to_local(self.state.network_state(name)), jax.random.key(0)
            if not seeds:
                return network_state, key
            return stack([network_state] * seeds), jax.random.split(key, seeds)

        pending = Background(lambda: [
            evaluator.compile(*like(name)) for name, evaluator in evaluators.items()
        ], "compile evaluation") if ahead else None

        def evaluate(state: TrainingState, key) -> Any:
            if pending is not None:
                pending.wait()
            metrics: list[dict[str, float]] = [{} for _ in range(max(seeds, 1))]
            for name, evaluator in evaluators.items():
                out = evaluator(to_local(state.network_state(name)), key)
                for i, seed_metrics in enumerate(metrics):
                    seed_out = one_seed(out, i) if seeds else out
                    seed_metrics.update(for_body(to_floats(seed_out), name, list(self.bodies)))
            return metrics if seeds else metrics[0]

        return evaluate

    def fit(self, on_iteration: OnIteration) -> TrainingState:
        """Train from `state`, the traced training step kept in `exported_steps`."""
        exported = exported_steps(self.config, self.bodies, self.custom_env)
        return train(self.groups, self.state, self.config.ppo, on_iteration=on_iteration,
                     exported=exported, pipelined=self.config.pipelined,
                     device_share=self.config.device_share or 0.0,
                     ahead=self.step_ahead).state

    def summary(self, final: dict[str, float]) -> str:
        if len(self.bodies) == 1:
            return (f"team return {final['eval/team_return']:.1f}, forward velocity "
                    f"{final.get('eval/forward_velocity', math.nan):.2f}")
        return "team return " + ", ".join(
            f"{name} {final.get(body_key('eval/team_return', name), math.nan):.1f}"
            for name in self.bodies
        )

    def write_videos(self, state: TrainingState, run_dir: Path, console: Console) -> None:
        """A video of the final policy on each body: videos/final.mp4 with one body,
        videos/<body>.mp4 with several."""
        from modular_ppo.runs.episode import record_episode
        from modular_ppo.runs.video import render_frames, write_video

        for group in self.groups:
            qpos = record_episode(group.env, group.graphdef,
                                  to_local(state.network_state(group.name)),
                                  jax.random.key(self.config.seed), self.config.video_length)
            try:
                frames = render_frames(self.bodies[group.name], qpos)
            except RenderError as e:
                console.print(f"[yellow]no video[/]: {e}")
                return
            file = "final.mp4" if len(self.bodies) == 1 else f"{group.name}.mp4"
            path = write_video(frames, run_dir / VIDEO_DIR / file, fps=1.0 / group.env.dt)
            console.print(f"video: {path}")

    def _named(self, body: str, module: str) -> str:
        return module if len(self.bodies) == 1 else f"{body}/{module}"

    def _per_body(self, values: dict[str, Any]) -> Any:
        return next(iter(values.values())) if len(values) == 1 else values
