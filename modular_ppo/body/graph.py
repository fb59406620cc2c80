"""BodyGraph: a MuJoCo model as a graph of bodies, partitioned into named modules.

Everything about a morphology is decided here, once, on the host: which bodies, joints and
actuators each module owns, the qpos / qvel addresses of its joints, and how modules connect.
Later stages only read the static numpy index arrays this produces.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path

import mujoco
import networkx as nx
import numpy as np

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.partition import Partition, resolve_partition

# Number of qpos / qvel entries per joint type (mjtJoint order: free, ball, slide, hinge).
_QPOS_SIZE = {0: 7, 1: 4, 2: 1, 3: 1}
_QVEL_SIZE = {0: 6, 1: 3, 2: 1, 3: 1}
_JOINT_TYPE_NAME = {0: "free", 1: "ball", 2: "slide", 3: "hinge"}

MjcfSource = str | Path | mujoco.MjSpec


@dataclasses.dataclass(frozen=True)
class Module:
    """One module of a body: a connected group of MuJoCo bodies acting as one agent.

    Index arrays are MuJoCo ids / addresses into the compiled model, sorted ascending.
    """

    name: str
    root_body: str
    """The module's top body: its parent (if any) belongs to the parent module."""
    bodies: tuple[str, ...]
    body_ids: np.ndarray
    joint_ids: np.ndarray
    qpos_adr: np.ndarray
    """qpos addresses of every joint the module owns (a free joint contributes 7)."""
    qvel_adr: np.ndarray
    """qvel (dof) addresses of every joint the module owns (a free joint contributes 6)."""
    actuator_ids: np.ndarray
    parent: str | None
    children: tuple[str, ...]

    @property
    def n_actuators(self) -> int:
        return int(self.actuator_ids.size)

    @property
    def is_actuated(self) -> bool:
        return self.actuator_ids.size > 0


@dataclasses.dataclass(frozen=True, eq=False)
class BodyGraph:
    """A MuJoCo body tree as a networkx graph plus a partition into named modules.

    Build it with `BodyGraph.from_mjcf(path | xml string | MjSpec, partition=...)`.
    """

    name: str
    source: str
    """Where the model came from: a file path, "<xml string>" or "<MjSpec>"."""
    xml: str
    """The model's MJCF text, enough to rebuild the graph anywhere (checkpoints, workers)."""
    model: mujoco.MjModel
    bodies: nx.DiGraph
    """Nodes: body names, with attributes id, joints, joint_types, actuators, geoms, module.
    Edges: parent -> child."""
    modules: dict[str, Module]
    """Modules in tree order (the root module first)."""
    module_graph: nx.Graph
    hop_distance: np.ndarray
    """[n_modules, n_modules] shortest path lengths in the module tree, in `modules` order."""
    numerics: dict[str, np.ndarray]
    """The model's <custom><numeric> values by name, e.g. "init_qpos",
    "modular_ppo:frame_skip", "modular_ppo:healthy_z" (task parameters of the body)."""

    @property
    def frame_skip(self) -> int:
        """Physics steps per control step: the `modular_ppo:frame_skip` numeric, default 5."""
        return int(self.numerics.get("modular_ppo:frame_skip", [5])[0])

    @property
    def module_names(self) -> tuple[str, ...]:
        return tuple(self.modules)

    @property
    def actuated_modules(self) -> tuple[str, ...]:
        return tuple(n for n, m in self.modules.items() if m.is_actuated)

    @property
    def root_module(self) -> str:
        return next(iter(self.modules))

    @property
    def root_body_id(self) -> int:
        return int(self.modules[self.root_module].body_ids.min())

    def module_index(self, name: str) -> int:
        return self.module_names.index(name)

    def neighbours(self, module: str, hops: int) -> tuple[str, ...]:
        """Modules at distance 1..hops from `module`, in module order."""
        i = self.module_index(module)
        return tuple(
            n for j, n in enumerate(self.module_names) if 1 <= self.hop_distance[i, j] <= hops
        )

    @classmethod
    def from_mjcf(
        cls,
        source: MjcfSource,
        partition: Partition | None = None,
        name: str | None = None,
    ) -> BodyGraph:
        """Build from an MJCF file path, an MJCF XML string, or a `mujoco.MjSpec`.

        partition: a rule name ("subtrees", "per_actuated_body", MaMuJoCo-style strings such
        as "4x2"), or a mapping module name -> root bodies of that module (a module owns its
        root bodies and their descendants down to the next listed root). None uses the
        model's own `modular_ppo:partition` annotation if present, else "subtrees".
        """
        spec, where = _load_spec(source)
        try:
            model = spec.compile()
        except ValueError as e:
            raise BodyGraphError(f"{where}: MuJoCo could not compile the model: {e}") from None
        xml = spec.to_xml()
        model_name = name or spec.modelname or Path(where).stem
        return _build(model, xml, where, model_name, partition)


