"""Module: one agent of a body, with the static MuJoCo index arrays it owns."""

from __future__ import annotations

import dataclasses

import mujoco
import networkx as nx
import numpy as np

from modular_ppo.body.naming import name_of

# qpos / qvel entries per joint type, indexed by mjtJoint (free, ball, slide, hinge).
_QPOS_SIZE = np.array([7, 4, 1, 1])
_QVEL_SIZE = np.array([6, 3, 1, 1])


@dataclasses.dataclass(frozen=True)
class Module:
    """One module of a body: a group of MuJoCo bodies acting as one agent.

    Index arrays are MuJoCo ids / addresses into the compiled model (numpy int32, sorted).
    """

    name: str
    root_body: str
    """The module's top body (the shallowest; the lowest id among equals). Its parent, if
    any, belongs to the parent module."""
    root_bodies: tuple[str, ...]
    """Bodies whose parent lies outside the module: one, unless the module joins several
    subtrees (e.g. two legs)."""
    bodies: tuple[str, ...]
    """Body names in MuJoCo id order."""
    body_ids: np.ndarray
    joints: tuple[str, ...]
    joint_ids: np.ndarray
    qpos_adr: np.ndarray
    """qpos addresses of every joint the module owns (free joint: 7, ball: 4, else 1)."""
    qvel_adr: np.ndarray
    """qvel (dof) addresses of every joint the module owns (free joint: 6, ball: 3, else 1)."""
    actuators: tuple[str, ...]
    """Actuator names in MuJoCo id order (empty for a module without actuators)."""
    actuator_ids: np.ndarray
    parent: str | None
    """The module that owns the parent of `root_body`, None for a root module."""
    children: tuple[str, ...]
    """The modules whose parent is this one, in module order."""

    @property
    def n_actuators(self) -> int:
        """Number of actuators, i.e. of this module's actions."""
        return int(self.actuator_ids.size)

    @property
    def is_actuated(self) -> bool:
        """Whether the module acts (has an action); one without is observation / value only."""
        return self.actuator_ids.size > 0


def make_modules(model: mujoco.MjModel, bodies: nx.DiGraph) -> dict[str, Module]:
    """Modules from a body tree whose nodes carry their "module" name, in tree order."""
    members: dict[str, list[str]] = {}
    for body in sorted(bodies, key=lambda b: bodies.nodes[b]["id"]):
        module = bodies.nodes[body]["module"]
        if module is not None:
            members.setdefault(module, []).append(body)
    depth = {b: len(nx.ancestors(bodies, b)) for b in bodies}
    parent_of: dict[str, str | None] = {}
    modules: dict[str, Module] = {}
    for module, names in members.items():
        root = min(names, key=lambda b: (depth[b], bodies.nodes[b]["id"]))
        above = next(bodies.predecessors(root), None)
        parent_of[module] = None if above is None else bodies.nodes[above]["module"]
        modules[module] = _module(model, bodies, module, names, root, parent_of[module])
    children = {m: [c for c, p in parent_of.items() if p == m] for m in modules}
    ordered: list[str] = []

    def visit(module: str) -> None:
        ordered.append(module)
        for child in children[module]:
            visit(child)

    for module in (m for m, p in parent_of.items() if p is None):
        visit(module)
    return {m: dataclasses.replace(modules[m], children=tuple(children[m])) for m in ordered}


def _module(
    model: mujoco.MjModel,
    bodies: nx.DiGraph,
    module: str,
    names: list[str],
    root: str,
    parent: str | None,
) -> Module:
    nodes = [bodies.nodes[b] for b in names]
    joint_ids = np.array(sorted(j for n in nodes for j in n["joint_ids"]), dtype=np.int32)
    types = model.jnt_type[joint_ids]
    actuator_ids = np.array(sorted(a for n in nodes for a in n["actuator_ids"]), dtype=np.int32)
    members = set(names)
    roots = tuple(b for b in names if next(bodies.predecessors(b), None) not in members)
    return Module(
        name=module,
        root_body=root,
        root_bodies=roots,
        bodies=tuple(names),
        body_ids=np.array([n["id"] for n in nodes], dtype=np.int32),
        joints=tuple(name_of(model, "joint", int(j)) for j in joint_ids),
        joint_ids=joint_ids,
        qpos_adr=_addresses(model.jnt_qposadr[joint_ids], _QPOS_SIZE[types]),
        qvel_adr=_addresses(model.jnt_dofadr[joint_ids], _QVEL_SIZE[types]),
        actuators=tuple(name_of(model, "actuator", int(a)) for a in actuator_ids),
        actuator_ids=actuator_ids,
        parent=parent,
        children=(),
    )


def _addresses(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Every address start .. start + size - 1 of each joint, sorted."""
    spans = [np.arange(start, start + size) for start, size in zip(starts, sizes, strict=True)]
    return np.sort(np.concatenate([np.zeros(0, np.int64), *spans])).astype(np.int32)
