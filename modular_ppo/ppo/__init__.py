"""Stage 4 of the pipeline: PPO for modular bodies, one agent per module.

Contract (what the run layer and users may rely on):

Settings
- `PPOConfig`, `EvalConfig`: frozen, tyro-ready dataclasses, checked on construction
  (`PPOConfigError`, a ValueError naming the field and the fix).

Training
- `new_training_state(env, network, config, seed) -> (graphdef, TrainingState)`: splits the
  network once (`nnx.split`) and resets `config.n_envs` environments. Raises
  `NetworkEnvMismatch` unless the network has a value head for every module and a policy
  head of the right size for every actuated module.
- `TrainingState`: a pure pytree (network `nnx.State` with parameters, normaliser
  statistics and RNG streams; optax state; batched env states; recurrent network states;
  PRNG key; `steps`; `iteration`). Checkpoint it whole (orbax); together with the graphdef,
  env and config it resumes bit for bit.
- `train_step(env, graphdef, config, state) -> (state, metrics)`: jitted, with env,
  graphdef and config static (they must be hashable), running
  `config.iterations_per_call` PPO iterations. One iteration: a rollout of
  `rollout_length` steps of every env (network state reset where episodes end), per-module
  GAE (optionally summed into a team advantage, `combine_advantages`), then
  n_epochs x n_minibatches updates on whole environment trajectories, then
  `network.update_statistics` on the rollout's observations.
- `train(env, network | graphdef, config, *, seed, on_iteration, initial_state)
  -> TrainResult(graphdef, state, metrics)`: the host loop; `on_iteration(state, metrics)`
  after every jitted call, returning True stops.

Data parallel (`PPOConfig(data_parallel=True)`; off by default)
- The environments are split evenly over a mesh of every device with one axis, "data"
  (`jax.sharding`): env states, recurrent states and rollouts along their environment
  axis; network state, optimiser state, PRNG key and counters copied to every device.
  The training step is the single-device program with sharding annotations, so the
  compiler averages the gradients across devices and each minibatch (drawn over all
  environments, as on one device) is split over the devices: the update equals one
  device's with the same n_envs, up to float rounding. The price of that equality: every
  epoch's reshuffle moves environments' rollout data between devices. n_envs must be a
  multiple of devices x n_minibatches (PPOConfigError otherwise, when the state is built
  or placed). `make_evaluator` takes such a network state as it is and runs its episodes
  whole on every device (not split).
- `state_shardings(state, config)`: where each leaf lives (restore a checkpoint straight
  into it); `place_state(state, config)`: move a state there. `new_training_state` and
  `train` place their states themselves.
- Several processes (hosts): `initialize_distributed(coordinator_address, num_processes,
  process_id)` in each process before any other JAX call (CPU devices talk through gloo),
  then the same program, configs and seed in every process (`on_iteration` must decide
  alike in each). Parameters and metrics are whole in each process; env and recurrent
  states only in part (this process's devices).

Metrics (flat dict, '/'-separated; per module key where shown)
- `losses/actor/<module>`, `losses/critic/<module>`, `losses/clipping_fraction/<module>`,
  `critic/explained_variance/<module>`, `advantages/mean/<module>`,
  `advantages/std/<module>` (each module's own GAE, before combining or normalising),
  `losses/regularization`, `losses/total`, `grad_norm` (before clipping).
- `episode/team_return` (summed over modules), `episode/return/<module>`,
  `episode/length`, `episode/forward_velocity`: means over the episodes that finished
  during the call, from the env's `info["last_episode"]`; `episode/count` their number.
  Host metrics drop the episode means when the count is 0.
- `nonfinite/actions/<module>` (sampled in the rollout), `nonfinite/actor/<module>`,
  `nonfinite/critic/<module>`: the modules that were non-finite at the first point (the
  rollout's actions, then each update's losses, iteration after iteration) where any
  was, which names the culprit before NaN spreads to every module through the shared
  update. `nonfinite/regularization`, `nonfinite/gradients`, `nonfinite/parameters` (any
  floating leaf of the network state), `nonfinite/rollout` (observations or rewards):
  anywhere in the call. `nonfinite/any`. Booleans; the run layer decides to stop.
- `steps`, `iteration`; host only: `time/call_s`, `throughput/env_steps_per_s`, and on
  the first call `time/compile_s`.

Evaluation
- `make_evaluator(env, graphdef, eval_config) -> (network_state, key) -> metrics`: jitted
  (compiled once per env, network structure and config), one full episode per env from
  fresh resets; `evaluate(...)` for a single call. Metrics:
  `episode/team_return`, `episode/return/<module>`, `episode/length`,
  `episode/forward_velocity`.

Several bodies, one network (multi_body_*.py)
- `new_multi_body_state({body: (env, network)}, n_envs, loss_weights, config, seed) ->
  (groups, MultiBodyState)`: the networks (shared / graph / attention with common max
  sizes) must hold the same Params; each body keeps its own normaliser statistics and env
  states. `multi_body_train_step(groups, config, state)` (jitted: every body's rollout and
  GAE, then updates on the loss-weighted sum of the bodies' PPO losses, each a mean over
  its own samples) and `train_multi_body(groups, state, config, on_iteration=...)`.
  Metrics carry the body's name: `losses/critic/<body>/<module>`,
  `episode/team_return/<body>`; `MultiBodyError` for bodies that cannot share a run.

Building blocks, for tests and variations: `gae`, `per_key_gae`, `team_advantage`,
`collect_rollout`, `replay`, `make_batch`, `policy_advantages`, `split_environments`,
`clipped_policy_loss`, `ppo_loss`.
"""

