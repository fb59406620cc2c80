"""What each `cli.py` subcommand does, as library functions that print with rich."""

from __future__ import annotations

from pathlib import Path

import jax
from rich.console import Console
from rich.table import Table

from flax import nnx

from modular_ppo import analysis
from modular_ppo.body import describe, load_body
from modular_ppo.env import EnvConfig, describe_observations, observation_layout
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from modular_ppo.ppo import EvalConfig, make_evaluator
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.build import restore_run


def _table(title: str, rows: list[dict[str, object]]) -> Table:
    table = Table(title=title)
    for i, column in enumerate(rows[0]):
        table.add_column(str(column), justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*(_cell(v) for v in row.values()))
    return table


def _cell(value: object) -> str:
    if isinstance(value, float):
        return "-" if value != value else f"{value:.3g}"
    return str(value)


def list_bodies(console: Console | None = None) -> list[tuple]:
    """The bundled bodies with their module, actuator and DoF counts."""
    console = console or Console()
    rows = describe.bodies_table()
    console.print(_table("bundled bodies", [dict(zip(describe.BODIES_HEADER, r)) for r in rows]))
    return rows


def show_body(name: str, partition: str | None = None, png: Path | None = None,
              console: Console | None = None, env_config: EnvConfig = EnvConfig()) -> None:
    """A body's modules (bodies, joints, actuators, obs / action sizes), its module tree,
    its observation layout and the parameter count of each architecture on it."""
    console = console or Console()
    body = load_body(name, partition)
    layout = observation_layout(body, env_config)
    obs_sizes = {m: sum(block.size for block in blocks) for m, blocks in layout.items()}
    rows = [
        {**dict(zip(describe.MODULE_HEADER, row)), "obs": obs_sizes[row[0]],
         "actions": body.modules[row[0]].n_actuators}
        for row in describe.module_table(body)
    ]
    console.print(_table(f"{body.name}: {len(body.modules)} modules, {body.model.nu} "
                         f"actuators, {body.model.nv} DoF ({body.source})", rows))
    console.print("module tree:\n" + describe.module_tree_text(body), highlight=False)
    console.print("observations:\n" + describe_observations(body, env_config), highlight=False)
    params = {
        arch: count_parameters(
            make_network(body, obs_sizes, NetworkConfig(arch=arch), rngs=nnx.Rngs(0))
        )["total"]
        for arch in ("separate", "shared", "graph", "attention")
    }
    console.print("parameters (default sizes): "
                  + ", ".join(f"{arch} {n:,}" for arch, n in params.items()))
    if png is not None:
        console.print(f"graph drawn to {describe.draw_body_graph(body, png)}")


def evaluate_run(run_dir: Path, episodes: int = 16, console: Console | None = None) -> dict:
    """Deterministic and stochastic returns of a run's latest checkpoint, per module."""
    console = console or Console()
    run, step = restore_run(run_dir)
    results = {}
    for deterministic in (True, False):
        config = EvalConfig(n_envs=episodes, deterministic=deterministic)
        evaluator = make_evaluator(run.env, run.graphdef, config)
        results["deterministic" if deterministic else "stochastic"] = to_floats(
            evaluator(run.state.network, jax.random.key(run.config.seed + 2))
        )
    rows = [
        {"metric": key.removeprefix("episode/"), **{mode: m[key] for mode, m in results.items()}}
        for key in results["deterministic"]
    ]
    console.print(_table(f"{run.body.name} / {run.config.arch} at step {step:,} "
                         f"({episodes} episodes)", rows))
    return results


def render_run(run_dir: Path, out: Path, steps: int = 250, console: Console | None = None) -> Path:
    """A video of the run's latest policy acting deterministically, modules coloured apart."""
    from modular_ppo.runs.episode import record_episode
    from modular_ppo.runs.video import render_frames, write_video

    console = console or Console()
    run, step = restore_run(run_dir)
    qpos = record_episode(run.env, run.graphdef, run.state.network,
                          jax.random.key(run.config.seed), steps)
    path = write_video(render_frames(run.body, qpos), out, fps=1.0 / run.env.dt)
    console.print(f"wrote {path} ({steps} steps of the policy at step {step:,})")
    return path


def analyse_runs(run_dirs: list[Path], png: Path | None = None,
                 console: Console | None = None) -> Path:
    """Per-module tables for each run and one PNG with the runs overlaid."""
    console = console or Console()
    if not run_dirs:
        raise analysis.AnalysisError("give at least one run directory to analyse, e.g. "
                                     "`python cli.py analyse runs/ant-modular/<timestamp>`.")
    runs = [analysis.load_run(d) for d in run_dirs]
    for run in runs:
        rows = [
            {"module": row["module"], **{
                metric: " → ".join(_cell(row[f"{metric} ({phase})"]) for phase in analysis.PHASES)
                for metric in analysis.MODULE_METRICS
            }}
            for row in analysis.module_table(run)
        ]
        console.print(_table(f"{run.label}: start → middle → end of training", rows))
        console.print(f"lagging critic (lowest explained variance at the end): "
                      f"[bold]{analysis.lagging_module(run)}[/]")
    path = analysis.plot_runs(runs, png or runs[0].run_dir / "analysis.png")
    console.print(f"plot: {path}")
    return path

