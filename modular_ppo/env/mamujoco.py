"""EnvConfig(observation="mamujoco"): Gymnasium-Robotics' MaMuJoCo observations.

For a body and partition MaMuJoCo (v1, gymnasium-robotics 1.4) defines (`mamujoco_graphs`),
a module that is one of its agents observes what that agent observes in its
`MultiAgentMujocoEnv` (obsk.py's `build_obs`), in this order:
1. for h = 0..k (k = `EnvConfig.neighbor_hops`, MaMuJoCo's `agent_obsk`), the nodes h hops
   from the agent's own nodes in MaMuJoCo's hypergraph of joints (h = 0: its own), sorted
   by label; per node, the categories of hop h (`Scenario.local_categories`); a body
   category (cinert, cvel, cfrc_ext) reads each body once per observation;
2. if `global_features`: MaMuJoCo's global categories ("qpos", then "qvel") of its global
   nodes (the root's position without the forward coordinate, and its velocity).
A module that is none of its agents (the torso: no motor, a value head only) observes the
global categories alone, with or without `global_features`.

Every quantity is the observed state's own (qpos, qvel and the quantities derived from
them, as all ModularEnv observations), and float32. Gymnasium's env steps with mj_step, so
the cinert, cvel and cfrc_ext it hands MaMuJoCo are those of the start of its last physics
substep; handed the same state, both give the same observations
(tests/env/test_env_mamujoco.py).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph
from modular_ppo.body.partition import named_partitions
from modular_ppo.body.resolve import resolve_partition
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.errors import EnvError
from modular_ppo.env.mamujoco_graphs import BODY_CATEGORIES, SCENARIOS, Node, Scenario
from modular_ppo.env.mamujoco_quantities import ComInertia, MotorForces
from modular_ppo.env.obs_block import GLOBAL, ObsBlock
from modular_ppo.env.physics import contact_forces

GLOBAL_CATEGORIES = ("qpos", "qvel")
"""MaMuJoCo's default global categories."""

Blocks = dict[str, list[tuple[ObsBlock, np.ndarray]]]
"""Module -> its observation's blocks, each with its indices into the flat quantities."""


class Quantities:
    """The flat vector of the quantities the observations read, each as (quantity, clip):
    qpos, qvel, qfrc_actuator per address, cinert, cvel, cfrc_ext per body; a quantity
    enters the vector when an observation first asks for one of its elements."""

    def __init__(self, body: BodyGraph):
        self._body = body
        model = body.model
        self._counts = {"qpos": model.nq, "qvel": model.nv, "qfrc_actuator": model.nv,
                        **dict.fromkeys(BODY_CATEGORIES, model.nbody)}
        self._offsets: dict[tuple[str, float | None], int] = {}
        self.size = 0
        self._inertia = ComInertia(model)
        self._motor_forces: MotorForces | None = None

    def index(self, quantity: str, clip: float | None, element: int) -> np.ndarray:
        """Flat indices of one element (an address, negative from the end, or a body id)."""
        count, width = self._counts[quantity], BODY_CATEGORIES.get(quantity, 1)
        if (quantity, clip) not in self._offsets:
            if quantity == "qfrc_actuator":
                self._motor_forces = MotorForces(self._body)
            self._offsets[(quantity, clip)] = self.size
            self.size += count * width
        start = self._offsets[(quantity, clip)] + (element % count) * width
        return np.arange(start, start + width)

    def __call__(self, data: mjx.Data) -> Float[Array, "features"]:
        parts = []
        for quantity, clip in self._offsets:
            value = self._read(quantity, data).ravel()
            parts.append(value if clip is None else jnp.clip(value, -clip, clip))
        return jnp.concatenate(parts).astype(jnp.float32)

    def _read(self, quantity: str, data: mjx.Data) -> Array:
        if quantity == "cinert":
            return self._inertia(data.xpos, data.xmat, data.subtree_com)
        if quantity == "qfrc_actuator":
            return self._motor_forces(data.ctrl)
        if quantity == "cfrc_ext":
            return contact_forces(data)
        return getattr(data, quantity)


