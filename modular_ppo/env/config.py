"""EnvConfig: everything that shapes a ModularEnv, as one frozen, tyro-ready dataclass."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal, get_args

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.physics_options import PhysicsOptions, parse_options
from modular_ppo.body.task import TaskSpec
from modular_ppo.env.errors import EnvError
from modular_ppo.env.tasks import TASK_NAMES

TeamSplit = Literal["even", "root"]
BodyFrame = Literal["root", "parent"]
Observation = Literal["modular", "mamujoco"]
OBSERVATIONS: tuple[str, ...] = get_args(Observation)

TASK_OVERRIDES = (
    "forward_reward_weight", "healthy_reward", "ctrl_cost_weight", "contact_cost_weight",
    "reset_noise_scale", "terminate_when_unhealthy",
)
"""EnvConfig fields that override the body's own task (`BodyGraph.task`) where set."""


@dataclasses.dataclass(frozen=True)
class EnvConfig:
    """Task, observation and episode settings of a ModularEnv (see `make_env`).

    Frozen, and checked on construction (`EnvError` naming the field and the fix). The task
    fields set (`TASK_OVERRIDES`) override the body's own task (`BodyGraph.task`).
    """

    task: str = "run_forward"
    """Task name: "run_forward" (the body's own task as its file states it: velocity along
    +x, alive bonus, control and contact costs, healthy range, reset noise) or
    "run_direction" (the same, velocity along `direction_deg`)."""
    observation: Observation = "modular"
    """"modular": this project's observations (own features, module-graph neighbors, the
    root body's state; the fields below). "mamujoco": Gymnasium-Robotics' MaMuJoCo (v1)
    observations, for the bodies and partitions it defines (ant-modular 2x4 / 2x4d / 4x2,
    halfcheetah-modular 6x1 / 2x3, hopper-modular 3x1, walker2d-modular 2x3,
    humanoid-modular 9|8; modular_ppo/env/mamujoco.py): neighbor_hops is its k,
    global_features adds its global categories to the agents' observations, and the
    simulator computes contact forces where its categories read them (Ant, Humanoid)."""
    neighbor_hops: int = 1
    """Each module also observes the own features of the modules up to this many hops
    away in the module graph (0: only its own). mamujoco: hops in MaMuJoCo's graph of
    joints (its agent_obsk)."""
    global_features: bool = True
    """Append the root body's state (height, orientation, linear and angular velocity) to
    every module's observation. mamujoco: the agents also observe MaMuJoCo's global
    categories (qpos, qvel of the root), which a module that is no agent (the torso)
    observes either way."""
    body_features: bool = True
    """Own features include the pose and velocity of the module's jointed bodies relative
    to a frame (`body_frame`), besides joint angles and velocities (modular only)."""
    body_frame: BodyFrame = "root"
    """The frame of the body features: "root", the root body's (a body's position then
    says where along the body it sits), or "parent", each body's parent body's (pose
    relative to the parent, velocities expressed in its frame: the same for a leg
    wherever it sits, so a policy shared by modules sees the same inputs on a longer body
    of the same kind)."""
    contact_forces: bool = False
    """Own features include the external contact forces on the module's bodies (MuJoCo's
    cfrc_ext, clipped to [-1, 1]). Costs one extra pass over the contacts per step.
    mamujoco: computed where MaMuJoCo's categories read cfrc_ext (Ant, Humanoid) whatever
    this says; refused where they do not."""
    previous_action: bool = False
    """Own features include the module's previous action (what its actuators hold; modular
    only)."""
    episode_length: int = 1000
    """Control steps before an episode is truncated."""
    team_reward: TeamSplit = "even"
    """How team reward terms (velocity, alive bonus, contact cost) reach the modules:
    "even" splits them equally over all modules, "root" gives them to the root module."""
    forward_reward_weight: float | None = None
    """Override of the body's forward reward weight (None: the body file's task)."""
    healthy_reward: float | None = None
    """Override of the body's alive bonus per step (None: the body file's task)."""
    ctrl_cost_weight: float | None = None
    """Override of the body's control cost weight (None: the body file's task; what the
    cost is taken on, action or ctrl, stays the body's)."""
    contact_cost_weight: float | None = None
    """Override of the body's contact cost weight (None: the body file's task)."""
    reset_noise_scale: float | None = None
    """Override of the body's reset noise scale (None: the body file's task)."""
    terminate_when_unhealthy: bool | None = None
    """Override: end episodes when the state leaves the healthy range (None: the body
    file's task)."""
    direction_deg: float = 0.0
    """run_direction: target direction in the xy plane, degrees counter-clockwise from +x."""
    physics: str = ""
    """Replacements for the body file's solver settings, e.g. "solver=CG iterations=4
    ls_iterations=8 eulerdamp=enable" (`body.physics_options.parse_options`; "" keeps the
    file's `<option>`). They change trajectories: docs/physics.md gives their costs."""

    def physics_options(self) -> PhysicsOptions:
        """`physics` parsed (checked on construction)."""
        return parse_options(self.physics)

    def resolve_task(self, body_task: TaskSpec) -> TaskSpec:
        """The body's task with this config's overrides applied (fields left None keep
        the body's value)."""
        overrides = {name: getattr(self, name) for name in TASK_OVERRIDES}
        return dataclasses.replace(body_task, **{k: v for k, v in overrides.items() if v is not None})

    def __post_init__(self) -> None:
        """Every field checked in turn; a clear EnvError naming the first bad one."""
        if self.task not in TASK_NAMES:
            raise EnvError(
                f"EnvConfig.task = {self.task!r} is not a known task. Known tasks: "
                f"{', '.join(TASK_NAMES)}."
            )
        self._check_observations()
        self._check_episodes_and_rewards()

    def _check_observations(self) -> None:
        """A clear EnvError for an unknown observation kind or frame, "mamujoco" with
        "modular" options, or negative neighbor hops."""
        if self.observation not in OBSERVATIONS:
            raise EnvError(
                f"EnvConfig.observation = {self.observation!r}; use \"modular\" (this "
                "project's) or \"mamujoco\" (Gymnasium-Robotics' MaMuJoCo)."
            )
        if self.observation == "mamujoco" and (
            self.previous_action or not self.body_features or self.body_frame != "root"
        ):
            raise EnvError(
                "EnvConfig.observation = \"mamujoco\" observes MaMuJoCo's own categories: "
                "previous_action, body_features and body_frame belong to the \"modular\" "
                "observations. Leave them at their defaults (previous_action=False, "
                "body_features=True, body_frame=\"root\")."
            )
        if self.body_frame not in ("root", "parent"):
            raise EnvError(
                f"EnvConfig.body_frame = {self.body_frame!r}; use \"root\" (the root "
                "body's frame) or \"parent\" (each body's parent body's)."
            )
        if self.neighbor_hops < 0:
            raise EnvError(
                f"EnvConfig.neighbor_hops = {self.neighbor_hops}; give 0 (own features "
                "only) or a positive number of hops."
            )

    def _check_episodes_and_rewards(self) -> None:
        """A clear EnvError for a non-positive episode length, an unknown team reward, a
        negative or non-finite task override, bad physics settings or a non-finite
        direction."""
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
        for name in TASK_OVERRIDES:
            value = getattr(self, name)
            if name == "terminate_when_unhealthy" or value is None:
                continue
            if not (math.isfinite(value) and value >= 0):
                raise EnvError(f"EnvConfig.{name} = {value}; give a finite number >= 0.")
        try:
            self.physics_options()
        except BodyGraphError as e:
            raise EnvError(f"EnvConfig.physics = {self.physics!r}: {e}") from None
        if not math.isfinite(self.direction_deg):
            raise EnvError(
                f"EnvConfig.direction_deg = {self.direction_deg}; give a finite angle in "
                "degrees."
            )

