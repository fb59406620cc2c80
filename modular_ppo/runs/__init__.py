"""Stage 5: training runs and their directories. Each name's docstring is its contract:

- settings: `TrainRunConfig` (config.py: body or bodies, network, env, PPO, evaluation,
  checkpoints, `--distributed.*`), `train_defaults(body)` (a body file's PPO preset);
- training: `run_training(config, console, env=None) -> run dir` (train_run.py), built
  on `build_run` / `Run` (build.py: one body or several sharing one network);
- a saved run: `restore_run(run_dir) -> (Run, step)`, `load_run_config(run_dir)`
  (build.py), `read_metrics(run_dir)` (run_dir.py: `runs/<body>/<timestamp>/`, never
  shared);
- a run's policy on another body (zero-shot): `policy_on_body`, `trained_policies`
  (transfer.py);
- errors: runs/errors.py (`RunConfigError`, `RunDirError`, `CheckpointError`,
  `TrainingFailed`, `TrainingInterrupted`, ...).
"""

from modular_ppo.runs.build import Run, build_run, load_run_config, restore_run
from modular_ppo.runs.config import TrainRunConfig, train_defaults
from modular_ppo.runs.errors import (
    CheckpointError,
    EnvRewardError,
    RenderError,
    RunConfigError,
    RunDirError,
    TrainingFailed,
    TrainingInterrupted,
    TransferError,
)
from modular_ppo.runs.run_dir import read_metrics
from modular_ppo.runs.train_run import run_training
from modular_ppo.runs.transfer import PolicyOnBody, policy_on_body, trained_policies

__all__ = [
    "CheckpointError",
    "EnvRewardError",
    "PolicyOnBody",
    "RenderError",
    "Run",
    "RunConfigError",
    "RunDirError",
    "TrainRunConfig",
    "TrainingFailed",
    "TrainingInterrupted",
    "TransferError",
    "build_run",
    "load_run_config",
    "policy_on_body",
    "read_metrics",
    "restore_run",
    "run_training",
    "train_defaults",
    "trained_policies",
]
