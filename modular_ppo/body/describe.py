"""Plain-data descriptions of bodies for the CLI (`cli.py bodies list|show`) and a picture.

Rows are tuples of str / int so any renderer (rich, csv, a test) can use them.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import networkx as nx

from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.library import bundled_names, load_body
from modular_ppo.body.smp import BODY_SETS, smp_names
from modular_ppo.body.smp import PREFIX as SMP_PREFIX
from modular_ppo.body.task import TaskSpec
from modular_ppo.body.variants import DEFAULT_VARIANTS

BODIES_HEADER = ("name", "modules", "actuators", "DoF")
FAMILIES = (
    "Families, for transfer studies (any member loads by name): centipede-N (N legs, even, "
    ">= 4), swimmer-N (N segments, >= 2), and any body above without some of its limbs, "
    "<body>-without-<module>[-without-<module>...] (e.g. walker2d-modular-without-foot_left; "
    "a module goes with the modules below it)."
)
SMP_BODIES = (
    "The SMP / AMORPHEUS morphologies (docs/smp.md) load as smp-<file> (e.g. "
    "smp-walker_2_main, `bodies show` one); their benchmark sets train as one run by name "
    "(`train --body smp-walker++`; held-out sets end in :held-out)."
)
MODULE_HEADER = ("module", "bodies", "joints", "actuators", "parent")


BODY_SETS_HEADER = ("set", "bodies", "of which")


def body_sets_table() -> list[tuple[str, int, str]]:
    """One row per named benchmark set of the SMP / AMORPHEUS morphologies (`BODY_SETS`):
    (name, body count, how many of each kind, e.g. "cheetah 12, walker 4")."""
    rows = []
    for name, members in BODY_SETS.items():
        kinds = Counter(m.removeprefix(SMP_PREFIX).split("_")[0] for m in members)
        rows.append((name, len(members), ", ".join(f"{k} {n}" for k, n in kinds.items())))
    return rows


def bodies_table(names: list[str] | None = None) -> list[tuple[str, int, int, int]]:
    """One row per body (default: the bundled ones): (name, modules, actuators, DoF = nv)."""
    rows = []
    for name in bundled_names() if names is None else names:
        body = load_body(name)
        rows.append((name, len(body.modules), int(body.model.nu), int(body.model.nv)))
    return rows


def variants_table() -> list[tuple[str, int, int, int]]:
    """`bodies_table` of a few limb-removed variants (`variants.DEFAULT_VARIANTS`)."""
    return bodies_table(list(DEFAULT_VARIANTS))


def module_table(body: BodyGraph) -> list[tuple[str, str, str, str, str]]:
    """One row per module, in module order: (module, bodies, joints, actuators, parent);
    lists are comma-separated names, "-" for none."""
    return [
        (
            m.name,
            ", ".join(m.bodies),
            ", ".join(m.joints) or "-",
            ", ".join(m.actuators) or "-",
            m.parent or "-",
        )
        for m in body.modules.values()
    ]


def task_text(task: TaskSpec) -> str:
    """The task's definition, one `field: value` line each (`bodies show`)."""
    return "\n".join(f"  {name:<26} {value}" for name, value in task.summary().items())


def presets_text(body: BodyGraph) -> str:
    """The body's `modular_ppo:ppo_preset` (and `ppo_preset_accelerator` where it has one)
    and `modular_ppo:arch_preset`, a line each (`bodies show`)."""
    settings, accelerator = ("; ".join(f"{field}={value}" for field, value in preset.items())
                             for preset in (body.ppo_preset, body.ppo_preset_accelerator))
    return (f"PPO preset (modular_ppo:ppo_preset): {settings or 'none, the CLI defaults'}\n"
            + (f"on a GPU or TPU (modular_ppo:ppo_preset_accelerator): {accelerator}\n"
               if accelerator else "")
            + "architecture preset (modular_ppo:arch_preset): "
            f"{body.arch_preset or 'none, the CLI default'}")


def module_tree_text(body: BodyGraph) -> str:
    """The module tree as indented text, each line `name (n actuators): bodies`."""
    lines: list[str] = []

    def visit(name: str, depth: int) -> None:
        module = body.modules[name]
        lines.append(
            f"{'  ' * depth}{name} ({module.n_actuators} actuators): {', '.join(module.bodies)}"
        )
        for child in module.children:
            visit(child, depth + 1)

    for name, module in body.modules.items():
        if module.parent is None:
            visit(name, 0)
    return "\n".join(lines)


def draw_body_graph(body: BodyGraph, png_path: str | Path) -> Path:
    """Draw the body tree, bodies colored by module, to a PNG (matplotlib, Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = body.bodies.subgraph(b for b, d in body.bodies.nodes(data=True) if d["module"])
    positions = _tree_layout(graph)
    palette = plt.get_cmap("tab10" if len(body.modules) <= 10 else "tab20")
    color = {m: palette(i % palette.N) for i, m in enumerate(body.modules)}
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(graph)), 6.0))
    nx.draw_networkx(
        graph,
        pos=positions,
        ax=ax,
        node_color=[color[graph.nodes[b]["module"]] for b in graph],
        node_size=900,
        font_size=7,
        arrows=False,
    )
    for module, c in color.items():
        ax.scatter([], [], color=c, label=module)
    ax.legend(title="module", loc="best", fontsize=7)
    ax.set_title(f"{body.name}: {len(body.modules)} modules, {body.model.nu} actuators")
    ax.axis("off")
    path = Path(png_path)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return path


def _tree_layout(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Top-down tree layout: leaves spread evenly, parents centered over their children."""
    positions: dict[str, tuple[float, float]] = {}
    next_x = [0.0]

    def place(node: str, depth: int) -> float:
        children = list(graph.successors(node))
        if children:
            x = sum(place(c, depth + 1) for c in children) / len(children)
        else:
            x, next_x[0] = next_x[0], next_x[0] + 1.0
        positions[node] = (x, -float(depth))
        return x

    for root in (n for n in graph if graph.in_degree(n) == 0):
        place(root, 0)
    return positions
