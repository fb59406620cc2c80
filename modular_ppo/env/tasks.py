"""Tasks: reward terms, each local (per module) or team (whole body), plus termination.

A team term is computed once for the whole body and handed to the modules by the task's
split rule: "even" (each of the M modules gets 1/M) or "root" (the root module gets it
all). A local term is computed per actuated module (modules without actuators get 0).
Either way, summed over modules the reward equals the single-agent task reward.

The task itself is the body's (`BodyGraph.task`, stated in its MJCF file, see
`modular_ppo.body.task`) with `EnvConfig`'s overrides. Its single-agent reward is
Gymnasium v5's locomotion reward:
  forward_reward_weight * velocity + healthy_reward [* healthy(after), or every step]
  - ctrl_cost_weight * sum(action^2 or ctrl^2)
  - clip(contact_cost_weight * sum(clip(cfrc_ext, force range)^2), cost range)
with the velocity of `velocity_source` (root body, center of mass, the
root's joint coordinates, or a named body) over
the control step, and termination when the state after the step leaves the healthy
ranges (height of the root, its hinge angle, the joint state).
- run_forward: velocity along +x.
- run_direction: velocity along `EnvConfig.direction_deg` in the xy plane.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import jax.numpy as jnp
import mujoco
import numpy as np
from jaxtyping import Array, Bool, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.body.task import TaskSpec, root_hinge
from modular_ppo.env.errors import EnvError
from modular_ppo.env.physics import contact_forces

if TYPE_CHECKING:
    from modular_ppo.env.config import EnvConfig


@dataclasses.dataclass(frozen=True)
class Transition:
    """One control step, as reward terms see it."""

    before: mjx.Data
    after: mjx.Data
    action: dict[str, Float[Array, "act"]]
    """Actuated module -> its action as given (non-finite entries already set to 0)."""
    dt: float
    """Seconds per control step."""


@dataclasses.dataclass(frozen=True)
class RewardTerm:
    """One weighted term of a task's reward (the weight is inside `value`)."""

    name: str
    scope: Literal["local", "team"]
    value: Callable[[Transition], Float[Array, ""] | dict[str, Float[Array, ""]]]
    """Team: the body's value, Float[]. Local: actuated module -> Float[]."""
    needs_contact_forces: bool = False
    """The term reads cfrc_ext, which the physics then computes every step."""


@dataclasses.dataclass(frozen=True)
class Task:
    """Reward terms, how team terms reach the modules, termination and progress."""

    name: str
    terms: tuple[RewardTerm, ...]
    module_names: tuple[str, ...]
    root_module: str
    team_split: Literal["even", "root"]
    healthy: Callable[[mjx.Data], Bool[Array, ""]]
    """False where the state after a step ends the episode (termination)."""
    progress: Callable[[Transition], Float[Array, ""]]
    """The task's speed along its direction: the "forward_velocity" metric."""
    spec: TaskSpec | None = None
    """The definition the task was built from (None for a task written by hand)."""

    @property
    def needs_contact_forces(self) -> bool:
        return any(t.needs_contact_forces for t in self.terms)

    def rewards(
        self, transition: Transition
    ) -> tuple[dict[str, Float[Array, ""]], dict[str, Float[Array, ""]]]:
        """Module -> reward, and term name -> the term's value for the whole body."""
        reward = {name: jnp.zeros(()) for name in self.module_names}
        totals, team = {}, jnp.zeros(())
        for term in self.terms:
            value = term.value(transition)
            if term.scope == "local":
                for name, v in value.items():
                    reward[name] = reward[name] + v
                totals[term.name] = sum(value.values(), jnp.zeros(()))
            else:
                team = team + value
                totals[term.name] = value
        if self.team_split == "root":
            reward[self.root_module] = reward[self.root_module] + team
        else:
            share = team / len(self.module_names)
            reward = {name: r + share for name, r in reward.items()}
        return reward, totals


