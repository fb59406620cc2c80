"""Partitions: which module each MuJoCo body of the agent belongs to.

Only the agent's bodies are partitioned: the top-level subtrees in which some actuator acts.
The partition is chosen, in order of precedence, by
1. a Python mapping `{module_name: [body, ...]}` passed to `BodyGraph.from_mjcf`;
2. a string: the name of a partition the MJCF defines (see below, e.g. "4x2" for the ant),
   else a rule from `modular_ppo.body.rules` ("subtrees", "per_actuated_body");
3. nothing: the MJCF's own annotation `modular_ppo:partition`, else the rule "subtrees".

A module owns the bodies listed for it and every unlisted descendant of them, down to the
next listed body. Listing one body per limb gives that limb's subtree; listing every body
assigns bodies one by one; a module may list several bodies (e.g. two legs), so a module
need not be a single subtree. Module names may use letters, digits, '_', '-' and '.'.

The annotation lives in the MJCF, so one file defines a whole morphology:

    <custom>
      <text name="modular_ppo:partition"
            data="torso=torso; front_left=front_left_leg; front_right=front_right_leg"/>
      <text name="modular_ppo:partition:2x4" data="torso=torso; front=front_left_leg, ..."/>
    </custom>

`data` is `module=body[, body...]` entries separated by ';'. The unnamed text is the
default partition; `modular_ppo:partition:<name>` defines a partition chosen by passing
`partition="<name>"`. The default annotation may also be just such a name, or a rule's:
`data="2x4"`, `data="per_actuated_body"`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence

import mujoco
import networkx as nx

from modular_ppo.body.errors import BodyGraphError

ANNOTATION = "modular_ppo:partition"
NAMED_ANNOTATION = ANNOTATION + ":"

Partition = str | Mapping[str, Sequence[str]]
"""What `BodyGraph.from_mjcf(partition=...)` takes: a mapping module -> bodies, the name of a
partition the MJCF defines (the ant's "4x2", "2x4d": Gymnasium-Robotics' MaMuJoCo names) or
a rule ("subtrees", "per_actuated_body"); see the module docstring for the format."""

_MODULE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


def annotation_element(name: str | None = None) -> str:
    """The MJCF element holding the default partition, or the one called `name`."""
    text_name = ANNOTATION if name is None else NAMED_ANNOTATION + name
    return f'<text name="{text_name}">'


def model_texts(model: mujoco.MjModel) -> dict[str, str]:
    """The model's <custom><text> elements by name."""
    texts = {}
    for i in range(model.ntext):
        start, size = int(model.text_adr[i]), int(model.text_size[i])
        data = bytes(model.text_data[start : start + size]).rstrip(b"\0").decode()
        texts[mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_TEXT, i)] = data
    return texts


def named_partitions(model: mujoco.MjModel) -> list[str]:
    """Names of the partitions the model defines with `modular_ppo:partition:<name>`."""
    return [
        n[len(NAMED_ANNOTATION) :] for n in model_texts(model) if n.startswith(NAMED_ANNOTATION)
    ]


def format_annotation(mapping: Mapping[str, Sequence[str]]) -> str:
    """A mapping module -> bodies in the annotation format, the inverse of parse_annotation."""
    return "; ".join(f"{module}={', '.join(bodies)}" for module, bodies in mapping.items())


def parse_annotation(text: str, where: str, element: str) -> dict[str, list[str]] | str:
    """`"module=body, body; module=body"` as a mapping, or a lone word as a partition name."""
    entries = [s.strip() for s in text.split(";") if s.strip()]
    if len(entries) == 1 and "=" not in entries[0]:
        return entries[0]
    mapping: dict[str, list[str]] = {}
    for entry in entries:
        if "=" not in entry:
            raise BodyGraphError(
                f"{where}: {element}: entry '{entry}' has no '='. Write entries as "
                "'module=body[, body...]' separated by ';'."
            )
        module, bodies = (s.strip() for s in entry.split("=", 1))
        if module in mapping:
            raise BodyGraphError(
                f"{where}: {element}: module '{module}' is listed twice. Give each module one "
                "entry, listing all its bodies there, or rename one of them."
            )
        mapping[module] = [b.strip() for b in bodies.split(",") if b.strip()]
    return mapping