from modular_ppo.ppo.batch import Minibatch, make_batch, policy_advantages, split_environments
from modular_ppo.ppo.config import EvalConfig, PPOConfig, default_ppo_config, with_preset
from modular_ppo.ppo.distributed import initialize_distributed
from modular_ppo.ppo.errors import DistributedSetupError, NetworkEnvMismatch, PPOConfigError
from modular_ppo.ppo.evaluate import Evaluator, evaluate, make_evaluator
from modular_ppo.ppo.gae import gae, per_key_gae, team_advantage
from modular_ppo.ppo.loss import LossTerms, clipped_policy_loss, ppo_loss
from modular_ppo.ppo.metrics import HostMetrics, Metrics, metrics_to_host
from modular_ppo.ppo.multi_body_state import MultiBodyError, MultiBodyState, new_multi_body_state
from modular_ppo.ppo.multi_body_step import multi_body_train_step
from modular_ppo.ppo.multi_body_train import train_multi_body
from modular_ppo.ppo.rollout import Replay, Rollout, collect_rollout, replay
from modular_ppo.ppo.state import (
    TrainingState,
    make_optimizer,
    new_training_state,
    place_state,
    state_shardings,
)
from modular_ppo.ppo.step import train_step
from modular_ppo.ppo.train import OnIteration, TrainResult, train

__all__ = [
    "DistributedSetupError",
    "EvalConfig",
    "Evaluator",
    "HostMetrics",
    "LossTerms",
    "Metrics",
    "Minibatch",
    "MultiBodyError",
    "MultiBodyState",
    "NetworkEnvMismatch",
    "OnIteration",
    "PPOConfig",
    "PPOConfigError",
    "Replay",
    "Rollout",
    "TrainResult",
    "TrainingState",
    "clipped_policy_loss",
    "collect_rollout",
    "default_ppo_config",
    "with_preset",
    "evaluate",
    "gae",
    "initialize_distributed",
    "make_batch",
    "make_evaluator",
    "make_optimizer",
    "metrics_to_host",
    "multi_body_train_step",
    "new_multi_body_state",
    "new_training_state",
    "per_key_gae",
    "place_state",
    "policy_advantages",
    "ppo_loss",
    "replay",
    "split_environments",
    "state_shardings",
    "team_advantage",
    "train",
    "train_multi_body",
    "train_step",
]
