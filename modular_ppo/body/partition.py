"""Partitions: which module each MuJoCo body belongs to.

Sources, most explicit first:
1. a Python mapping `{module_name: [root_body, ...]}`;
2. a rule name (`"subtrees"`);
3. the model's own annotation, a custom text element
   `<custom><text name="modular_ppo:partition" data="torso=torso; leg=leg_root, ..."/></custom>`,
   used when no partition is given, so one MJCF file defines a whole morphology;
4. the default rule, "subtrees": the root body is one module, each child subtree another.

A module is given by its root bodies: it owns them and their descendants down to the next
body that is listed as another module's root.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mujoco
import networkx as nx

from modular_ppo.body.errors import BodyGraphError

ANNOTATION = "modular_ppo:partition"

Partition = str | Mapping[str, Sequence[str]]


def parse_annotation(text: str, where: str) -> dict[str, list[str]]:
    """Parse `"module=body, body; module=body"` into a mapping."""
    mapping: dict[str, list[str]] = {}
    for item in filter(None, (s.strip() for s in text.split(";"))):
        if "=" not in item:
            raise BodyGraphError(
                f"{where}: <text name=\"{ANNOTATION}\">: entry '{item}' has no '='. "
                "Write entries as 'module=root_body[, root_body...]' separated by ';'."
            )
        module, bodies = (s.strip() for s in item.split("=", 1))
        if module in mapping:
            raise BodyGraphError(
                f"{where}: <text name=\"{ANNOTATION}\">: module '{module}' is listed twice; "
                "module names must be unique."
            )
        mapping[module] = [b.strip() for b in bodies.split(",") if b.strip()]
    return mapping


def model_annotation(model: mujoco.MjModel) -> str | None:
    for i in range(model.ntext):
        if mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_TEXT, i) == ANNOTATION:
            start, size = int(model.text_adr[i]), int(model.text_size[i])
            return bytes(model.text_data[start : start + size]).rstrip(b"\0").decode()
    return None


def agent_bodies(bodies: nx.DiGraph) -> list[str]:
    """Bodies that make up the agent: top-level subtrees that contain at least one joint.

    Static scenery (a jointless body welded to the world) belongs to no module.
    """
    keep: list[str] = []
    for top in (b for b in bodies if bodies.in_degree(b) == 0):
        subtree = [top, *nx.descendants(bodies, top)]
        if any(bodies.nodes[b]["joints"] for b in subtree):
            keep.extend(subtree)
    return keep


def subtrees_rule(bodies: nx.DiGraph, where: str) -> dict[str, list[str]]:
    """Root body one module, each child subtree of it another, named by the child body."""
    tops = [b for b in bodies if bodies.in_degree(b) == 0 and b in set(agent_bodies(bodies))]
    if len(tops) != 1:
        raise BodyGraphError(
            f"{where}: the 'subtrees' partition needs exactly one moving top-level body, "
            f"found {len(tops)}: {', '.join(tops) or 'none'}. Give a partition mapping or a "
            f"<text name=\"{ANNOTATION}\"> annotation."
        )
    root = tops[0]
    mapping = {root: [root]}
    mapping.update({child: [child] for child in bodies.successors(root)})
    return mapping


def resolve_partition(
    model: mujoco.MjModel, bodies: nx.DiGraph, partition: Partition | None, where: str
) -> dict[str, str]:
    """Map each agent body name to its module name, checking the partition is valid."""
    from modular_ppo.body.rules import rule_mapping  # rules know the bundled morphologies

    if partition is None:
        annotation = model_annotation(model)
        partition = parse_annotation(annotation, where) if annotation is not None else "subtrees"
    if isinstance(partition, str):
        mapping = rule_mapping(partition, model, bodies, where)
    else:
        mapping = {str(k): list(v) for k, v in partition.items()}
    return assign_bodies(bodies, mapping, where)


def assign_bodies(
    bodies: nx.DiGraph, mapping: Mapping[str, Sequence[str]], where: str
) -> dict[str, str]:
    root_of: dict[str, str] = {}
    for module, roots in mapping.items():
        if not module:
            raise BodyGraphError(f"{where}: a module has an empty name; name every module.")
        if not roots:
            raise BodyGraphError(
                f"{where}: module '{module}' lists no bodies. Give it at least one root body "
                "or remove it."
            )
        for body in roots:
            if body not in bodies:
                known = ", ".join(sorted(bodies)[:12])
                raise BodyGraphError(
                    f"{where}: module '{module}' names body '{body}', which is not in the "
                    f"model. Known bodies: {known}{', ...' if len(bodies) > 12 else ''}."
                )
            if body in root_of:
                raise BodyGraphError(
                    f"{where}: body '{body}' is listed in two modules, '{root_of[body]}' and "
                    f"'{module}'. Each body belongs to exactly one module."
                )
            root_of[body] = module
    body_module: dict[str, str] = {}
    for body in agent_bodies(bodies):
        b = body
        while b not in root_of:
            parents = list(bodies.predecessors(b))
            if not parents:
                raise BodyGraphError(
                    f"{where}: body '{body}' belongs to no module (no ancestor of it is a "
                    "listed root body). Add it, or one of its ancestors, to a module."
                )
            b = parents[0]
        body_module[body] = root_of[b]
    empty = sorted(set(mapping) - set(body_module.values()))
    if empty:
        raise BodyGraphError(
            f"{where}: module(s) {', '.join(empty)} own no body of the moving agent. "
            "Remove them or give them bodies."
        )
    return body_module
