"""Partition rules: a partition computed from the body tree, for any MJCF.

- "subtrees": the top body is one module and each child subtree of it another (a torso and
  its limbs). Named after the subtree's top body.
- "per_actuated_body": one module per body that carries an actuator (a joint it drives, or
  a site, tendon or adhesion target assigned to it), named after that body. A body without
  actuators joins the module of its nearest ancestor, except that a jointless connector
  with a single child (such as the ant's `front_left_leg`, which only holds the hip in
  place) joins the actuated body below it, so a limb keeps the geometry it is built from.
  The top body always starts a module: observation / value only if it has no actuators.
Both need the agent to be one tree (one top-level body); for several, give a mapping.
"""

from __future__ import annotations

import re

import networkx as nx

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.partition import ANNOTATION, agent_bodies

RULES = ("subtrees", "per_actuated_body")


def rule_mapping(rule: str, bodies: nx.DiGraph, where: str) -> dict[str, list[str]]:
    if rule == "subtrees":
        top = _top_body(bodies, rule, where)
        return _named([top, *bodies.successors(top)])
    if rule == "per_actuated_body":
        return _per_actuated_body(bodies, _top_body(bodies, rule, where))
    raise ValueError(f"not a rule: {rule}")


def _per_actuated_body(bodies: nx.DiGraph, top: str) -> dict[str, list[str]]:
    actuated = [b for b in nx.dfs_preorder_nodes(bodies, top) if bodies.nodes[b]["actuators"]]
    roots = {top: top}
    for body in actuated:
        root = body
        parent = next(bodies.predecessors(root), None)
        while (
            parent is not None
            and parent != top
            and not bodies.nodes[parent]["joints"]
            and not bodies.nodes[parent]["actuators"]
            and bodies.out_degree(parent) == 1
        ):
            root, parent = parent, next(bodies.predecessors(parent), None)
        roots[body] = root
    names = _named(list(roots))
    return {name: [roots[body]] for name, (body,) in names.items()}


def _top_body(bodies: nx.DiGraph, rule: str, where: str) -> str:
    agent = set(agent_bodies(bodies))
    tops = [b for b in bodies if bodies.in_degree(b) == 0 and b in agent]
    if len(tops) != 1:
        raise BodyGraphError(
            f"{where}: the '{rule}' partition needs the actuated agent to be one tree, found "
            f"{len(tops)} top-level bodies with actuators below them: "
            f"{', '.join(tops)}. Pass a partition mapping, or annotate "
            f'the MJCF with <text name="{ANNOTATION}" data="module=body; ..."/>.'
        )
    return tops[0]


def _named(module_bodies: list[str]) -> dict[str, list[str]]:
    """One module per body, named after it with characters unfit for metric keys replaced."""
    names: dict[str, list[str]] = {}
    for body in module_bodies:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", body)
        name, k = base, 2
        while name in names:
            name, k = f"{base}_{k}", k + 1
        names[name] = [body]
    return names
