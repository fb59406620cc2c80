"""make_env: a BodyGraph and an EnvConfig -> a ModularEnv."""

from __future__ import annotations

from modular_ppo.body import BodyGraph
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.modular_env import ModularEnv
from modular_ppo.env.tasks import make_task


def make_env(body: BodyGraph, config: EnvConfig = EnvConfig()) -> ModularEnv:
    """The environment for `body` with the task, observations and episodes of `config`."""
    return ModularEnv(body, make_task(body, config), config)
