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
from pathlib import Path

import jax
import optax
from flax import nnx

from modular_ppo.networks.registry import acting_on_any_body, architecture
from modular_ppo.ppo import make_optimizer, place_state
from modular_ppo.ppo.state import same_parameter_shapes
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.errors import RunConfigError, TransferError
from modular_ppo.runs.run import Run
from modular_ppo.runs.transfer import (
    DEFAULT_WARMUP_STEPS,
    network_state_on_body,
    transfer_key,
)

def start_from(run: Run, source_dir: Path) -> Run:
    """`run` (freshly built: its config has the source's settings, `runs.source_settings`) with the parameters of
    `source_dir`'s latest checkpoint, the optimizer state of `run.config.init_optimizer`
    (fresh, or the checkpoint's) and normalizer statistics as the module docstring says."""
    source, _ = restore_run(source_dir)
    params = source.state.params
    if not same_parameter_shapes(params, run.state.params):
        bodies, network = ", ".join(source.bodies), source.config.network
        why = (f"--arch {network.arch} keeps weights per module name, so it fine-tunes only "
               f"on the bodies it trained on; start from a {acting_on_any_body()} run."
               if architecture(network.arch).per_module_weights else
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
            f"{source_ppo.weight_decay}, --ppo.anneal-learning-rate "
            f"{source_ppo.anneal_learning_rate}) keeps another state than this run's "
            f"({ppo.gradient_clipping}, {ppo.weight_decay}, {ppo.anneal_learning_rate}). "
            "Give the source's values, or "
            "--init-optimizer fresh."
        )
    return source.state.opt_state
