"""Tasks: reward terms, each local (per module) or team (whole body), plus termination.

A team term is computed once for the whole body and handed to the modules by the task's
split rule: "even" (each of the M modules gets 1/M) or "root" (the root module gets it
all). A local term is computed per actuated module (modules without actuators get 0).
Either way, summed over modules the reward equals the single-agent task reward.

Bundled tasks (Brax / Gymnasium ant semantics):
- run_forward: velocity of the root body along +x (its x displacement over the control
  step / dt) + healthy_reward - ctrl_cost_weight * sum(action^2) [- contact cost].
- run_direction: the same with the velocity along `EnvConfig.direction_deg` in xy.
Both terminate when the root body's height leaves the body's "modular_ppo:healthy_z"
numeric (min max), or the angle of the root body's hinge joint (the pitch of a planar
body) leaves "modular_ppo:healthy_angle"; bodies without them never terminate.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

import jax.numpy as jnp
import mujoco
import numpy as np
from jaxtyping import Array, Bool, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.env.errors import EnvError
from modular_ppo.env.physics import contact_forces

if TYPE_CHECKING:
    from modular_ppo.env.config import EnvConfig

HEALTHY_ANGLE = "modular_ppo:healthy_angle"


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
    """False where the state ends the episode (termination)."""
    progress: Callable[[Transition], Float[Array, ""]]
    """The task's speed along its direction: the "forward_velocity" metric."""

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


def healthy_check(body: BodyGraph) -> Callable[[mjx.Data], Bool[Array, ""]]:
    """The body's healthy range: root height ("modular_ppo:healthy_z") and root pitch
    ("modular_ppo:healthy_angle", the qpos of the root body's one hinge joint)."""
    root = body.root_body_id
    z_range = body.healthy_z
    pitch_adr, angle_range = None, None
    if HEALTHY_ANGLE in body.numerics:
        model = body.model
        is_hinge = model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE
        hinges = np.flatnonzero((model.jnt_bodyid == root) & is_hinge)
        if hinges.size != 1:
            raise EnvError(
                f"{body.source}: <numeric name=\"{HEALTHY_ANGLE}\"> limits the root body's "
                f"hinge angle, but the root body has {hinges.size} hinge joints. Give it "
                "exactly one (the pitch of a planar body), or remove the numeric."
            )
        pitch_adr = int(model.jnt_qposadr[hinges[0]])
        angle_range = tuple(float(v) for v in body.numerics[HEALTHY_ANGLE])

    def healthy(data: mjx.Data) -> Bool[Array, ""]:
        ok = jnp.ones((), bool)
        if z_range is not None:
            z = data.xpos[root, 2]
            ok = ok & (z >= z_range[0]) & (z <= z_range[1])
        if pitch_adr is not None:
            angle = data.qpos[pitch_adr]
            ok = ok & (angle >= angle_range[0]) & (angle <= angle_range[1])
        return ok

    return healthy


def _run_task(body: BodyGraph, config: EnvConfig, name: str, angle_deg: float) -> Task:
    root = body.root_body_id
    direction = np.array(
        [math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))], np.float32
    )

    def velocity(t: Transition) -> Float[Array, ""]:
        return jnp.dot(t.after.xpos[root, :2] - t.before.xpos[root, :2], direction) / t.dt

    def ctrl_cost(t: Transition) -> dict[str, Float[Array, ""]]:
        return {m: -config.ctrl_cost_weight * jnp.sum(jnp.square(a)) for m, a in t.action.items()}

    agent_bodies = np.sort(np.concatenate([m.body_ids for m in body.modules.values()]))

    def contact_cost(t: Transition) -> Float[Array, ""]:
        forces = jnp.clip(contact_forces(t.after)[agent_bodies], -1.0, 1.0)
        return -config.contact_cost_weight * jnp.sum(jnp.square(forces))

    def alive(t: Transition) -> Float[Array, ""]:
        return jnp.asarray(config.healthy_reward, jnp.float32)

    # Terms weighted 0 are left out (a zero contact cost then costs no contact pass).
    terms = [RewardTerm("forward_velocity", "team", velocity)]
    if config.healthy_reward:
        terms.append(RewardTerm("healthy", "team", alive))
    if config.ctrl_cost_weight:
        terms.append(RewardTerm("ctrl_cost", "local", ctrl_cost))
    if config.contact_cost_weight:
        terms.append(RewardTerm("contact_cost", "team", contact_cost, needs_contact_forces=True))
    return Task(
        name=name,
        terms=tuple(terms),
        module_names=body.module_names,
        root_module=body.root_module,
        team_split=config.team_reward,
        healthy=healthy_check(body),
        progress=velocity,
    )


TASKS: dict[str, Callable[[BodyGraph, EnvConfig], Task]] = {
    "run_forward": lambda body, config: _run_task(body, config, "run_forward", 0.0),
    "run_direction": lambda body, config: _run_task(
        body, config, "run_direction", config.direction_deg
    ),
}
TASK_NAMES = tuple(TASKS)


def make_task(body: BodyGraph, config: EnvConfig) -> Task:
    """The task `config.task` for `body`, with the config's weights and team split
    (EnvConfig has already checked the name against TASK_NAMES)."""
    return TASKS[config.task](body, config)
