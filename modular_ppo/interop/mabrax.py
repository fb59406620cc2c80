"""MABrax's five tasks (JaxMARL's multi-agent Brax) on this project's bodies.

MABrax (`jaxmarl.environments.mabrax`) runs Brax's single-agent envs and hands each agent
part of Brax's observation vector and part of its action vector through two hard-coded
index maps per task (`jaxmarl/environments/mabrax/mappings.py`); every agent's reward is
the team reward. Here a task name is one of this project's bundled bodies with its
MaMuJoCo partition:

    ant_4x2 -> ant-modular, 4x2          hopper_3x1 -> hopper-modular, 3x1
    halfcheetah_6x1 -> halfcheetah-modular, 6x1    walker2d_2x3 -> walker2d-modular, 2x3
    humanoid_9|8 -> humanoid-modular, 9|8

Agents are MABrax's (`agent_0`, ...): agent i is the module whose actuators are the
actions MABrax's action map gives it (the bodies keep Brax's actuator order, so these are
the same motors). Agent i observes what MABrax's observation map selects from Brax's
single-agent observation, computed here from this env's state exactly as the Brax env's
`_get_obs` computes it (`brax_observation`), and gathered as MABrax gathers it (a JAX
gather, so an index past the end reads the last entry). The maps are read from the
installed jaxmarl, not copied.

Where MABrax's own maps do not say what their structure suggests (own joints,
neighbouring joints within one hop, torso features), this reproduces MABrax, not the
intent:
- ant_4x2: agent i observes the joints of leg i + 1 (agent_0: hip_1 / ankle_1, the front
  left leg) but acts on the motors at positions 2i, 2i + 1 of Brax's actuator order,
  which starts with leg 4 (agent_0: hip_4 / ankle_4, the back right leg; agent_1: leg 1):
  every agent moves the leg before the one it observes.
- halfcheetah_6x1: the map was written for an observation that starts with the root's x
  position, which Brax leaves out: every index reads the entry after the one meant
  (agent_0 sees rooty, bthigh, bshin, bfoot, fshin, the root's z and angular velocity and
  the bthigh and bshin velocities), and agent_5's last index (17) reads entry 16
  (ffoot's velocity, the one meant).
- humanoid_9|8: the map was written for Gymnasium's 376-entry observation (with cinert,
  cvel and cfrc_ext of the world body too). Brax's humanoid has 244 entries (its feet are
  part of the shins: 11 bodies, no contact forces); this body, Gymnasium's with separate
  feet (13 bodies), has 276 with Brax's formula. Most indices past the joint velocities
  therefore name other quantities than meant, and those past the end read the last entry.
- hopper_3x1, walker2d_2x3: as the structure suggests (walker2d's torso features are the
  root's z and its x/z velocities; its pitch is in neither agent's map).

Where this differs from MABrax itself. Physics: MABrax steps Brax's own MJCF files with
Brax's "positional" pipeline by default (position-based dynamics, not MuJoCo's); here
each body is this project's MJCF (Brax's / Gymnasium's model; the humanoid's feet are
bodies of their own) on MJX with its physics settings (`bodies show NAME`). Tasks: the
reward weights, healthy ranges and reset noise are the same as Brax's env's; the ant's
task is Brax's, while halfcheetah, hopper, walker2d and humanoid carry Gymnasium v5's,
which differ from Brax's in that the alive bonus is not paid on the step that
terminates (Brax pays it on every step) and the humanoid also pays Gymnasium's contact
cost (5e-7, at most 10 per step). Rewards: `mabrax_env` gives every agent the team reward,
as MABrax does; `JaxMARLEnv(task)` this project's split per module (see `team`), summing
to the team reward (`rewards["__all__"]`).
Episodes: both end after 1000 steps by default and on leaving the healthy ranges.

`brax_observation` reads this project's MuJoCo state with Brax's formulas: on the same
joint positions and velocities it equals the Brax env's `_get_obs` for the ant,
halfcheetah, hopper and walker2d (checked with Brax 0.14.2's generalized pipeline; hopper
and walker2d observe the torso height, which this project's rootz joint, with Gymnasium's
ref="1.25", and Brax's, without, reach at joint values 1.25 apart); for the humanoid its
per-body blocks follow Brax's formula on this body's 13 bodies.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import jax.numpy as jnp
import mujoco
import numpy as np
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.env.mamujoco_quantities import InertialFrames
from modular_ppo.interop.errors import InteropError

MABRAX_TASKS: dict[str, tuple[str, str]] = {
    "ant_4x2": ("ant-modular", "4x2"),
    "halfcheetah_6x1": ("halfcheetah-modular", "6x1"),
    "hopper_3x1": ("hopper-modular", "3x1"),
    "humanoid_9|8": ("humanoid-modular", "9|8"),
    "walker2d_2x3": ("walker2d-modular", "2x3"),
}
"""MABrax task name -> (bundled body, partition)."""


def index_maps(task: str) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """MABrax's (action map, observation map) for `task`: agent -> indices into Brax's
    action vector / observation vector, read from the installed jaxmarl's mappings.py.

    The file is loaded on its own: importing it as `jaxmarl.environments.mabrax.mappings`
    would import MABrax's env, which needs Brax.
    """
    spec = importlib.util.find_spec("jaxmarl")
    if spec is None or not spec.submodule_search_locations:
        raise InteropError("MABrax task names need jaxmarl: pip install 'modular_ppo[interop]'.")
    path = Path(spec.submodule_search_locations[0]) / "environments" / "mabrax" / "mappings.py"
    module_spec = importlib.util.spec_from_file_location("_mabrax_mappings", path)
    mappings = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(mappings)
    actions, observations = mappings._agent_action_mapping, mappings._agent_observation_mapping
    if task not in actions:
        raise InteropError(f"jaxmarl at {path} defines no MABrax task '{task}'.")
    return (
        {a: np.asarray(i) for a, i in actions[task].items()},
        {a: np.asarray(i) for a, i in observations[task].items()},
    )


def agent_names(body: BodyGraph, task: str, action_map: dict[str, np.ndarray]) -> dict[str, str]:
    """Module -> MABrax agent name: the agent whose actions are the module's actuators."""
    owner = {tuple(body.modules[m].actuator_ids.tolist()): m for m in body.actuated_modules}
    names = {}
    for agent, actuators in action_map.items():
        module = owner.get(tuple(sorted(actuators.tolist())))
        if module is None:
            raise InteropError(
                f"MABrax {task}: {agent} acts on actuators {actuators.tolist()}, which no "
                f"module of {body.name} owns alone. Modules and their actuators: "
                f"{ {m: body.modules[m].actuator_ids.tolist() for m in body.actuated_modules} }."
            )
        names[module] = agent
    return names


