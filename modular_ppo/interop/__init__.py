"""Other libraries' environment APIs over a body: JaxMARL, PettingZoo, Gymnasium, Brax. A
stage beside the pipeline: it imports only `body` and `env`, and nothing in the pipeline imports
it. Each name's docstring is its contract:

- JaxMARL: `JaxMARLEnv` (jaxmarl_env.py: a `MultiAgentEnv` on MJX, jit / vmap-able; any
  body, or MABrax's task names `MABRAX_TASKS` with MABrax's observations, mabrax.py;
  `mabrax_env(task)`: MABrax to the letter, every agent rewarded with the team reward);
- PettingZoo: `ParallelModularEnv` (pettingzoo_env.py: a `ParallelEnv` on the CPU
  backend, seeded resets, rgb_array rendering in render.py);
- Gymnasium: `GymnasiumModularEnv` (gymnasium_env.py: one agent acting for every module);
- MaMuJoCo to the letter: `mamujoco_env`, `make`, `MAMUJOCO_IDS` (mamujoco.py: gymnasium-
  robotics' MaMuJoCo scenarios on Gymnasium's v5 files, as its `parallel_env`; the
  single-agent views registered as "modular_ppo/<scenario>-v5"; docs/mamujoco.md);
- Brax: `BraxModularEnv` (brax_env.py: Brax's `Env`, one agent acting for every module, so
  Brax's own trainers train a body; registering it with Brax, and
  `install_jax_compatibility` for Brax 0.14's trainers under JAX 0.10, in its docstring);
- what they share: agents = actuated modules with per-agent actions and rewards (`Team`,
  team.py), episodes whose end is visible (`episodic`, episodes.py: the env on a
  simulator that never restarts), bodies by name, path or BodyGraph (bodies.py);
- errors: `InteropError`, `AgentActionError` (errors.py).

The adapters are imported on first use (`from modular_ppo.interop import JaxMARLEnv`
imports jaxmarl, about 4 s; PettingZoo, Gymnasium and Brax are not imported with it).
`pip install 'modular_ppo[interop]'` installs jaxmarl, pettingzoo, gymnasium and brax.
"""

import importlib

from modular_ppo.interop.episodes import episodic
from modular_ppo.interop.errors import AgentActionError, InteropError
from modular_ppo.interop.mabrax import MABRAX_TASKS
from modular_ppo.interop.team import Team

_ADAPTERS = {
    "JaxMARLEnv": "modular_ppo.interop.jaxmarl_env",
    "mabrax_env": "modular_ppo.interop.jaxmarl_env",
    "ParallelModularEnv": "modular_ppo.interop.pettingzoo_env",
    "GymnasiumModularEnv": "modular_ppo.interop.gymnasium_env",
    "mamujoco_env": "modular_ppo.interop.mamujoco",
    "make": "modular_ppo.interop.mamujoco",
    "MAMUJOCO_IDS": "modular_ppo.interop.mamujoco",
    "BraxModularEnv": "modular_ppo.interop.brax_env",
}


def __getattr__(name: str):
    if name in _ADAPTERS:
        return getattr(importlib.import_module(_ADAPTERS[name]), name)
    raise AttributeError(f"module 'modular_ppo.interop' has no attribute {name!r}")


__all__ = [
    "AgentActionError", "BraxModularEnv", "GymnasiumModularEnv", "InteropError", "JaxMARLEnv",
    "MABRAX_TASKS", "MAMUJOCO_IDS", "ParallelModularEnv", "Team", "episodic", "mabrax_env",
    "make",
    "mamujoco_env",
]