def healthy_check(body: BodyGraph, spec: TaskSpec) -> Callable[[mjx.Data], Bool[Array, ""]]:
    """True where the state is inside every healthy range of `spec`: no `unhealthy_causes`."""
    causes = unhealthy_causes(body, spec)

    def healthy(data: mjx.Data) -> Bool[Array, ""]:
        return ~functools.reduce(jnp.logical_or, causes(data).values(), jnp.zeros((), bool))

    return healthy


def unhealthy_causes(
    body: BodyGraph, spec: TaskSpec
) -> Callable[[mjx.Data], dict[str, Bool[Array, ""]]]:
    """Each way a state can leave the healthy ranges of `spec`, by name, True where it does:
    "healthy_z below" / "healthy_z above" (root body height, or the root's z joint
    coordinate by `height_source`), "healthy_angle below" / "above" (the root's hinge angle),
    "healthy_state" (some qpos entry but the root's translation, or some qvel entry); only
    the ranges `spec` sets, with its strict or inclusive bounds. A NaN is "below"."""
    model = body.model
    root = body.root_body_id
    pitch_adr = root_hinge(model, root, body.source) if spec.healthy_angle is not None else None
    state_qpos = _qpos_without_root_translation(model, root)
    if spec.height_source == "root_joint" and spec.healthy_z is not None:
        z_adr = root_joint_address(body, 2, "height_source")
        height = lambda data: data.qpos[z_adr]  # noqa: E731
    else:
        height = lambda data: data.xpos[root, 2]  # noqa: E731
    strict = spec.healthy_bounds == "strict"

    def outside(x, bounds):
        below = ~(x > bounds[0]) if strict else ~(x >= bounds[0])
        above = ~below & ((x >= bounds[1]) if strict else (x > bounds[1]))
        return below, above

    def causes(data: mjx.Data) -> dict[str, Bool[Array, ""]]:
        found = {}
        if spec.healthy_z is not None:
            found["healthy_z below"], found["healthy_z above"] = outside(
                height(data), spec.healthy_z)
        if pitch_adr is not None:
            found["healthy_angle below"], found["healthy_angle above"] = outside(
                data.qpos[pitch_adr], spec.healthy_angle)
        if spec.healthy_state is not None:
            below, above = outside(jnp.concatenate([data.qpos[state_qpos], data.qvel]),
                                   spec.healthy_state)
            found["healthy_state"] = jnp.any(below | above)
        return found

    return causes


