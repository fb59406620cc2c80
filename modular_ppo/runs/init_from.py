"""Fine-tuning: a new run that starts from another run's parameters (`--init-from RUN_DIR`).

The new run takes the source run's network settings (architecture and max sizes, so its
parameters fit; all but the entropy weight, a loss setting) and observation settings (what
each input means), its parameters from the source's latest checkpoint, the optimizer state
of `--init-optimizer` (fresh, or the source's), and for each of its bodies observation
normalizer statistics as `eval` gets them: the source's own for a body it trained on, else
from `--new-body-statistics` (pooled from the source's trained bodies, or warmed up by the
policy itself acting on that body: observations only, no reward, no parameter change).
Everything else (bodies, task and episode settings, PPO settings, entropy weight, seed) is
the new run's own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import jax
import optax
from flax import nnx

from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import make_optimizer, place_state
from modular_ppo.ppo.state import same_parameter_shapes
from modular_ppo.runs.build import Run, load_run_config, restore_run
from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.errors import RunConfigError, TransferError
from modular_ppo.runs.transfer import (
    DEFAULT_WARMUP_STEPS,
    network_state_on_body,
    transfer_key,
)

OBSERVATION_FIELDS = (
    "observation", "neighbor_hops", "global_features", "body_features", "body_frame",
    "contact_forces", "previous_action",
)
"""EnvConfig fields that decide what the network's inputs mean: a fine-tuned run takes them
from its source, so the parameters read the features they were trained on."""
NETWORK_FIELDS_OF_ITS_OWN = ("entropy_weight",)
"""NetworkConfig fields that weight a loss term only: a fine-tuned run keeps its own."""


def with_source_settings(config: TrainRunConfig) -> TrainRunConfig:
    """`config` with the network settings and the observation settings (OBSERVATION_FIELDS)
    of its --init-from run. Such flags set away from the defaults to other values than the
    source's raise RunConfigError (the parameters fix them)."""
    source = load_run_config(config.init_from)
    _check_kept(config, source, "network",
                [field.name for field in dataclasses.fields(NetworkConfig)
                 if field.name not in NETWORK_FIELDS_OF_ITS_OWN],
                f"the new run takes that run's network (arch {source.network.arch}), whose "
                "parameters it starts from")
    _check_kept(config, source, "env", OBSERVATION_FIELDS,
                "the new run observes its bodies as that run did, so that the parameters "
                "read the features they were trained on")
    env = dataclasses.replace(
        config.env, **{name: getattr(source.env, name) for name in OBSERVATION_FIELDS})
    network = dataclasses.replace(source.network, **{
        name: getattr(config.network, name) for name in NETWORK_FIELDS_OF_ITS_OWN})
    return dataclasses.replace(config, network=network, env=env)


def _check_kept(config: TrainRunConfig, source: TrainRunConfig, section: str,
                names: Sequence[str], why: str) -> None:
    """RunConfigError if a field of `config.<section>` named in `names` is set away from
    the default to another value than the source run's."""
    given, default, kept = (getattr(c, section) for c in (config, TrainRunConfig(), source))
    changed = [name for name in names
               if getattr(given, name) not in (getattr(default, name), getattr(kept, name))]
    if changed:
        flags = ", ".join(flag(f"{section}.{name}") for name in changed)
        raise RunConfigError(
            f"--init-from {config.init_from}: {why}, but these {section} settings differ "
            f"from it: {flags}. Drop them."
        )


def start_from(run: Run, source_dir: Path) -> Run:
    """`run` (freshly built with `with_source_settings`' config) with the parameters of
    `source_dir`'s latest checkpoint, the optimizer state of `run.config.init_optimizer`
    (fresh, or the checkpoint's) and normalizer statistics as the module docstring says."""
    source, _ = restore_run(source_dir)
    params = source.state.params
    if not same_parameter_shapes(params, run.state.params):
        bodies, network = ", ".join(source.bodies), source.config.network
        why = ("--arch separate keeps weights per module name, so it fine-tunes only on the "
               "bodies it trained on; start from a shared, graph or attention run."
               if network.arch == "separate" else
               f"That run's network was sized for its body alone (--max-modules "
               f"{network.max_modules} --max-obs-size {network.max_obs_size} "
               f"--max-action-size {network.max_action_size}, not recorded by the version "
               "that trained it); start from a run trained with max sizes that hold the new "
               "body (a run of several bodies or with --held-out gets room for larger ones).")
        raise TransferError(
            f"--init-from {source_dir}: its parameters (trained on {bodies}, --arch "
            f"{network.arch}) do not fit a network for {', '.join(run.bodies)}. {why}"
        )
    keys = jax.random.split(transfer_key(run.config.seed), len(run.groups))
    groups = {}
    for group, key in zip(run.groups, keys):
        own = run.state.groups[group.name]
        statistics = network_state_on_body(
            source, run.bodies[group.name], group.env, group.graphdef, own.network,
            run.config.new_body_statistics, DEFAULT_WARMUP_STEPS, key)
        _, rest = nnx.split_state(statistics, nnx.Param, ...)
        groups[group.name] = own.replace(network=rest)
    state = run.state.replace(params=params, groups=groups,
                              opt_state=_optimizer_state(run, source, source_dir))
    return dataclasses.replace(run, state=place_state(state, run.groups, run.config.ppo))


def _optimizer_state(run: Run, source: Run, source_dir: Path) -> optax.OptState:
    """A fresh optimizer state for the source's parameters, or ("source") the source
    checkpoint's, which only an optimizer of the same structure can take."""
    fresh = make_optimizer(run.config.ppo).init(source.state.params)
    if run.config.init_optimizer == "fresh":
        return fresh
    if jax.tree.structure(fresh) != jax.tree.structure(source.state.opt_state):
        ppo, source_ppo = run.config.ppo, source.config.ppo
        raise RunConfigError(
            f"--init-from {source_dir} --init-optimizer source: that run's optimizer "
            f"(--ppo.gradient-clipping {source_ppo.gradient_clipping}, --ppo.weight-decay "
            f"{source_ppo.weight_decay}) keeps another state than this run's "
            f"({ppo.gradient_clipping}, {ppo.weight_decay}). Give the source's values, or "
            "--init-optimizer fresh."
        )
    return source.state.opt_state
