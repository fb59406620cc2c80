"""Stage 2 of the pipeline: BodyGraph -> ModularEnv (pure JAX, on MuJoCo MJX). Each name's
docstring is its contract:

- building an env: `make_env(body, EnvConfig(...), backend)` with `BACKENDS` / `Backend`
  and `default_backend` (factory.py, cpu_backend.py); settings: `EnvConfig` (config.py);
- the env: `ModularEnv` (modular_env.py: `reset`, `step` (= `begin_step`, the physics,
  `end_step`: the halves a caller stepping the physics itself uses), actions, episodes,
  auto-reset),
  implementing `ModularEnvProtocol`, whose steps return `State`s (types.py: obs, reward,
  done, metrics and info conventions);
- tasks: `make_task`, `TASK_NAMES`, `Task`, `RewardTerm`, `Transition` (tasks.py: the
  reward terms and how team terms reach the modules);
- observations: `ObsBlock`, `observation_layout`, `describe_observations`
  (observations.py, no simulator needed; `EnvConfig.observation` "modular": the features
  in features.py; "mamujoco": Gymnasium-Robotics' MaMuJoCo observations in mamujoco.py,
  its graphs in mamujoco_graphs.py, cinert / qfrc_actuator in mamujoco_quantities.py);
- simulators: `Simulator` (physics.py: MJX by default; MuJoCo's C simulator in
  cpu_backend.py / cpu_simulator.py; MJX's MuJoCo Warp implementation, NVIDIA GPUs, in
  warp_physics.py);
- contacts: `collisions.collision_pairs` (the geom pairs MJX tests each step),
  `touching_pairs` (which touch in random C rollouts), `excluded_pairs` /
  `without_exclusions` (a body's `<contact><exclude>` elements; docs/physics.md);
- errors: `EnvError`, `ActionError`, `UnsupportedModelError` (errors.py).
"""

from modular_ppo.env.config import EnvConfig
from modular_ppo.env.errors import ActionError, EnvError, UnsupportedModelError
from modular_ppo.env.cpu_backend import default_backend
from modular_ppo.env.factory import BACKENDS, Backend, make_env
from modular_ppo.env.modular_env import ModularEnv
from modular_ppo.env.observations import ObsBlock, describe_observations, observation_layout
from modular_ppo.env.physics import Simulator
from modular_ppo.env.tasks import TASK_NAMES, RewardTerm, Task, Transition, make_task
from modular_ppo.env.types import ModularEnvProtocol, State

__all__ = [
    "ActionError",
    "BACKENDS",
    "Backend",
    "EnvConfig",
    "EnvError",
    "ModularEnv",
    "ModularEnvProtocol",
    "ObsBlock",
    "RewardTerm",
    "Simulator",
    "State",
    "TASK_NAMES",
    "Task",
    "Transition",
    "UnsupportedModelError",
    "default_backend",
    "describe_observations",
    "make_env",
    "make_task",
    "observation_layout",
]
