"""config.json's config: a TrainRunConfig as JSON and back, also from the files of
earlier versions; a run directory's config."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from modular_ppo.errors import ModularPPOError
from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.errors import RunDirError
from modular_ppo.runs.run_dir import existing_run_dir, read_run_record
from modular_ppo.runs.validate import check_record


def task_record(env: object) -> dict[str, object] | None:
    """The task definition an env runs (its `task_spec`), for config.json; None for an env
    without one (a custom env written against `ModularEnvProtocol`)."""
    spec = getattr(env, "task_spec", None)
    return spec.summary() if spec is not None else None


def config_to_json(config: TrainRunConfig) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


_OLD_KEYS = {
    "network": {
        "message_passing_rounds": ("graph", "rounds"),
        "attention_heads": ("attention", "heads"),
        "attention_layers": ("attention", "layers"),
        "attention_max_hops": ("attention", "max_hops"),
        "centralised_critic": ("centralized_critic",),
    },
    "env": {"neighbour_hops": ("neighbor_hops",)},
}
"""Config section -> {key in config.json files written before the architecture settings
were nested and the names spelled in US English -> its path in the section now}."""


def config_from_json(data: dict[str, Any]) -> TrainRunConfig:
    """Rebuild a TrainRunConfig written by `config_to_json` (nested configs, tuples, paths),
    also from a config.json written by an earlier version (see `_OLD_KEYS`)."""
    if "backend" not in data:  # written before the CPU backend existed: those ran on MJX
        data = {**data, "backend": "mjx"}
    if "device_share" not in data:  # written before the device share: the host stepped all
        data = {**data, "device_share": 0.0}
    data = {**data, **{section: _renamed_keys(data[section], old_keys)
                       for section, old_keys in _OLD_KEYS.items() if section in data}}
    check_record(data, TrainRunConfig, flag)  # numbers' types and ranges (runs/limits.py)
    return _from_json(TrainRunConfig, data)


def _renamed_keys(values: dict[str, Any], old_keys: dict[str, tuple[str, ...]]) -> dict[str, Any]:
    """`values` (a config.json section) with the keys of `old_keys` moved to their current
    paths; a key already at its current path is kept. `values` itself is left unchanged."""
    renamed = {key: value for key, value in values.items() if key not in old_keys}
    for old, path in old_keys.items():
        if old not in values:
            continue
        *parents, leaf = path
        inner = renamed
        for parent in parents:
            inner[parent] = dict(inner.get(parent, {}))  # a copy, not the one in `values`
            inner = inner[parent]
        inner.setdefault(leaf, values[old])
    return renamed


def _from_json(cls: type, values: dict[str, Any]) -> Any:
    defaults = cls()
    kwargs = {}
    for field in dataclasses.fields(cls):
        if field.name not in values:
            continue
        value, default = values[field.name], getattr(defaults, field.name)
        if dataclasses.is_dataclass(default):
            value = _from_json(type(default), value)
        elif isinstance(default, tuple):
            value = tuple(value)
        elif (field.name in ("runs_root", "resume", "init_from", "compile_cache_dir")
              and value is not None):
            value = Path(value)
        kwargs[field.name] = value
    return cls(**kwargs)


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
