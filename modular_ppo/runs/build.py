"""Building a run from its config, and rebuilding a saved run from its directory."""

from __future__ import annotations

import dataclasses
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
from flax import nnx
from rich.console import Console

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import default_backend, make_env
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import count_parameters, make_network
from modular_ppo.ppo import (
    EvalConfig,
    OnIteration,
    TrainingState,
    make_evaluator,
    new_training_state,
    train,
)
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import (
    RunConfigError, TrainRunConfig, config_from_json, config_to_json, task_record,
)
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.multi_body_run import MultiBodyRun, build_multi_body_run
from modular_ppo.runs.run_dir import (
    CHECKPOINT_DIR,
    VIDEO_DIR,
    RunDirError,
    existing_run_dir,
    read_run_record,
)


class EnvRewardError(ModularPPOError):
    """An environment that does not reward exactly the modules it observes."""


@dataclasses.dataclass
class Run:
    """Everything built from a run's config. The methods are what `run_training` needs of
    a run, shared with `MultiBodyRun` (several bodies, one network)."""

    config: TrainRunConfig
    body: BodyGraph
    env: ModularEnvProtocol
    graphdef: nnx.GraphDef
    state: TrainingState

    @property
    def name(self) -> str:
        """The run's name in run directories and checkpoints: the body's."""
        return self.body.name

    @property
    def progress_modules(self) -> tuple[str, ...]:
        return self.body.module_names

    @property
    def progress_bodies(self) -> tuple[str, ...]:
        """The bodies shown apart in the progress display: none, there is one."""
        return ()

    def record(self) -> dict[str, Any]:
        """What config.json holds besides the config: modules, sizes, parameters, versions."""
        return {
            "config": config_to_json(self.config),
            "body": self.body.name,
            "arch": self.config.arch,
            "env": type(self.env).__name__,
            "task": task_record(self.env),
            "modules": list(self.body.module_names),
            "actuated_modules": list(self.body.actuated_modules),
            "obs_sizes": self.env.obs_sizes,
            "action_sizes": self.env.action_sizes,
            "parameters": count_parameters(nnx.merge(self.graphdef, self.state.network)),
            "versions": {
                "python": platform.python_version(),
                "jax": jax.__version__,
                "devices": [str(d) for d in jax.devices()],
            },
        }

    def evaluator(self, config: EvalConfig) -> Callable[[TrainingState, Any], dict[str, float]]:
        """(state, key) -> the evaluation metrics ("episode/team_return", ...)."""
        evaluate = make_evaluator(self.env, self.graphdef, config)
        return lambda state, key: to_floats(evaluate(state.network, key))

    def fit(self, on_iteration: OnIteration) -> TrainingState:
        return train(self.env, self.graphdef, self.config.ppo, seed=self.config.seed,
                     on_iteration=on_iteration, initial_state=self.state).state

    def summary(self, final: dict[str, float]) -> str:
        return (f"team return {final['eval/team_return']:.1f}, forward velocity "
                f"{final.get('eval/forward_velocity', float('nan')):.2f}")

    def write_videos(self, state: TrainingState, run_dir: Path, console: Console) -> None:
        from modular_ppo.runs.episode import record_episode
        from modular_ppo.runs.video import RenderError, render_frames, write_video

        qpos = record_episode(self.env, self.graphdef, state.network,
                              jax.random.key(self.config.seed), self.config.video_length)
        try:
            frames = render_frames(self.body, qpos)
        except RenderError as e:
            console.print(f"[yellow]no video[/]: {e}")
            return
        path = write_video(frames, run_dir / VIDEO_DIR / "final.mp4", fps=1.0 / self.env.dt)
        console.print(f"video: {path}")


AnyRun = Run | MultiBodyRun


def build_any_run(config: TrainRunConfig, env: ModularEnvProtocol | None = None) -> AnyRun:
    """`build_run`, or `build_multi_body_run` when --body lists several bodies."""
    if not config.multi_body:
        return build_run(config, env)
    if env is not None:
        raise RunConfigError(
            f"--body {config.body!r}: a custom env trains one body; give one body with it, "
            "or drop the env to train the listed bodies."
        )
    return build_multi_body_run(config)


def build_run(config: TrainRunConfig, env: ModularEnvProtocol | None = None) -> Run:
    """Body, env, network and a fresh training state from the config (nothing on disk).
    The run's config has the backend "auto" resolved to the one chosen.

    env: train in this environment (a custom task, a wrapper) instead of the one
    `config.body`, `config.partition` and `config.env` describe; its `body` is the run's.
    """
    if env is None:
        body = load_body(config.body, config.partition)
        backend = config.backend
        if backend == "auto":
            backend = default_backend(body)
            config = dataclasses.replace(config, backend=backend)
        env = make_env(body, config.env, backend)
    else:
        check_env_rewards(env)
    network = make_network(env.body, env.obs_sizes, config.network, rngs=nnx.Rngs(config.seed))
    graphdef, state = new_training_state(env, network, config.ppo, config.seed)
    return Run(config, env.body, env, graphdef, state)


def check_env_rewards(env: ModularEnvProtocol) -> None:
    """Raise EnvRewardError unless `env` rewards exactly the modules it observes: each
    module's value head, and each policy head trained on its own module's advantage,
    needs that module's reward stream."""
    rewarded = jax.eval_shape(env.reset, jax.random.key(0)).reward
    missing = [m for m in env.obs_sizes if m not in rewarded]
    unknown = [m for m in rewarded if m not in env.obs_sizes]
    if missing or unknown:
        raise EnvRewardError(
            f"{type(env).__name__}: its State.reward is keyed by {sorted(rewarded)}, but it "
            f"observes modules {sorted(env.obs_sizes)}; missing: {missing or 'none'}, "
            f"unknown: {unknown or 'none'}. Per-module advantages need a reward for every "
            "observed module: give each one a reward (0.0 where it earns none) in reset and "
            "step, and no others."
        )


def load_run_config(run_dir: Path) -> TrainRunConfig:
    """The config a run directory was trained with (its config.json)."""
    run_dir = existing_run_dir(run_dir)
    try:
        return config_from_json(read_run_record(run_dir)["config"])
    except ModularPPOError as e:
        raise RunDirError(f"{run_dir / 'config.json'}: {e}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise RunDirError(
            f"{run_dir / 'config.json'}: its config cannot be read ({e}). Restore the file "
            "written by the training run, or start a new run."
        ) from None


def checkpointer_for(run_dir: Path, run: AnyRun) -> Checkpointer:
    return Checkpointer(
        Path(run_dir) / CHECKPOINT_DIR,
        {"body": run.name, "arch": run.config.arch},
        max_to_keep=run.config.keep_checkpoints,
    )


def restore_run(run_dir: Path, env: ModularEnvProtocol | None = None) -> tuple[AnyRun, int]:
    """A run rebuilt from its directory, at its latest readable checkpoint (and its step);
    a `MultiBodyRun` when it trained several bodies."""
    run = build_any_run(load_run_config(run_dir), env)
    checkpointer = checkpointer_for(run_dir, run)
    try:
        step, state = checkpointer.restore_latest(run.state)
    finally:
        checkpointer.close()
    return dataclasses.replace(run, state=state), step