def brax_observation(
    task: str, body: BodyGraph
) -> Callable[[mjx.Data], Float[Array, "obs"]]:
    """The single-agent observation of Brax's env for `task` (its `_get_obs` with default
    settings), as a function of this env's state:

    - ant: qpos[2:], qvel (27; no contact forces);
    - halfcheetah: qpos[1:], qvel (17);
    - hopper, walker2d: qpos with qpos[1] replaced by the torso's height, from index 1;
      qvel clipped to [-10, 10] (11, 17);
    - humanoid: qpos[2:], qvel, then per body but the world: the inertia matrix about
      the whole body's center of mass in the world frame (3x3, row-major) and the mass;
      mass / total mass times the velocity of the body's center of mass, and its angular
      velocity; then the actuator forces per dof, gear * ctrl (276).
    """
    family = task.split("_")[0]
    root = body.root_body_id
    if family in ("ant", "humanoid"):
        joints = lambda d: [d.qpos[2:], d.qvel]  # noqa: E731
    elif family == "halfcheetah":
        joints = lambda d: [d.qpos[1:], d.qvel]  # noqa: E731
    else:
        joints = lambda d: [  # noqa: E731
            d.qpos.at[1].set(d.xpos[root, 2])[1:], jnp.clip(d.qvel, -10.0, 10.0)
        ]
    if family != "humanoid":
        return lambda data: jnp.concatenate(joints(data))
    inertial = _humanoid_inertial(body)
    return lambda data: jnp.concatenate(joints(data) + inertial(data))


def _humanoid_inertial(body: BodyGraph) -> Callable[[mjx.Data], list[Float[Array, "n"]]]:
    """Brax humanoid's com_inertia, com_velocity and qfrc_actuator blocks (see
    `brax_observation`), from MuJoCo's body frames, com-based velocities and ctrl.

    The bodies' inertial frames come from their body frames (`InertialFrames`), so the C
    simulator's states (`CpuData`, which carry the body frames only) serve as MJX's do."""
    model = body.model
    mass = jnp.asarray(model.body_mass[1:], jnp.float32)
    principal = jnp.asarray(model.body_inertia[1:], jnp.float32)
    frames = InertialFrames(model)
    tree_root = np.asarray(model.body_rootid[1:])
    motors = model.actuator_trntype == mujoco.mjtTrn.mjTRN_JOINT
    if not motors.all():
        raise InteropError(f"{body.source}: the humanoid's actuators must all drive a joint.")
    dof = np.asarray(model.jnt_dofadr[model.actuator_trnid[:, 0]])
    gear = jnp.asarray(model.actuator_gear[:, 0], jnp.float32)

    def blocks(data: mjx.Data) -> list[Float[Array, "n"]]:
        xipos, ximat = (x[1:] for x in frames(data.xpos, data.xmat))
        com = (mass[:, None] * xipos).sum(0) / mass.sum()
        offset = xipos - com
        h = jnp.cross(offset[:, None, :], -jnp.eye(3)[None])
        rotated = ximat @ (principal[:, :, None] * jnp.swapaxes(ximat, 1, 2))
        inertia = rotated + h @ jnp.swapaxes(h, 1, 2) * mass[:, None, None]
        com_inertia = jnp.concatenate([inertia.reshape(-1, 9), mass[:, None]], axis=1)
        angular, linear = data.cvel[1:, :3], data.cvel[1:, 3:]
        at_com = linear + jnp.cross(angular, xipos - data.subtree_com[tree_root])
        com_velocity = jnp.concatenate(
            [mass[:, None] * at_com / mass.sum(), angular], axis=1
        )
        qfrc = jnp.zeros(model.nv).at[dof].add(gear * data.ctrl)
        return [com_inertia.ravel(), com_velocity.ravel(), qfrc]

    return blocks


def mabrax_observer(
    task: str, body: BodyGraph, obs_map: dict[str, np.ndarray]
) -> Callable[[mjx.Data], dict[str, Float[Array, "obs"]]]:
    """Agent -> its MABrax observation: Brax's observation gathered by MABrax's map."""
    observe = brax_observation(task, body)
    maps = {a: jnp.asarray(i) for a, i in obs_map.items()}

    def observations(data: mjx.Data) -> dict[str, Float[Array, "obs"]]:
        global_obs = observe(data)
        return {agent: global_obs[indices] for agent, indices in maps.items()}

    return observations
