"""`analyze`: per-module critic tables of runs and one plot with the runs overlaid."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated

import tyro
from rich.console import Console

from modular_ppo import analysis
from modular_ppo.commands.tables import cell, table
from modular_ppo.output_paths import make_parent, output_file


@dataclasses.dataclass(frozen=True)
class AnalyzeCommand:
    """Per-module critic losses, explained variance, advantages and returns of runs."""

    runs: Annotated[tuple[Path, ...], tyro.conf.Positional]
    """One or more run directories (overlaid in the plot)."""
    png: Path | None = None
    """Where to write the plot; default <first run>/analysis.png."""


def analyze_runs(command: AnalyzeCommand, console: Console | None = None) -> Path:
    """Per-module tables for each run and one PNG with the runs overlaid."""
    console = console or Console()
    if not command.runs:
        raise analysis.AnalysisError("give at least one run directory to analyze, e.g. "
                                     "`python cli.py analyze runs/ant-modular/<timestamp>`.")
    png = output_file(command.png or Path(command.runs[0]) / "analysis.png", "--png", (".png",))
    runs = [analysis.load_run(d) for d in command.runs]
    for run in runs:
        rows = [
            {"module": row["module"], **{
                metric: " → ".join(cell(row[f"{metric} ({phase})"]) for phase in analysis.PHASES)
                for metric in analysis.MODULE_METRICS
            }}
            for row in analysis.module_table(run)
        ]
        console.print(table(f"{run.label}: start → middle → end of training", rows))
        if run.bodies:
            rows = [
                {"body": row["body"], **{
                    metric: " → ".join(cell(row[f"{metric} ({phase})"])
                                       for phase in analysis.PHASES)
                    for metric in ("team return", "mean critic loss")
                }}
                for row in analysis.body_table(run)
            ]
            console.print(table(f"{run.label}: per body, start → middle → end", rows))
        console.print(f"lagging critic (lowest explained variance at the end): "
                      f"[bold]{analysis.lagging_module(run)}[/]")
    path = analysis.plot_runs(runs, make_parent(png))
    console.print(f"plot: {path}")
    return path
