"""Building a run from its config, and rebuilding a saved run from its directory."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
from flax import nnx

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import default_backend, make_env
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import make_network
from modular_ppo.ppo import TrainingState, new_training_state
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import TrainRunConfig, config_from_json
from modular_ppo.runs.run_dir import CHECKPOINT_DIR, RunDirError, existing_run_dir, read_run_record


class EnvRewardError(ModularPPOError):
    """An environment that does not reward exactly the modules it observes."""


@dataclasses.dataclass
class Run:
    """Everything built from a run's config."""

    config: TrainRunConfig
    body: BodyGraph
    env: ModularEnvProtocol
    graphdef: nnx.GraphDef
    state: TrainingState


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
            backend = default_backend(body, config.env)
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


def checkpointer_for(run_dir: Path, run: Run) -> Checkpointer:
    return Checkpointer(
        Path(run_dir) / CHECKPOINT_DIR,
        {"body": run.body.name, "arch": run.config.arch},
        max_to_keep=run.config.keep_checkpoints,
    )


def restore_run(run_dir: Path, env: ModularEnvProtocol | None = None) -> tuple[Run, int]:
    """A run rebuilt from its directory, at its latest readable checkpoint (and its step)."""
    run = build_run(load_run_config(run_dir), env)
    checkpointer = checkpointer_for(run_dir, run)
    try:
        step, state = checkpointer.restore_latest(run.state)
    finally:
        checkpointer.close()
    return dataclasses.replace(run, state=state), step