def _qpos_without_root_translation(model: mujoco.MjModel, root: int) -> np.ndarray:
    """qpos addresses except the root body's slide joints and its free joint's position
    (Gymnasium's `state_vector()[2:]` for the planar bodies)."""
    dropped = []
    for j in np.flatnonzero(model.jnt_bodyid == root):
        adr = int(model.jnt_qposadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
            dropped.append(adr)
        elif model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            dropped += [adr, adr + 1, adr + 2]
    return np.setdiff1d(np.arange(model.nq), dropped).astype(np.int32)


def root_joint_address(body: BodyGraph, axis: int, key: str) -> int:
    """The qpos address of the root body's coordinate along world axis `axis` (0 x, 1 y,
    2 z): its free joint's position entry, or its slide joint along that axis; -1 for y
    where there is none. `key` names the annotation that reads it, for the error.

    Raises EnvError when the root has none along x or z."""
    model = body.model
    for j in np.flatnonzero(model.jnt_bodyid == body.root_body_id):
        adr = int(model.jnt_qposadr[j])
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE:
            return adr + axis
        if model.jnt_type[j] == mujoco.mjtJoint.mjJNT_SLIDE:
            direction = np.abs(model.jnt_axis[j])
            if np.isclose(direction[axis], 1.0):
                return adr
    if axis == 1:
        return -1
    fallback = '"root"' if axis == 0 else '"root_body"'
    raise EnvError(
        f"{body.source}: {key} \"root_joint\" reads the root's {'xyz'[axis]} joint "
        f"coordinate, but the root body has no free joint and no slide joint along "
        f"{'xyz'[axis]}. Use {fallback}."
    )


def _always_healthy(data: mjx.Data) -> Bool[Array, ""]:
    return jnp.ones((), bool)


def _position(body: BodyGraph, source: str) -> Callable[[mjx.Data], Float[Array, "2"]]:
    """The xy position whose change over a step is the task's velocity."""
    if source == "com":
        return lambda data: data.subtree_com[0, :2]
    if source == "root_joint":
        x, y = (root_joint_address(body, axis, "velocity_source") for axis in (0, 1))
        return lambda data: jnp.stack(
            [data.qpos[x], data.qpos[y] if y >= 0 else jnp.zeros_like(data.qpos[x])])
    body_id = body.root_body_id if source == "root" else mujoco.mj_name2id(
        body.model, mujoco.mjtObj.mjOBJ_BODY, source
    )
    return lambda data: data.xpos[body_id, :2]


def _run_task(body: BodyGraph, config: EnvConfig, name: str, angle_deg: float) -> Task:
    spec = config.resolve_task(body.task)
    direction = np.array(
        [math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))], np.float32
    )
    position = _position(body, spec.velocity_source)
    healthy = healthy_check(body, spec)
    actuators = {m: body.modules[m].actuator_ids for m in body.actuated_modules}

    def velocity(t: Transition) -> Float[Array, ""]:
        return jnp.dot(position(t.after) - position(t.before), direction) / t.dt

    def forward(t: Transition) -> Float[Array, ""]:
        return spec.forward_reward_weight * velocity(t)

    def ctrl_cost(t: Transition) -> dict[str, Float[Array, ""]]:
        if spec.ctrl_cost_on == "ctrl":
            return {m: -spec.ctrl_cost_weight * jnp.sum(jnp.square(t.after.ctrl[ids]))
                    for m, ids in actuators.items()}
        return {m: -spec.ctrl_cost_weight * jnp.sum(jnp.square(a)) for m, a in t.action.items()}

    agent_bodies = np.sort(np.concatenate([m.body_ids for m in body.modules.values()]))

    def contact_cost(t: Transition) -> Float[Array, ""]:
        forces = jnp.clip(contact_forces(t.after)[agent_bodies], *spec.contact_force_range)
        cost = jnp.clip(spec.contact_cost_weight * jnp.sum(jnp.square(forces)),
                        *spec.contact_cost_range)
        return -cost

    def alive(t: Transition) -> Float[Array, ""]:
        if spec.healthy_reward_on == "every_step":
            return jnp.asarray(spec.healthy_reward, jnp.float32)
        return spec.healthy_reward * healthy(t.after).astype(jnp.float32)

    # Terms weighted 0 are left out (a zero contact cost then costs no contact pass).
    terms = [RewardTerm("forward_velocity", "team", forward)]
    if spec.healthy_reward:
        terms.append(RewardTerm("healthy", "team", alive))
    if spec.ctrl_cost_weight:
        terms.append(RewardTerm("ctrl_cost", "local", ctrl_cost))
    if spec.contact_cost_weight:
        terms.append(RewardTerm("contact_cost", "team", contact_cost, needs_contact_forces=True))
    return Task(
        name=name,
        terms=tuple(terms),
        module_names=body.module_names,
        root_module=body.root_module,
        team_split=config.team_reward,
        healthy=healthy if spec.terminate_when_unhealthy else _always_healthy,
        progress=velocity,
        spec=spec,
    )


TASKS: dict[str, Callable[[BodyGraph, EnvConfig], Task]] = {
    "run_forward": lambda body, config: _run_task(body, config, "run_forward", 0.0),
    "run_direction": lambda body, config: _run_task(
        body, config, "run_direction", config.direction_deg
    ),
}
TASK_NAMES = tuple(TASKS)
"""The task names `EnvConfig.task` accepts: "run_forward", "run_direction"."""


def make_task(body: BodyGraph, config: EnvConfig) -> Task:
    """The task `config.task` for `body`, with the config's weights and team split
    (EnvConfig has already checked the name against TASK_NAMES)."""
    return TASKS[config.task](body, config)
