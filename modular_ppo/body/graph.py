"""BodyGraph: a MuJoCo model as a graph of bodies, partitioned into named modules.

Everything about a morphology is decided here, once, on the host: which bodies, joints and
actuators each module owns, the qpos / qvel addresses of its joints, and how modules connect.
Later stages only read the static numpy index arrays this produces.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import mujoco
import networkx as nx
import numpy as np

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.modules import Module, make_modules
from modular_ppo.body.naming import name_of
from modular_ppo.body.numerics import INIT_QPOS, read_numerics
from modular_ppo.body.partition import ANNOTATION, Partition, format_annotation, model_texts
from modular_ppo.body.resolve import resolve_partition
from modular_ppo.body.source import MjcfSource, compile_spec, load_spec
from modular_ppo.body.task import (
    PPO_PRESET_ACCELERATOR,
    TaskSpec,
    read_arch_preset,
    read_ppo_preset,
    read_task,
    root_hinge,
)
from modular_ppo.body.transmission import actuator_bodies

_JOINT_TYPE_NAME = ("free", "ball", "slide", "hinge")  # indexed by mjtJoint


@dataclasses.dataclass(frozen=True, eq=False)
class BodyGraph:
    """A MuJoCo body tree as a networkx graph plus a partition into named modules.

    Build it with `BodyGraph.from_mjcf(path | xml string | MjSpec, partition=...)`, or a
    bundled body with `load_body`. Later stages read the compiled `model`, the `modules`
    (name -> `Module`, root module first) with their static index arrays, the module tree
    (`hop_distance`, `neighbors`) and the body's own task (`task`, `frame_skip`,
    `healthy_z`, `init_qpos`); nothing here changes after construction.
    """

    name: str
    source: str
    """Where the model came from: a file path, "<xml string>" or "<MjSpec>"."""
    xml: str
    """The model's MJCF text with the partition in use as its default annotation:
    `BodyGraph.from_mjcf(graph.xml)` rebuilds this graph (checkpoints, workers)."""
    model: mujoco.MjModel
    """The compiled model."""
    bodies: nx.DiGraph
    """Nodes: body names, with attributes id, joints, joint_ids, joint_types, actuators,
    actuator_ids, geoms, geom_ids, module (None for static scenery). Edges: parent -> child."""
    modules: dict[str, Module]
    """Modules in tree order (depth first, the root module first)."""
    module_graph: nx.Graph
    """Modules, with an edge wherever a body's parent lies in another module."""
    hop_distance: np.ndarray
    """[n_modules, n_modules] shortest path lengths in `module_graph`, in `modules` order;
    -1 between modules of separate bodies."""
    numerics: dict[str, np.ndarray]
    """The model's <custom><numeric> values by name (e.g. "init_qpos")."""
    task: TaskSpec
    """The task the body's file states (`modular_ppo.body.task`): reward weights, healthy
    ranges, reset noise, velocity source, frame skip."""
    ppo_preset: dict[str, str] = dataclasses.field(default_factory=dict)
    """PPOConfig field -> value the body's file recommends (`modular_ppo:ppo_preset`),
    unconverted: the run layer applies them as the CLI's defaults for this body."""
    ppo_preset_accelerator: dict[str, str] = dataclasses.field(default_factory=dict)
    """The same for runs on a GPU or TPU (`modular_ppo:ppo_preset_accelerator`), applied
    over `ppo_preset` there."""
    arch_preset: str | None = None
    """The architecture the body's file recommends (`modular_ppo:arch_preset`): the CLI's
    default `--arch` for this body, checked by the run layer; None: the CLI's default."""

    @property
    def frame_skip(self) -> int:
        """Physics steps per control step: the `modular_ppo:frame_skip` numeric, default 5."""
        return self.task.frame_skip

    @property
    def healthy_z(self) -> tuple[float, float] | None:
        """(min, max) root body height of a healthy state, None if the task has none."""
        return self.task.healthy_z

    @property
    def init_qpos(self) -> np.ndarray:
        """[nq] the rest pose: the `init_qpos` numeric, else the model's qpos0."""
        return np.array(self.numerics.get(INIT_QPOS, self.model.qpos0))

    @property
    def module_names(self) -> tuple[str, ...]:
        """Every module's name, in module order (`modules` order, the root module first)."""
        return tuple(self.modules)

    @property
    def actuated_modules(self) -> tuple[str, ...]:
        """The modules with at least one actuator, in module order: the action keys."""
        return tuple(n for n, m in self.modules.items() if m.is_actuated)

    @property
    def root_module(self) -> str:
        """The first module in module order: the one that owns the (first) top body."""
        return next(iter(self.modules))

    @property
    def root_body_id(self) -> int:
        """The MuJoCo id of the root module's top body (the global features and the "root"
        velocity source read it)."""
        return int(self.bodies.nodes[self.modules[self.root_module].root_body]["id"])

    def module_index(self, name: str) -> int:
        """The module's position in `module_names` (the row / column of `hop_distance`)."""
        return self.module_names.index(name)

    def neighbors(self, module: str, hops: int) -> tuple[str, ...]:
        """Modules at distance 1..hops from `module`, in module order."""
        i = self.module_index(module)
        return tuple(
            n for j, n in enumerate(self.module_names) if 1 <= self.hop_distance[i, j] <= hops
        )

    def partition_of_actuators(self) -> dict[str, tuple[int, ...]]:
        """Actuated module -> the MuJoCo ids of its actuators: the partition as MaMuJoCo
        states it (agents as groups of actuators)."""
        return {n: tuple(m.actuator_ids.tolist()) for n, m in self.modules.items() if m.is_actuated}

    def partition_annotation(self) -> str:
        """The partition in the annotation format: `module=root_body[, ...]; ...`."""
        return _annotation(self.modules)

    @classmethod
    def from_mjcf(
        cls,
        source: MjcfSource,
        partition: Partition | None = None,
        name: str | None = None,
    ) -> BodyGraph:
        """Build from an MJCF file path, an MJCF XML string, or a `mujoco.MjSpec`.

        partition: a mapping module name -> bodies (a module owns its listed bodies and
        their unlisted descendants), the name of a partition the MJCF defines (e.g. "4x2")
        or of a rule ("subtrees", "per_actuated_body"). None uses the model's own
        `modular_ppo:partition` annotation if present, else "subtrees". The format is
        documented in `modular_ppo.body.partition`.

        Raises `BodyGraphError` (a ValueError) naming the file, the element at fault and
        the fix.
        """
        spec, where = load_spec(source)
        model = compile_spec(spec, where)
        return _build(spec, model, where, name or model_name(spec, where), partition)


