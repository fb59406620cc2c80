"""A resumed run's config: the saved run's, with the settings that do not change what
training computes taken from the command line."""

from __future__ import annotations

import dataclasses
from typing import Any

from modular_ppo.compile_cache import CompileCacheConfig
from modular_ppo.ppo import DistributedConfig, EvalConfig
from modular_ppo.runs.config import TrainRunConfig, config_leaves, flag
from modular_ppo.runs.errors import RunConfigError


RESUME_MAY_CHANGE = frozenset({
    "ppo.total_steps", "ppo.data_parallel", "eval_every_steps", "checkpoint_every_steps",
    *(f"distributed.{field.name}" for field in dataclasses.fields(DistributedConfig)),
    "keep_checkpoints", "video", "video_length", "held_out", "new_body_statistics",
    *(f"cache.{field.name}" for field in dataclasses.fields(CompileCacheConfig)),
    *(f"eval.{field.name}" for field in dataclasses.fields(EvalConfig)),
})
"""Settings a resumed run may take from the command line: none of them changes what the
training computes, so the resumed run continues exactly where the saved one stopped."""

_RESUME_IGNORES = frozenset({"runs_root", "run_name", "resume"})
"""The run directory is the one resumed; where new runs would go does not matter."""


def resume_config(given: TrainRunConfig, saved: TrainRunConfig) -> TrainRunConfig:
    """The config of a resumed run: `saved`, with the settings of RESUME_MAY_CHANGE that
    `given` sets away from their defaults. A training setting that `given` sets away from
    its default to a value the saved run does not have raises RunConfigError."""
    defaults = dict(config_leaves(TrainRunConfig()))
    was = dict(config_leaves(saved))
    changes = {
        path: value for path, value in config_leaves(given)
        if value != defaults[path] and path not in _RESUME_IGNORES
    }
    conflicts = [
        f"{flag(path)} {value!r} (the run has {was[path]!r})"
        for path, value in changes.items()
        if path not in RESUME_MAY_CHANGE and value != was[path]
    ]
    if conflicts:
        raise RunConfigError(
            f"--resume {given.resume}: a resumed run keeps its own training settings, but "
            f"these differ: {'; '.join(conflicts)}. Drop them to continue the run, or start "
            "a new run (without --resume) to train with them."
        )
    allowed = {path: value for path, value in changes.items() if path in RESUME_MAY_CHANGE}
    return _with_changes(saved, {**allowed, "resume": given.resume})


def _with_changes(config: Any, changes: dict[str, Any]) -> Any:
    kwargs = {}
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if dataclasses.is_dataclass(value):
            inner = {p.removeprefix(f"{field.name}."): v for p, v in changes.items()
                     if p.startswith(f"{field.name}.")}
            if inner:
                kwargs[field.name] = _with_changes(value, inner)
        elif field.name in changes:
            kwargs[field.name] = changes[field.name]
    return dataclasses.replace(config, **kwargs)
