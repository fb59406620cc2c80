"""The configuration of a training run: everything needed to rebuild it, as one dataclass."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Annotated, Any

import tyro

from modular_ppo.env import EnvConfig
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import EvalConfig, PPOConfig


class RunConfigError(ModularPPOError):
    """A run setting that cannot work; the message names the field and the fix."""


@dataclasses.dataclass(frozen=True)
class TrainRunConfig:
    """Train PPO on a modular body and keep everything in a run directory."""

    body: str = "ant-modular"
    """A bundled body (`python cli.py bodies list`) or the path of an MJCF file."""
    partition: str | None = None
    """Partition rule or MaMuJoCo-style string (e.g. "4x2"); None uses the body file's own
    annotation, else one module per child subtree of the root body."""
    seed: int = 0
    """Seeds parameters, environments and minibatch shuffling: the same seed gives the
    same run."""
    network: Annotated[NetworkConfig, tyro.conf.OmitArgPrefixes] = NetworkConfig(arch="separate")
    """Architecture (`--arch`) and network sizes."""
    env: EnvConfig = EnvConfig()
    """Task, observations and episodes."""
    ppo: PPOConfig = PPOConfig()
    """PPO batch shape, losses and optimiser (`--ppo.total-steps` sets the run length)."""
    eval: EvalConfig = EvalConfig()
    """Evaluation episodes."""
    eval_every_steps: int = 500_000
    """Run an evaluation every this many env steps (and at the end); 0 only at the end."""
    checkpoint_every_steps: int = 500_000
    """Save the full training state every this many env steps (and at the end)."""
    keep_checkpoints: int = 3
    """Checkpoints kept on disk (the newest ones)."""
    video: bool = True
    """Render a video of one deterministic episode at the end (needs headless OpenGL)."""
    video_length: int = 250
    """Control steps in the video."""
    runs_root: Path = Path("runs")
    """Run directories are created as <runs_root>/<body>/<timestamp>/."""
    run_name: str | None = None
    """Name of the run directory instead of a timestamp (must not exist yet)."""
    resume: Path | None = None
    """Continue the run in this directory from its latest checkpoint (its config is used;
    `--ppo.total-steps` may extend it)."""

    def __post_init__(self) -> None:
        for name in ("eval_every_steps", "checkpoint_every_steps"):
            if getattr(self, name) < 0:
                raise RunConfigError(f"TrainRunConfig.{name} = {getattr(self, name)}: give 0 or "
                                     "a positive number of env steps.")
        if self.keep_checkpoints < 1:
            raise RunConfigError(
                f"TrainRunConfig.keep_checkpoints = {self.keep_checkpoints}: keep at least 1."
            )
        if self.video_length < 1:
            raise RunConfigError(
                f"TrainRunConfig.video_length = {self.video_length}: give a positive number "
                "of steps."
            )

    @property
    def arch(self) -> str:
        return self.network.arch


def config_to_json(config: TrainRunConfig) -> dict[str, Any]:
    return json.loads(json.dumps(dataclasses.asdict(config), default=str))


def config_from_json(data: dict[str, Any]) -> TrainRunConfig:
    """Rebuild a TrainRunConfig written by `config_to_json` (nested configs, tuples, paths)."""
    return _from_json(TrainRunConfig, data)


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
        elif field.name in ("runs_root", "resume") and value is not None:
            value = Path(value)
        kwargs[field.name] = value
    return cls(**kwargs)