MUJOCO_DEFAULT_NAME = mujoco.MjSpec().modelname
"""The name MuJoCo gives a model whose <mujoco> element has no model= attribute."""


def model_name(spec: mujoco.MjSpec, where: str) -> str:
    """The body's name: its <mujoco model="..."> attribute; without one, the file's name
    without its suffix (two such files then differ by name), MuJoCo's default for an XML
    string or a spec (`where` "<xml string>" / "<MjSpec>")."""
    if spec.modelname and spec.modelname != MUJOCO_DEFAULT_NAME:
        return spec.modelname
    return MUJOCO_DEFAULT_NAME if where.startswith("<") else Path(where).stem


def _build(
    spec: mujoco.MjSpec,
    model: mujoco.MjModel,
    where: str,
    name: str,
    partition: Partition | None,
) -> BodyGraph:
    if model.nu == 0:
        raise BodyGraphError(
            f"{where}: the model has no actuators, so no module can act. Add <actuator> "
            "elements (e.g. <motor joint=... gear=.../>) for the joints to control."
        )
    numerics = read_numerics(model, where)
    texts = model_texts(model)
    task = read_task(model, numerics, texts, where)
    acting_on = actuator_bodies(model, where)
    bodies = _body_tree(model, acting_on)
    body_module = resolve_partition(model, bodies, partition, where)
    for body in bodies:
        bodies.nodes[body]["module"] = body_module.get(body)
    modules = make_modules(model, bodies)
    module_graph = nx.Graph()
    module_graph.add_nodes_from(modules)
    for parent, child in bodies.edges:
        a, b = body_module.get(parent), body_module.get(child)
        if a is not None and b is not None and a != b:
            module_graph.add_edge(a, b)
    lengths = dict(nx.all_pairs_shortest_path_length(module_graph))
    names = list(modules)
    hop = np.array([[lengths[a].get(b, -1) for b in names] for a in names], dtype=np.int32)
    if task.healthy_angle is not None:  # checked here, where the root module is known
        root_hinge(model, int(bodies.nodes[next(iter(modules.values())).root_body]["id"]), where)
    return BodyGraph(
        name=name,
        source=where,
        xml=_annotated_xml(spec, _annotation(modules)),
        model=model,
        bodies=bodies,
        modules=modules,
        module_graph=module_graph,
        hop_distance=hop,
        numerics=numerics,
        task=task,
        ppo_preset=read_ppo_preset(texts, where),
        ppo_preset_accelerator=read_ppo_preset(texts, where, PPO_PRESET_ACCELERATOR),
        arch_preset=read_arch_preset(texts, where),
    )


def _body_tree(model: mujoco.MjModel, acting_on: np.ndarray) -> nx.DiGraph:
    bodies = nx.DiGraph()
    for b in range(1, model.nbody):
        joints = np.flatnonzero(model.jnt_bodyid == b)
        geoms = np.flatnonzero(model.geom_bodyid == b)
        acts = np.flatnonzero(acting_on == b)
        bodies.add_node(
            name_of(model, "body", b),
            id=b,
            joints=tuple(name_of(model, "joint", int(j)) for j in joints),
            joint_ids=tuple(int(j) for j in joints),
            joint_types=tuple(_JOINT_TYPE_NAME[model.jnt_type[j]] for j in joints),
            actuators=tuple(name_of(model, "actuator", int(a)) for a in acts),
            actuator_ids=tuple(int(a) for a in acts),
            geoms=tuple(name_of(model, "geom", int(g)) for g in geoms),
            geom_ids=tuple(int(g) for g in geoms),
        )
        parent = int(model.body_parentid[b])
        if parent != 0:
            bodies.add_edge(name_of(model, "body", parent), name_of(model, "body", b))
    return bodies


def _annotated_xml(spec: mujoco.MjSpec, annotation: str) -> str:
    annotated = spec.copy()
    texts = [t for t in annotated.texts if t.name == ANNOTATION]
    if texts:
        texts[0].data = annotation
    else:
        annotated.add_text(name=ANNOTATION, data=annotation)
    return _with_infinite_numerics(annotated.to_xml(), annotated)


def _with_infinite_numerics(xml: str, spec: mujoco.MjSpec) -> str:
    """`MjSpec.to_xml` writes an infinite numeric entry as 0 (e.g. healthy_z "0.7 inf" as
    "0 0"); write those numerics' data as the file had it."""
    for numeric in spec.numerics:
        values = np.asarray(numeric.data, float)
        if np.isfinite(values).all():
            continue
        data = " ".join(repr(float(v)) for v in values)
        xml = re.sub(rf'(<numeric name="{re.escape(numeric.name)}"[^>]*data=")[^"]*"',
                     lambda m: m.group(1) + data + '"', xml)
    return xml


def _annotation(modules: dict[str, Module]) -> str:
    return format_annotation({name: module.root_bodies for name, module in modules.items()})