def _load_spec(source: MjcfSource) -> tuple[mujoco.MjSpec, str]:
    if isinstance(source, mujoco.MjSpec):
        return source, "<MjSpec>"
    text = str(source)
    if isinstance(source, Path) or not text.lstrip().startswith("<"):
        path = Path(text)
        if not path.is_file():
            raise BodyGraphError(
                f"{path}: no such MJCF file. Give the path of an existing .xml file, "
                "or a bundled body name (see `python cli.py bodies list`)."
            )
        try:
            return mujoco.MjSpec.from_file(str(path)), str(path)
        except ValueError as e:
            raise BodyGraphError(f"{path}: not a valid MJCF file: {e}") from None
    try:
        return mujoco.MjSpec.from_string(text), "<xml string>"
    except ValueError as e:
        raise BodyGraphError(f"<xml string>: not a valid MJCF document: {e}") from None


def _body_name(model: mujoco.MjModel, body_id: int) -> str:
    return model.body(body_id).name or f"body{body_id}"


def _actuator_body(model: mujoco.MjModel, act_id: int, where: str) -> int:
    """The body an actuator acts on, for assigning it to a module."""
    trntype = int(model.actuator_trntype[act_id])
    target = int(model.actuator_trnid[act_id, 0])
    if trntype in (mujoco.mjtTrn.mjTRN_JOINT, mujoco.mjtTrn.mjTRN_JOINTINPARENT):
        return int(model.jnt_bodyid[target])
    if trntype == mujoco.mjtTrn.mjTRN_SITE:
        return int(model.site_bodyid[target])
    if trntype == mujoco.mjtTrn.mjTRN_BODY:
        return target
    if trntype == mujoco.mjtTrn.mjTRN_TENDON:
        return _tendon_body(model, act_id, target, where)
    act = model.actuator(act_id).name or f"actuator #{act_id}"
    raise BodyGraphError(
        f"{where}: actuator '{act}' has a transmission of type {trntype} that cannot be "
        "assigned to a body. Use a joint, site, body or tendon transmission."
    )


def _tendon_body(model: mujoco.MjModel, act_id: int, tendon: int, where: str) -> int:
    """A tendon actuator belongs to the deepest common ancestor of the bodies it spans."""
    start, num = int(model.tendon_adr[tendon]), int(model.tendon_num[tendon])
    bodies = []
    for w in range(start, start + num):
        wtype, obj = int(model.wrap_type[w]), int(model.wrap_objid[w])
        if wtype == mujoco.mjtWrap.mjWRAP_JOINT:
            bodies.append(int(model.jnt_bodyid[obj]))
        elif wtype == mujoco.mjtWrap.mjWRAP_SITE:
            bodies.append(int(model.site_bodyid[obj]))
    if not bodies:
        act = model.actuator(act_id).name or f"actuator #{act_id}"
        raise BodyGraphError(
            f"{where}: actuator '{act}' drives a tendon that touches no joint or site, so it "
            "cannot be assigned to a module. Attach it to a joint or site instead."
        )

    def ancestors(b: int) -> list[int]:
        chain = [b]
        while b != 0:
            b = int(model.body_parentid[b])
            chain.append(b)
        return chain

    common = set(ancestors(bodies[0]))
    for b in bodies[1:]:
        common &= set(ancestors(b))
    return max(common, key=lambda b: len(ancestors(b)))


