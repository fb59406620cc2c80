"""What each `cli.py` subcommand does, as library functions that print with rich."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
from rich.console import Console
from rich.table import Table

from flax import nnx

from modular_ppo import analysis
from modular_ppo.body import describe, load_body
from modular_ppo.env import Backend, EnvConfig, describe_observations, make_env, observation_layout
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from modular_ppo.ppo import EvalConfig, make_evaluator
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.transfer import DEFAULT_WARMUP_STEPS, policy_on_body, trained_policies


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
    """The bundled bodies and a few limb-removed variants with their module, actuator and
    DoF counts, and the families that load by name."""
    console = console or Console()
    rows = describe.bodies_table()
    console.print(_table("bundled bodies", [dict(zip(describe.BODIES_HEADER, r)) for r in rows]))
    variants = describe.variants_table()
    console.print(_table("limb-removed variants (examples)",
                         [dict(zip(describe.BODIES_HEADER, r)) for r in variants]))
    console.print(describe.FAMILIES, highlight=False)
    return rows + variants


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
    console.print("task:\n" + describe.task_text(env_config.resolve_task(body.task)),
                  highlight=False)
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


def evaluate_run(run_dir: Path, episodes: int = 16, console: Console | None = None,
                 body: str | None = None, warmup_steps: int = DEFAULT_WARMUP_STEPS,
                 backend: Backend | None = None) -> dict:
    """Deterministic and stochastic returns of a run's latest checkpoint, per module: on
    every body it trained on, or on `body` (zero-shot when the run did not train on it;
    see `modular_ppo.runs.transfer`); on the run's simulator backend, or on `backend`
    (sim-to-sim: the same policy on MJX or MuJoCo's C simulator). Returns body ->
    {"deterministic": metrics, "stochastic": metrics}."""
    console = console or Console()
    run, step = restore_run(run_dir)
    key = jax.random.key(run.config.seed + 2)
    if body is None:
        policies = trained_policies(run)
    else:
        policies = {body: policy_on_body(run, str(run_dir), body, warmup_steps, key)}
    if backend is not None:
        policies = {
            name: dataclasses.replace(policy, env=make_env(policy.body, run.config.env, backend))
            for name, policy in policies.items()
        }
    results = {}
    for name, policy in policies.items():
        results[name] = {}
        for deterministic in (True, False):
            config = EvalConfig(n_envs=episodes, deterministic=deterministic)
            evaluator = make_evaluator(policy.env, policy.graphdef, config)
            results[name]["deterministic" if deterministic else "stochastic"] = to_floats(
                evaluator(policy.network_state, key)
            )
        rows = [
            {"metric": k.removeprefix("episode/"), **{mode: m[k] for mode, m in results[name].items()}}
            for k in results[name]["deterministic"]
        ]
        how = "" if policy.trained_on else (
            f", zero-shot: not trained on, normaliser from {warmup_steps:,} warm-up steps"
        )
        where = f", on the {backend} backend" if backend is not None else ""
        console.print(_table(f"{name} / {run.config.arch} at step {step:,} "
                             f"({episodes} episodes{how}{where})", rows))
    return results


def render_run(run_dir: Path, out: Path, steps: int = 250, console: Console | None = None,
               body: str | None = None) -> Path:
    """A video of the run's latest policy acting deterministically, modules coloured apart:
    on the run's (first) body, or on `body` as `evaluate_run` puts it there."""
    from modular_ppo.runs.episode import record_episode
    from modular_ppo.runs.video import render_frames, write_video

    console = console or Console()
    run, step = restore_run(run_dir)
    key = jax.random.key(run.config.seed)
    if body is None:
        policy = next(iter(trained_policies(run).values()))
    else:
        policy = policy_on_body(run, str(run_dir), body, DEFAULT_WARMUP_STEPS, key)
    qpos = record_episode(policy.env, policy.graphdef, policy.network_state, key, steps)
    path = write_video(render_frames(policy.body, qpos), out, fps=1.0 / policy.env.dt)
    console.print(f"wrote {path} ({steps} steps of the policy at step {step:,} on "
                  f"{policy.body.name})")
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
        if run.bodies:
            rows = [
                {"body": row["body"], **{
                    metric: " → ".join(_cell(row[f"{metric} ({phase})"])
                                       for phase in analysis.PHASES)
                    for metric in ("team return", "mean critic loss")
                }}
                for row in analysis.body_table(run)
            ]
            console.print(_table(f"{run.label}: per body, start → middle → end", rows))
        console.print(f"lagging critic (lowest explained variance at the end): "
                      f"[bold]{analysis.lagging_module(run)}[/]")
    path = analysis.plot_runs(runs, png or runs[0].run_dir / "analysis.png")
    console.print(f"plot: {path}")
    return path