def mamujoco_blocks(body: BodyGraph, config: EnvConfig) -> tuple[Quantities, Blocks]:
    """The quantities to compute per state and every module's blocks (module docstring).

    Raises EnvError when MaMuJoCo defines no observations for this body and partition, or
    when `config.contact_forces` is set where its categories read no cfrc_ext.
    """
    scenario = body_scenario(body)
    agents = module_agents(body, scenario)
    categories = _hop_categories(scenario, config)
    _check_contact_forces(body, scenario, categories, config)
    quantities = Quantities(body)
    owner = {node.label: module for module, nodes in agents.items() for node in nodes}
    global_blocks = [
        block
        for category in GLOBAL_CATEGORIES
        for node in scenario.global_nodes
        if (block := _joint_block(quantities, node, category, GLOBAL, None))
    ]
    blocks: Blocks = {}
    for module in body.module_names:
        if module in agents:
            local = _agent_blocks(quantities, scenario, agents[module], categories, owner)
            blocks[module] = local + (global_blocks if config.global_features else [])
        else:
            blocks[module] = global_blocks
    return quantities, blocks


def _agent_blocks(
    quantities: Quantities, scenario: Scenario, agent: tuple[Node, ...],
    categories: list[tuple[str, ...]], owner: dict[str, str],
) -> list[tuple[ObsBlock, np.ndarray]]:
    """One agent's local blocks (1. of the module docstring); categories[h]: hop h's."""
    blocks = []
    seen: dict[str, set[int]] = {c: set() for c in BODY_CATEGORIES}
    for hop, level in enumerate(nodes_at_hops(scenario, agent, len(categories) - 1)):
        for node in level:
            for category in categories[hop]:
                source = owner[node.label]
                if category in BODY_CATEGORIES:
                    block = _body_block(quantities, scenario, node, category, seen, hop, source)
                else:
                    block = _joint_block(quantities, node, category, source, hop)
                if block:
                    blocks.append(block)
    return blocks


def nodes_at_hops(scenario: Scenario, agent: tuple[Node, ...], k: int) -> list[list[Node]]:
    """obsk.py's `get_joints_at_kdist`: the agent's nodes, then those 1..k hyperedge hops
    away (each node at its shortest distance), each hop's nodes sorted by label."""
    edges = [set(edge) for edge in scenario.edges]
    explored = new = {node.label for node in agent}
    levels = [new]
    for _ in range(k):
        new = {other for label in new for edge in edges if label in edge for other in edge}
        new -= explored
        explored = explored | new
        levels.append(new)
    return [[scenario.node(label) for label in sorted(level)] for level in levels]


def _joint_block(
    quantities: Quantities, node: Node, category: str, source: str, hop: int | None
) -> tuple[ObsBlock, np.ndarray] | None:
    addresses = node.qpos if category == "qpos" else node.qvel
    if not addresses:
        return None
    clip = node.qvel_clip if category == "qvel" else None
    index = np.concatenate([quantities.index(category, clip, a) for a in addresses])
    return ObsBlock(source, hop, category, (node.label,), index.size), index


def _body_block(
    quantities: Quantities, scenario: Scenario, node: Node, category: str,
    seen: dict[str, set[int]], hop: int, source: str,
) -> tuple[ObsBlock, np.ndarray] | None:
    """The node's bodies not yet in `seen` (then added to it), as obsk.py reads them."""
    bodies = [b for b in node.bodies if b not in seen[category]]
    seen[category].update(bodies)
    if not bodies:
        return None
    index = np.concatenate([quantities.index(category, node.body_clip, b) for b in bodies])
    elements = tuple(scenario.bodies[b] for b in bodies)
    return ObsBlock(source, hop, category, elements, index.size), index