def _build(
    model: mujoco.MjModel, xml: str, where: str, name: str, partition: Partition | None
) -> BodyGraph:
    if model.nu == 0:
        raise BodyGraphError(
            f"{where}: the model has no actuators, so no module can act. Add <actuator> "
            "elements (e.g. <motor joint=... gear=.../>) for the joints to control."
        )
    bodies = nx.DiGraph()
    for b in range(1, model.nbody):
        joints = np.flatnonzero(model.jnt_bodyid == b)
        bodies.add_node(
            _body_name(model, b),
            id=b,
            joints=tuple(model.joint(j).name or f"joint{j}" for j in joints),
            joint_types=tuple(_JOINT_TYPE_NAME[int(model.jnt_type[j])] for j in joints),
            geoms=tuple(
                model.geom(g).name or f"geom{g}" for g in np.flatnonzero(model.geom_bodyid == b)
            ),
            actuators=(),
        )
        parent = int(model.body_parentid[b])
        if parent != 0:
            bodies.add_edge(_body_name(model, parent), _body_name(model, b))
    if bodies.number_of_nodes() != model.nbody - 1:
        raise BodyGraphError(f"{where}: two bodies share a name; give every body a unique name.")

    actuator_body = [_actuator_body(model, a, where) for a in range(model.nu)]
    for a, b in enumerate(actuator_body):
        node = bodies.nodes[_body_name(model, b)]
        node["actuators"] = node["actuators"] + (model.actuator(a).name or f"actuator{a}",)

    body_module = resolve_partition(model, bodies, partition, where)
    for body, module in body_module.items():
        bodies.nodes[body]["module"] = module

    modules = _make_modules(model, bodies, body_module, actuator_body, where)
    module_graph = nx.Graph()
    module_graph.add_nodes_from(modules)
    module_graph.add_edges_from((m.parent, m.name) for m in modules.values() if m.parent)
    lengths = dict(nx.all_pairs_shortest_path_length(module_graph))
    names = list(modules)
    hop = np.array([[lengths[a].get(b, -1) for b in names] for a in names], dtype=np.int32)
    numerics = {
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_NUMERIC, i): np.array(
            model.numeric_data[model.numeric_adr[i] : model.numeric_adr[i] + model.numeric_size[i]]
        )
        for i in range(model.nnumeric)
    }
    return BodyGraph(
        name=name,
        source=where,
        xml=xml,
        model=model,
        bodies=bodies,
        modules=modules,
        module_graph=module_graph,
        hop_distance=hop,
        numerics=numerics,
    )


def _make_modules(
    model: mujoco.MjModel,
    bodies: nx.DiGraph,
    body_module: Mapping[str, str],
    actuator_body: Sequence[int],
    where: str,
) -> dict[str, Module]:
    order: list[str] = []
    for body in nx.topological_sort(bodies):
        if body in body_module and body_module[body] not in order:
            order.append(body_module[body])
    modules: dict[str, Module] = {}
    for mod in order:
        names = [b for b in nx.topological_sort(bodies) if body_module.get(b) == mod]
        root = names[0]
        parents = list(bodies.predecessors(root))
        parent = body_module.get(parents[0]) if parents else None
        body_ids = np.array(sorted(bodies.nodes[b]["id"] for b in names), dtype=np.int32)
        joint_ids = np.flatnonzero(np.isin(model.jnt_bodyid, body_ids)).astype(np.int32)
        qpos = [
            model.jnt_qposadr[j] + k
            for j in joint_ids
            for k in range(_QPOS_SIZE[int(model.jnt_type[j])])
        ]
        qvel = [
            model.jnt_dofadr[j] + k
            for j in joint_ids
            for k in range(_QVEL_SIZE[int(model.jnt_type[j])])
        ]
        acts = [a for a, b in enumerate(actuator_body) if b in set(body_ids.tolist())]
        modules[mod] = Module(
            name=mod,
            root_body=root,
            bodies=tuple(names),
            body_ids=body_ids,
            joint_ids=joint_ids,
            qpos_adr=np.array(sorted(qpos), dtype=np.int32),
            qvel_adr=np.array(sorted(qvel), dtype=np.int32),
            actuator_ids=np.array(acts, dtype=np.int32),
            parent=parent,
            children=(),
        )
    children: dict[str, list[str]] = {m: [] for m in modules}
    for m in modules.values():
        if m.parent is not None:
            children[m.parent].append(m.name)
    covered = sorted(a for m in modules.values() for a in m.actuator_ids.tolist())
    if covered != list(range(model.nu)):
        missing = sorted(set(range(model.nu)) - set(covered))
        acts = ", ".join(model.actuator(a).name or f"#{a}" for a in missing)
        raise BodyGraphError(
            f"{where}: actuator(s) {acts} belong to no module (they act on bodies outside "
            "every module). Add those bodies to a module of the partition."
        )
    return {
        n: dataclasses.replace(m, children=tuple(children[n])) for n, m in modules.items()
    }
