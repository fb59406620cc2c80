"""Fine-tuning: a new run that starts from another run's parameters (`--init-from RUN_DIR`).

The new run takes the source run's network settings (architecture and max sizes, so its
parameters fit), its parameters from the source's latest checkpoint, a fresh optimizer
state, and for each of its bodies an observation normalizer warmed up by the policy itself
acting on that body (as zero-shot evaluation does: observations only, no reward, no
parameter change). Everything else (bodies, env, PPO settings, seed) is the new run's own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
from flax import nnx

from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import make_optimizer, place_state
from modular_ppo.ppo.state import same_parameter_shapes
from modular_ppo.runs.build import Run, load_run_config, restore_run
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import RunConfigError, TransferError
from modular_ppo.runs.transfer import DEFAULT_WARMUP_STEPS, warm_up_normalizer


def with_source_network(config: TrainRunConfig) -> TrainRunConfig:
    """`config` with the network settings of its --init-from run. Network flags set away
    from the defaults to other values raise RunConfigError (the parameters fix them)."""
    source = load_run_config(config.init_from).network
    given = config.network
    if given not in (TrainRunConfig().network, source):
        changed = [field.name for field in dataclasses.fields(NetworkConfig)
                   if getattr(given, field.name) != getattr(source, field.name)]
        raise RunConfigError(
            f"--init-from {config.init_from}: the new run takes that run's network (arch "
            f"{source.arch}), whose parameters it starts from, but these network settings "
            f"differ from it: {', '.join(changed)}. Drop them."
        )
    return dataclasses.replace(config, network=source)


def start_from(run: Run, source_dir: Path) -> Run:
    """`run` (freshly built with `with_source_network`'s config) with the parameters of
    `source_dir`'s latest checkpoint, a fresh optimizer state and warmed-up normalizers."""
    source, _ = restore_run(source_dir)
    params = source.state.params
    if not same_parameter_shapes(params, run.state.params):
        bodies = ", ".join(source.bodies)
        raise TransferError(
            f"--init-from {source_dir}: its parameters (trained on {bodies}, --arch "
            f"{source.config.arch}) do not fit a network for {', '.join(run.bodies)}. "
            "--arch separate keeps weights per module name, so it fine-tunes only on the "
            "bodies it trained on; start from a shared, graph or attention run."
        )
    keys = jax.random.split(jax.random.key(run.config.seed + 2), len(run.groups))
    groups = {}
    for group, key in zip(run.groups, keys):
        own = run.state.groups[group.name]
        warmed = warm_up_normalizer(group.env, group.graphdef,
                                    nnx.merge_state(params, own.network),
                                    DEFAULT_WARMUP_STEPS, key)
        _, rest = nnx.split_state(warmed, nnx.Param, ...)
        groups[group.name] = own.replace(network=rest)
    state = run.state.replace(params=params, groups=groups,
                              opt_state=make_optimizer(run.config.ppo).init(params))
    return dataclasses.replace(run, state=place_state(state, run.groups, run.config.ppo))

