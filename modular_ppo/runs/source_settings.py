"""The settings a fine-tuned run (`--init-from RUN_DIR`) takes from its source run: the
network's (architecture and max sizes, so that the parameters fit; all but the entropy
weight, a loss setting) and the observations' (what each input means)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from modular_ppo.networks import NetworkConfig
from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.config_json import load_run_config
from modular_ppo.runs.errors import RunConfigError


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
