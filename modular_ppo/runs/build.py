"""Building a run: networks and a fresh training state from its resolved config, or the
state of a saved run at its latest checkpoint."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from flax import nnx

from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks import MaxSizeTooSmall, make_network
from modular_ppo.ppo import BodyGroup, StepAhead, TrainingState, new_training_state
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import load_run_config
from modular_ppo.runs.max_sizes import max_size_error
from modular_ppo.runs.resolve import LoadedBodies, ResolvedRun, resolve_train_config
from modular_ppo.runs.run import Run, exported_steps
from modular_ppo.runs.run_dir import CHECKPOINT_DIR


def new_run(resolved: ResolvedRun, compile_ahead: bool = False) -> Run:
    """The networks (one per body, sharing their parameters) and a fresh training state
    of a resolved run. compile_ahead: start compiling its training step now, while the
    networks and state are built (`ppo.StepAhead`; not with data parallelism): for a run
    about to train, on a machine with cores to spare."""
    config = resolved.config
    ahead = None
    if compile_ahead and not config.ppo.data_parallel:
        ahead = StepAhead(lambda: _networks_and_state(resolved), config.ppo,
                          exported_steps(config, resolved.bodies, resolved.custom_env),
                          config.pipelined, config.device_share or 0.0)
    groups, state = _networks_and_state(resolved)
    return Run(config, resolved.bodies, groups, state, custom_env=resolved.custom_env,
               step_ahead=ahead)


def _networks_and_state(resolved: ResolvedRun) -> tuple[tuple[BodyGroup, ...], TrainingState]:
    config = resolved.config
    try:
        networks = [
            (env, make_network(resolved.bodies[name], env.obs_sizes, config.network,
                               rngs=nnx.Rngs(config.seed + i)))
            for i, (name, env) in enumerate(resolved.envs.items())
        ]
    except MaxSizeTooSmall as error:
        raise max_size_error(config, error) from None
    return new_training_state(networks, config.ppo, config.seed,
                              body_envs=resolved.body_envs,
                              loss_weights=resolved.loss_weights)


def build_run(config: TrainRunConfig, env: ModularEnvProtocol | None = None,
              loaded: LoadedBodies | None = None) -> Run:
    """`new_run` of `resolve_train_config(config, env, loaded)`: bodies, envs, networks
    and a fresh training state from settings as given (nothing on disk)."""
    return new_run(resolve_train_config(config, env, loaded))


def checkpointer_for(run_dir: Path, run: Run) -> Checkpointer:
    return Checkpointer(
        Path(run_dir) / CHECKPOINT_DIR,
        {"body": run.name, "arch": run.config.arch},
        max_to_keep=run.config.keep_checkpoints,
    )


def restore_run(run_dir: Path, env: ModularEnvProtocol | None = None) -> tuple[Run, int]:
    """A run rebuilt from its directory (resolved as resuming it), at its latest readable
    checkpoint, and that checkpoint's step."""
    config = dataclasses.replace(load_run_config(run_dir), resume=Path(run_dir))
    run = build_run(config, env)
    checkpointer = checkpointer_for(run_dir, run)
    try:
        step, state = checkpointer.restore_latest(run.state)
    finally:
        checkpointer.close()
    return dataclasses.replace(run, state=state), step