def agent_bodies(bodies: nx.DiGraph) -> list[str]:
    """Bodies that make up the agent, in MuJoCo id order: top-level subtrees in which some
    actuator acts.

    Scenery belongs to no module: static bodies and loose props (a free ball, a door) alike.
    """
    keep: list[str] = []
    for top in (b for b in bodies if bodies.in_degree(b) == 0):
        subtree = [top, *nx.descendants(bodies, top)]
        if any(bodies.nodes[b]["actuators"] for b in subtree):
            keep.extend(subtree)
    return sorted(keep, key=lambda b: bodies.nodes[b]["id"])


def assign_bodies(
    bodies: nx.DiGraph, mapping: Mapping[str, Sequence[str]], where: str, element: str
) -> dict[str, str]:
    """Map each body of the agent to its module, checking the mapping is a valid partition.

    element: where the mapping came from, for messages (an annotation element or
    "partition mapping").
    """
    agent = agent_bodies(bodies)
    listed = _listed_bodies(bodies, set(agent), mapping, where, element)
    body_module: dict[str, str] = {}
    for body in agent:
        b: str | None = body
        while b is not None and b not in listed:
            b = next(bodies.predecessors(b), None)
        if b is not None:
            body_module[body] = listed[b]
    missing = [b for b in agent if b not in body_module]
    if missing:
        acts = [a for b in missing for a in bodies.nodes[b]["actuators"]]
        left = f", so actuator(s) {', '.join(acts)} would be in no module" if acts else ""
        raise BodyGraphError(
            f"{where}: {element}: body(s) {', '.join(missing)} belong to no module (neither "
            f"they nor an ancestor is listed){left}. List them, or an ancestor such as the "
            f"top body '{_top(bodies, missing[0])}', in a module."
        )
    return body_module


def _listed_bodies(
    bodies: nx.DiGraph,
    agent: set[str],
    mapping: Mapping[str, Sequence[str]],
    where: str,
    element: str,
) -> dict[str, str]:
    """Listed body -> its module, checking module names and the bodies listed."""
    listed: dict[str, str] = {}
    modules: set[str] = set()
    for raw_module, module_bodies in mapping.items():
        module = str(raw_module).strip()
        if not _MODULE_NAME.match(module):
            raise BodyGraphError(
                f"{where}: {element}: module name '{raw_module}' is not allowed. Use letters, "
                "digits, '_', '-' and '.' only (names become metric keys)."
            )
        if module in modules:
            raise BodyGraphError(
                f"{where}: {element}: two modules are named '{module}'. Module names must be "
                "unique: rename one, or merge their bodies into one entry."
            )
        modules.add(module)
        if isinstance(module_bodies, str) or not module_bodies:
            raise BodyGraphError(
                f"{where}: {element}: module '{module}' lists no bodies (give a list of body "
                "names). Give it at least one body, or remove it."
            )
        for body in module_bodies:
            _check_listed(bodies, agent, listed, module, body, where, element)
            listed[body] = module
    return listed


def _top(bodies: nx.DiGraph, body: str) -> str:
    while (parent := next(bodies.predecessors(body), None)) is not None:
        body = parent
    return body


def _check_listed(
    bodies: nx.DiGraph,
    agent: set[str],
    listed: Mapping[str, str],
    module: str,
    body: str,
    where: str,
    element: str,
) -> None:
    if body not in bodies:
        near = difflib.get_close_matches(body, list(bodies), n=3, cutoff=0.5)
        hint = f"Did you mean {', '.join(near)}? " if near else ""
        known = sorted(agent)
        shown = ", ".join(known[:16]) + (", ..." if len(known) > 16 else "")
        raise BodyGraphError(
            f"{where}: {element}: module '{module}' names body '{body}', which is not in the "
            f"model. {hint}Bodies of the agent: {shown}."
        )
    if body in listed:
        raise BodyGraphError(
            f"{where}: {element}: body '{body}' is listed in two modules, '{listed[body]}' "
            f"and '{module}'. Each body belongs to exactly one module: remove it from one."
        )
    if body not in agent:
        raise BodyGraphError(
            f"{where}: {element}: module '{module}' names body '{body}', which is scenery, not "
            "part of the agent (no actuator acts in its top-level subtree: a static body or a "
            "loose prop). Only the agent's bodies form modules: remove it from the partition."
        )
