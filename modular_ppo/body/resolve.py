"""Which partition applies to a model: a mapping, a named partition, a rule or the default."""

from __future__ import annotations

from collections.abc import Mapping

import mujoco
import networkx as nx

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.partition import (
    ANNOTATION,
    NAMED_ANNOTATION,
    Partition,
    annotation_element,
    assign_bodies,
    model_texts,
    named_partitions,
    parse_annotation,
)
from modular_ppo.body.rules import RULES, rule_mapping


def resolve_partition(
    model: mujoco.MjModel, bodies: nx.DiGraph, partition: Partition | None, where: str
) -> dict[str, str]:
    """Map each body of the agent to its module name."""
    texts = model_texts(model)
    if partition is None:
        if ANNOTATION not in texts:
            return assign_bodies(
                bodies, rule_mapping("subtrees", bodies, where), where, "rule 'subtrees'"
            )
        element = annotation_element()
        partition = parse_annotation(texts[ANNOTATION], where, element)
        if isinstance(partition, Mapping):
            return assign_bodies(bodies, partition, where, element)
    if isinstance(partition, str):
        return _by_name(model, bodies, texts, partition.strip(), where)
    if not isinstance(partition, Mapping):
        raise BodyGraphError(
            f"{where}: partition must be a name (str) or a mapping module -> [body, ...], not "
            f"{type(partition).__name__}."
        )
    return assign_bodies(bodies, partition, where, "partition mapping")


def _by_name(
    model: mujoco.MjModel, bodies: nx.DiGraph, texts: dict[str, str], name: str, where: str
) -> dict[str, str]:
    if NAMED_ANNOTATION + name in texts:
        element = annotation_element(name)
        mapping = parse_annotation(texts[NAMED_ANNOTATION + name], where, element)
        if isinstance(mapping, str):
            raise BodyGraphError(
                f"{where}: {element} must list modules ('module=body, ...; ...'), not another "
                f"partition name ('{mapping}'). Write out its modules."
            )
        return assign_bodies(bodies, mapping, where, element)
    if name in RULES:
        return assign_bodies(bodies, rule_mapping(name, bodies, where), where, f"rule '{name}'")
    defined = named_partitions(model)
    raise BodyGraphError(
        f"{where}: no partition '{name}' for this body. Partitions it defines: "
        f"{', '.join(defined) or 'none'}; rules for any body: {', '.join(RULES)}. Choose one of "
        f"those, pass a mapping module -> [body, ...], or define it in the MJCF with "
        f'<text name="{NAMED_ANNOTATION}{name}" data="module=body, ...; ..."/>.'
    )
