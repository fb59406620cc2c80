"""Stage 4 of the pipeline: PPO for modular bodies, one agent per module, one network
trained on one body or several. Each entry point's docstring is its contract:

- settings: `PPOConfig`, `EvalConfig` (config.py);
- a run's bodies and state: `new_training_state` -> (`BodyGroup`s, `TrainingState`),
  `state_shardings` / `place_state` for data parallelism (state.py, sharding.py), the
  step counter `StepCounter` (counter.py);
- training: `train_step` (one jitted call of `iterations_per_call` iterations; the
  metric names are listed in metrics.py) and the host loop `train`, and `train_from_scratch` (train.py);
  the step compiled, optionally kept between runs as an exported program:
  `compile_train_step`, `ExportedSteps` (exported_step.py); compiled while a run is
  built: `StepAhead` (step_ahead.py);
  the CPU backend's physics on the host overlapped with the device's work
  (`--backend cpu-pipelined`): `pipelined_train_step` (pipelined_step.py) and
  `collect_pipelined` (pipelined_rollout.py), which `train(..., pipelined=True)` uses;
  several processes: `DistributedConfig`, `start_distributed`, `initialize_distributed`
  (distributed.py), which first meet at the coordinator's port (rendezvous.py); several
  seeds in one compiled program: `new_seed_states`, `train_seeds`, `train_step_seeds`,
  `one_seed` (seeds.py);
- evaluation: `make_evaluator` (an `Evaluator`), `evaluate` (evaluate.py), and how
  the episodes end: `episode_ends` (episode_ends.py);
- building blocks, for tests and variations: `gae`, `per_key_gae`, `team_advantage`,
  `collect_rollout`, `replay`, `make_batch`, `policy_advantages`, `split_environments`,
  `clipped_policy_loss`, `ppo_loss`.
"""

from modular_ppo.ppo.batch import Minibatch, make_batch, policy_advantages, split_environments
from modular_ppo.ppo.config import EvalConfig, PPOConfig, default_ppo_config, with_preset
from modular_ppo.ppo.distributed import (
    DistributedConfig,
    initialize_distributed,
    start_distributed,
)
from modular_ppo.ppo.counter import StepCounter
from modular_ppo.ppo.errors import (
    BodyGroupError,
    DistributedSetupError,
    NetworkEnvMismatch,
    PPOConfigError,
)
from modular_ppo.ppo.episode_ends import episode_ends
from modular_ppo.ppo.evaluate import Evaluator, evaluate, make_evaluator
from modular_ppo.ppo.exported_step import ExportedSteps, compile_train_step
from modular_ppo.ppo.gae import gae, per_key_gae, team_advantage
from modular_ppo.ppo.loss import LossTerms, clipped_policy_loss, ppo_loss
from modular_ppo.ppo.metrics import HostMetrics, Metrics, body_key, for_body, metrics_to_host
from modular_ppo.ppo.pipelined_rollout import collect_pipelined
from modular_ppo.ppo.pipelined_step import pipelined_train_step
from modular_ppo.ppo.step_ahead import StepAhead
from modular_ppo.ppo.rollout import Replay, Rollout, collect_rollout, replay
from modular_ppo.ppo.state import (
    BodyGroup,
    GroupState,
    TrainingState,
    make_optimizer,
    new_training_state,
    place_state,
    state_shardings,
)
from modular_ppo.ppo.seeds import (
    SeedsResult,
    new_seed_states,
    one_seed,
    train_seeds,
    train_step_seeds,
)
from modular_ppo.ppo.step import train_step
from modular_ppo.ppo.train import OnIteration, TrainResult, train, train_from_scratch

__all__ = [
    "DistributedConfig",
    "BodyGroup",
    "BodyGroupError",
    "GroupState",
    "StepCounter",
    "body_key",
    "for_body",
    "DistributedSetupError",
    "EvalConfig",
    "Evaluator",
    "ExportedSteps",
    "HostMetrics",
    "LossTerms",
    "Metrics",
    "Minibatch",
    "NetworkEnvMismatch",
    "OnIteration",
    "PPOConfig",
    "PPOConfigError",
    "Replay",
    "Rollout",
    "SeedsResult",
    "StepAhead",
    "TrainResult",
    "TrainingState",
    "clipped_policy_loss",
    "collect_pipelined",
    "collect_rollout",
    "compile_train_step",
    "default_ppo_config",
    "with_preset",
    "episode_ends",
    "evaluate",
    "gae",
    "initialize_distributed",
    "start_distributed",
    "make_batch",
    "make_evaluator",
    "make_optimizer",
    "metrics_to_host",
    "new_seed_states",
    "new_training_state",
    "one_seed",
    "per_key_gae",
    "pipelined_train_step",
    "place_state",
    "policy_advantages",
    "ppo_loss",
    "replay",
    "split_environments",
    "state_shardings",
    "team_advantage",
    "train",
    "train_from_scratch",
    "train_seeds",
    "train_step",
    "train_step_seeds",
]
