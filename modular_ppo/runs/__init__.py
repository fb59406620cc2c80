"""Stage 5: training runs and their directories. Each name's docstring is its contract:

- settings: `TrainRunConfig` (config.py: body or bodies, network, env, PPO, evaluation,
  checkpoints, `--distributed.*`); the one place they are resolved into a run's final
  config: `resolve_train_config(config, env=None, loaded=None) -> ResolvedRun` and
  `train_defaults(body)` (a body file's PPO preset) (resolve.py);
- training: `run_training(config, console, env=None) -> run dir` (train_run.py), built
  on `build_run` / `new_run` (build.py) and `Run` (run.py: one body or several sharing one
  network);
- a saved run: `restore_run(run_dir) -> (Run, step)` (build.py), `load_run_config(run_dir)`
  (config_json.py), `read_metrics(run_dir)` (run_dir.py: `runs/<body>/<timestamp>/`,
  never shared);
- a run's policy on another body (zero-shot): `policy_on_body`, `trained_policies`
  (transfer.py);
- errors: runs/errors.py (`RunConfigError`, `RunDirError`, `CheckpointError`,
  `TrainingFailed`, `TrainingInterrupted`, ...).
"""

from modular_ppo.runs.build import build_run, new_run, restore_run
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import load_run_config
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
from modular_ppo.runs.resolve import ResolvedRun, resolve_train_config, train_defaults
from modular_ppo.runs.run import Run
from modular_ppo.runs.run_dir import read_metrics
from modular_ppo.runs.train_run import run_training
from modular_ppo.runs.transfer import PolicyOnBody, policy_on_body, trained_policies

__all__ = [
    "CheckpointError",
    "EnvRewardError",
    "PolicyOnBody",
    "RenderError",
    "ResolvedRun",
    "Run",
    "RunConfigError",
    "RunDirError",
    "TrainRunConfig",
    "TrainingFailed",
    "TrainingInterrupted",
    "TransferError",
    "build_run",
    "load_run_config",
    "new_run",
    "policy_on_body",
    "read_metrics",
    "resolve_train_config",
    "restore_run",
    "run_training",
    "train_defaults",
    "trained_policies",
]
