"""EnvConfig: everything that shapes a ModularEnv, as one frozen, tyro-ready dataclass."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from modular_ppo.env.errors import EnvError
from modular_ppo.env.tasks import TASK_NAMES

TeamSplit = Literal["even", "root"]


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Task, observation and episode settings of a ModularEnv (see `make_env`)."""

    task: str = "run_forward"
    """Task name: "run_forward" (Brax / Gymnasium ant reward: velocity along +x of the root
    body, alive bonus, control cost) or "run_direction" (the same, velocity along
    `direction_deg`)."""
    neighbour_hops: int = 1
    """Each module also observes the own features of the modules up to this many hops
    away in the module graph (0: only its own)."""
    global_features: bool = True
    """Append the root body's state (height, orientation, linear and angular velocity) to
    every module's observation."""
    body_features: bool = True
    """Own features include the pose and velocity of the module's jointed bodies relative
    to the root body (in its frame), besides joint angles and velocities."""
    contact_forces: bool = False
    """Own features include the external contact forces on the module's bodies (MuJoCo's
    cfrc_ext, clipped to [-1, 1]). Costs one extra pass over the contacts per step."""
    previous_action: bool = False
    """Own features include the module's previous action (what its actuators hold)."""
    episode_length: int = 1000
    """Control steps before an episode is truncated."""
    team_reward: TeamSplit = "even"
    """How team reward terms (velocity, alive bonus, contact cost) reach the modules:
    "even" splits them equally over all modules, "root" gives them to the root module."""
    reset_noise_scale: float = 0.1
    """Reset: qpos = init_qpos + U(-s, s), qvel = s * N(0, 1) (Brax / Gymnasium ant)."""
    ctrl_cost_weight: float = 0.5
    """Local term: each actuated module pays weight * sum(action^2) of its own actions."""
    healthy_reward: float = 1.0
    """Team term: alive bonus per step (episodes end when the root leaves the body's
    healthy range, so it is constant while the episode runs, as in Brax)."""
    contact_cost_weight: float = 0.0
    """Team term: weight * sum(clip(cfrc_ext, -1, 1)^2) over the body (Gymnasium's ant
    uses 5e-4; Brax's ant and the default leave it out)."""
    direction_deg: float = 0.0
    """run_direction: target direction in the xy plane, degrees counter-clockwise from +x."""

    def __post_init__(self) -> None:
        if self.task not in TASK_NAMES:
            raise EnvError(
                f"EnvConfig.task = {self.task!r} is not a known task. Known tasks: "
                f"{', '.join(TASK_NAMES)}."
            )
        if self.neighbour_hops < 0:
            raise EnvError(
                f"EnvConfig.neighbour_hops = {self.neighbour_hops}; give 0 (own features "
                "only) or a positive number of hops."
            )
        if self.episode_length < 1:
            raise EnvError(
                f"EnvConfig.episode_length = {self.episode_length}; give a positive number "
                "of control steps."
            )
        if self.team_reward not in ("even", "root"):
            raise EnvError(
                f"EnvConfig.team_reward = {self.team_reward!r}; use \"even\" (split over all "
                "modules) or \"root\" (all to the root module)."
            )
        for name in ("reset_noise_scale", "ctrl_cost_weight", "healthy_reward",
                     "contact_cost_weight"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise EnvError(f"EnvConfig.{name} = {value}; give a finite number >= 0.")
        if not math.isfinite(self.direction_deg):
            raise EnvError(
                f"EnvConfig.direction_deg = {self.direction_deg}; give a finite angle in "
                "degrees."
            )