def body_scenario(body: BodyGraph) -> Scenario:
    """The MaMuJoCo scenario whose model layout (joints, actuators, bodies) the body has."""
    model = body.model
    joints = tuple(model.joint(j).name for j in range(model.njnt))
    actuator_joints = tuple(model.joint(model.actuator_trnid[a, 0]).name for a in range(model.nu))
    bodies = tuple(model.body(b).name for b in range(model.nbody))
    for scenario in SCENARIOS.values():
        if (scenario.joints, scenario.actuator_joints, scenario.bodies) == (
            joints, actuator_joints, bodies
        ):
            return scenario
    raise EnvError(
        f"{body.source}: EnvConfig.observation = \"mamujoco\": Gymnasium-Robotics' MaMuJoCo "
        f"defines no observations for body '{body.name}' (partition "
        f"{_partition_name(body)}). It defines them for {_defined()}. Use one of those, or "
        "observation \"modular\"."
    )


def module_agents(body: BodyGraph, scenario: Scenario) -> dict[str, tuple[Node, ...]]:
    """Actuated module -> the nodes of the MaMuJoCo agent that drives the same actuators,
    for the first of the scenario's partitions whose agents are the body's modules."""
    groups = {m: frozenset(body.modules[m].actuator_ids.tolist()) for m in body.actuated_modules}
    for agents in scenario.partitions.values():
        by_actuators = {frozenset(scenario.node(label).actuator for label in agent): agent
                        for agent in agents}
        if set(by_actuators) == set(groups.values()):
            return {m: tuple(scenario.node(label) for label in by_actuators[group])
                    for m, group in groups.items()}
    defined = "; ".join(f"{name} ({' | '.join(' '.join(agent) for agent in agents)})"
                        for name, agents in scenario.partitions.items())
    raise EnvError(
        f"{body.source}: EnvConfig.observation = \"mamujoco\": body '{body.name}' with "
        f"partition {_partition_name(body)} is none of the partitions MaMuJoCo's "
        f"{scenario.name} defines (agents by joint): {defined}. Load the body with one of "
        f"them (--partition '{next(iter(scenario.partitions))}'), or use observation "
        "\"modular\"."
    )


def reads_contact_forces(body: BodyGraph, config: EnvConfig) -> bool:
    """Whether MaMuJoCo's categories for this body, up to `config.neighbor_hops` hops, read
    the contact forces cfrc_ext (its Ant and Humanoid): the simulator must compute them."""
    return _reads_cfrc_ext(_hop_categories(body_scenario(body), config))


def _hop_categories(scenario: Scenario, config: EnvConfig) -> list[tuple[str, ...]]:
    """categories[h]: the local categories observed at h hops (the last one repeats)."""
    last = len(scenario.local_categories) - 1
    return [scenario.local_categories[min(h, last)] for h in range(config.neighbor_hops + 1)]


def _reads_cfrc_ext(categories: list[tuple[str, ...]]) -> bool:
    return any("cfrc_ext" in level for level in categories)


def _check_contact_forces(
    body: BodyGraph, scenario: Scenario, categories: list[tuple[str, ...]], config: EnvConfig
) -> None:
    if config.contact_forces and not _reads_cfrc_ext(categories):
        raise EnvError(
            f"{body.source}: MaMuJoCo's {scenario.name} observations include no contact "
            "forces: set EnvConfig.contact_forces=False (leave out --env.contact-forces)."
        )


def _partition_name(body: BodyGraph) -> str:
    """The name of the body file's partition that gives the body's modules, else the
    partition written out."""
    groups = {frozenset(body.modules[m].actuator_ids.tolist()) for m in body.actuated_modules}
    for name in named_partitions(body.model):
        modules = resolve_partition(body.model, body.bodies, name, body.source)
        actuators: dict[str, set[int]] = {}
        for b, module in modules.items():
            actuators.setdefault(module, set()).update(body.bodies.nodes[b]["actuator_ids"])
        if {frozenset(a) for a in actuators.values() if a} == groups:
            return f"'{name}'"
    return f"'{body.partition_annotation()}'"


def _defined() -> str:
    return "; ".join(
        f"{name} (MaMuJoCo's {s.name}: {', '.join(s.partitions)})" for name, s in SCENARIOS.items()
    )
