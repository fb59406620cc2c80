"""`bodies list` and `bodies show`: the bundled bodies, and one body's modules."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import tyro
from flax import nnx
from rich.console import Console

from modular_ppo.body import describe, load_body
from modular_ppo.commands.tables import table
from modular_ppo.env import EnvConfig, describe_observations, observation_layout
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from modular_ppo.networks.registry import ARCHITECTURES
from modular_ppo.output_paths import make_parent, output_file


@dataclasses.dataclass(frozen=True)
class BodiesListCommand:
    """List the bundled bodies."""


@dataclasses.dataclass(frozen=True)
class BodiesShowCommand:
    """Show a body's modules, observation and action sizes, and its module tree."""

    body: Annotated[str, tyro.conf.Positional]
    """A bundled body name or an MJCF path."""
    png: Path | None = None
    """Also draw the body graph, colored by module, to this PNG."""
    partition: str | None = None
    """Partition rule or string; default: the body's own annotation."""


def list_bodies(console: Console | None = None) -> list[tuple]:
    """The bundled bodies and a few limb-removed variants with their module, actuator and
    DoF counts, and the families that load by name."""
    console = console or Console()
    rows = describe.bodies_table()
    console.print(table("bundled bodies", [dict(zip(describe.BODIES_HEADER, r)) for r in rows]))
    variants = describe.variants_table()
    console.print(table("limb-removed variants (examples)",
                        [dict(zip(describe.BODIES_HEADER, r)) for r in variants]))
    console.print(describe.FAMILIES, highlight=False)
    console.print(table(f"SMP / AMORPHEUS benchmark sets ({len(describe.smp_names())} bodies)",
                        [dict(zip(describe.BODY_SETS_HEADER, r)) for r in describe.body_sets_table()]))
    console.print(describe.SMP_BODIES, highlight=False)
    return rows + variants


def show_body(command: BodiesShowCommand, console: Console | None = None,
              env_config: EnvConfig = EnvConfig()) -> None:
    """A body's modules (bodies, joints, actuators, obs / action sizes), its module tree,
    its task, its PPO and architecture presets, its observation layout and the parameter
    count of each architecture on it."""
    console = console or Console()
    png = None if command.png is None else output_file(command.png, "--png", (".png",))
    body = load_body(command.body, command.partition)
    layout = observation_layout(body, env_config)
    obs_sizes = {m: sum(block.size for block in blocks) for m, blocks in layout.items()}
    rows = [
        {**dict(zip(describe.MODULE_HEADER, row)), "obs": obs_sizes[row[0]],
         "actions": body.modules[row[0]].n_actuators}
        for row in describe.module_table(body)
    ]
    console.print(table(f"{body.name}: {len(body.modules)} modules, {body.model.nu} "
                        f"actuators, {body.model.nv} DoF ({body.source})", rows))
    console.print("module tree:\n" + describe.module_tree_text(body), highlight=False)
    console.print("task:\n" + describe.task_text(env_config.resolve_task(body.task)),
                  highlight=False)
    console.print(describe.presets_text(body), highlight=False)
    console.print("observations:\n" + describe_observations(body, env_config), highlight=False)
    params = {
        arch: count_parameters(
            make_network(body, obs_sizes, NetworkConfig(arch=arch), rngs=nnx.Rngs(0))
        )["total"]
        for arch in ARCHITECTURES
    }
    console.print("parameters (default sizes): "
                  + ", ".join(f"{arch} {n:,} ({ARCHITECTURES[arch].needs})"
                              for arch, n in params.items()))
    if png is not None:
        console.print(f"graph drawn to {describe.draw_body_graph(body, make_parent(png))}")
