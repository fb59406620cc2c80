"""Named partition rules."""

from __future__ import annotations

import mujoco
import networkx as nx

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.partition import subtrees_rule

RULES = ("subtrees",)


def rule_mapping(
    rule: str, model: mujoco.MjModel, bodies: nx.DiGraph, where: str
) -> dict[str, list[str]]:
    if rule == "subtrees":
        return subtrees_rule(bodies, where)
    raise BodyGraphError(
        f"{where}: unknown partition rule '{rule}'. Known rules: {', '.join(RULES)}."
    )
