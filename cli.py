"""modular_ppo command line: train, eval, render, analyse, bodies.

    python cli.py train --body ant-modular [--arch shared] [--ppo.total-steps N] [--resume RUN_DIR]
    python cli.py train --body centipede-4,centipede-6 --arch shared  (one network, several bodies)
    python cli.py eval --run RUN_DIR [--body OTHER_BODY]
    python cli.py render --run RUN_DIR --out video.mp4
    python cli.py analyse RUN_DIR [RUN_DIR ...]
    python cli.py bodies list | show NAME_OR_PATH [--png FILE]
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import sys
from pathlib import Path
from typing import Annotated, Any, Union

import modular_ppo  # noqa: F401  (chooses the headless GL backend before mujoco loads)

with contextlib.redirect_stdout(io.StringIO()):  # mjx prints a notice about optional warp
    import mujoco.mjx  # noqa: F401

import tyro  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402

from modular_ppo import commands  # noqa: E402
from modular_ppo.env import Backend  # noqa: E402
from modular_ppo.errors import ModularPPOError  # noqa: E402
from modular_ppo.runs.config import TrainRunConfig, train_defaults  # noqa: E402
from modular_ppo.runs.train_run import TrainingInterrupted, run_training  # noqa: E402


@dataclasses.dataclass(frozen=True)
class Eval:
    """Evaluate a run's latest checkpoint: deterministic and stochastic returns per module,
    on the bodies it trained on or zero-shot on another."""

    run: Path
    """The run directory (runs/<body>/<timestamp>)."""
    episodes: int = 16
    """Episodes per mode."""
    body: str | None = None
    """Evaluate on this body instead (bundled name or MJCF path). One the run did not train
    on gets the run's parameters unchanged in a network built for it (the run's --arch and
    max sizes: shared, graph or attention runs only)."""
    warmup_steps: int = 4096
    """With --body a body the run did not train on: env steps of the policy acting on it
    that estimate its observation normaliser statistics (no reward used); 0: none."""
    backend: Backend | None = None
    """Evaluate on this simulator instead of the run's own ("mjx" or "cpu"): the same
    policy on MJX and on MuJoCo's C simulator (sim-to-sim)."""


@dataclasses.dataclass(frozen=True)
class Render:
    """Render a video of a run's latest policy, modules coloured apart."""

    run: Path
    """The run directory."""
    out: Path = Path("video.mp4")
    """Output file, .mp4 or .gif."""
    steps: int = 250
    """Control steps to render."""
    body: str | None = None
    """Render the policy on this body (default: the run's first body); see `eval --body`."""


@dataclasses.dataclass(frozen=True)
class Analyse:
    """Per-module critic losses, explained variance, advantages and returns of runs."""

    runs: Annotated[tuple[Path, ...], tyro.conf.Positional]
    """One or more run directories (overlaid in the plot)."""
    png: Path | None = None
    """Where to write the plot; default <first run>/analysis.png."""


@dataclasses.dataclass(frozen=True)
class BodiesList:
    """List the bundled bodies."""


@dataclasses.dataclass(frozen=True)
class BodiesShow:
    """Show a body's modules, observation and action sizes, and its module tree."""

    body: Annotated[str, tyro.conf.Positional]
    """A bundled body name or an MJCF path."""
    png: Path | None = None
    """Also draw the body graph, coloured by module, to this PNG."""
    partition: str | None = None
    """Partition rule or string; default: the body's own annotation."""


Bodies = Annotated[
    BodiesList, tyro.conf.subcommand("list")
] | Annotated[BodiesShow, tyro.conf.subcommand("show")]


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; return the process exit code: 0 done, 2 bad input (the message
    says what and how to fix it), 128 + signal number when a signal stopped training."""
    console = Console()
    argv = sys.argv[1:] if argv is None else argv
    try:
        train_default = train_defaults(_flag_value(argv, "--body"))
    except ModularPPOError as error:
        console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        return 2
    subcommands = {"train": TrainRunConfig, "eval": Eval, "render": Render,
                   "analyse": Analyse, "bodies": Bodies}
    try:
        command = tyro.cli(
            Union[tuple(  # noqa: UP007  (tyro reads the Union of subcommands)
                Annotated[Any, tyro.conf.subcommand(
                    name=name, constructor=constructor,
                    **({"default": train_default} if name == "train" else {}),
                )]
                for name, constructor in subcommands.items()
            )],
            args=argv,
            description=__doc__,
        )
    except SystemExit as exit_:  # tyro has printed the usage error, or the help
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        _run(command, console)
    except ModularPPOError as error:
        console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
        return 2
    except TrainingInterrupted as interrupted:
        console.print(f"[bold yellow]{escape(interrupted.message)}[/]", highlight=False)
        return interrupted.exit_code
    except KeyboardInterrupt:
        console.print("[bold yellow]interrupted[/] (Ctrl-C); what was saved before is kept.",
                      highlight=False)
        return 130
    return 0


def _flag_value(argv: list[str], flag: str) -> str | None:
    """The value given to `flag` (as "--flag value" or "--flag=value"), if any: the body
    decides the train subcommand's defaults before tyro parses the rest."""
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _run(command: object, console: Console) -> None:
    if isinstance(command, TrainRunConfig):
        run_training(command, console)
    elif isinstance(command, Eval):
        commands.evaluate_run(command.run, command.episodes, console, command.body,
                              command.warmup_steps, command.backend)
    elif isinstance(command, Render):
        commands.render_run(command.run, command.out, command.steps, console, command.body)
    elif isinstance(command, Analyse):
        commands.analyse_runs(list(command.runs), command.png, console)
    elif isinstance(command, BodiesList):
        commands.list_bodies(console)
    elif isinstance(command, BodiesShow):
        commands.show_body(command.body, command.partition, command.png, console)


if __name__ == "__main__":
    sys.exit(main())
