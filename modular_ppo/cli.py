"""modular_ppo command line: train, eval, render, analyze, bodies.

    modular-ppo train --body ant-modular [--arch shared] [--ppo.total-steps N] [--resume RUN_DIR]
    modular-ppo train --body centipede-4,centipede-6 --arch shared  (one network, several bodies)
    modular-ppo eval --run RUN_DIR [--body OTHER_BODY]
    modular-ppo render --run RUN_DIR --out video.mp4
    modular-ppo analyze RUN_DIR [RUN_DIR ...]
    modular-ppo bodies list | show NAME_OR_PATH [--png FILE]

`python cli.py ...` from a clone is the same.

This module parses the command line and calls the command; the commands and the
dataclasses that configure them live in `modular_ppo.commands` (train:
`modular_ppo.runs.config.TrainRunConfig`). train, eval and render keep what they compile in
a persistent cache (`modular_ppo.compile_cache`: --compile-cache-dir DIR,
--no-compile-cache).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Annotated, Any, Union

from modular_ppo.early_start import start_backend
from modular_ppo.headless import prepare_process

start_backend(sys.argv[1:])  # beside the imports below, where the command uses a device
prepare_process()  # the command line's process: before anything below imports MuJoCo

import tyro  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.markup import escape  # noqa: E402

from modular_ppo import commands  # noqa: E402
from modular_ppo.cli_help import help_registry  # noqa: E402
from modular_ppo.compile_cache import persistent_compile_cache  # noqa: E402
from modular_ppo.errors import ModularPPOError  # noqa: E402
from modular_ppo.ppo import DistributedConfig, start_distributed  # noqa: E402
from modular_ppo.runs.config import TrainRunConfig, check_distributed_backend  # noqa: E402
from modular_ppo.runs.errors import TrainingInterrupted  # noqa: E402
from modular_ppo.runs.resolve import LoadedBodies, train_defaults  # noqa: E402

Bodies = Annotated[
    commands.BodiesListCommand, tyro.conf.subcommand("list")
] | Annotated[commands.BodiesShowCommand, tyro.conf.subcommand("show")]

SUBCOMMANDS: dict[str, tuple[Any, tuple[str, ...], str | None]] = {
    "train": (TrainRunConfig, (), None),
    "eval": (commands.EvalCommand, (), None),
    "render": (commands.RenderCommand, (), None),
    "analyze": (commands.AnalyzeCommand, ("analyse",), None),
    "bodies": (Bodies, (), "List the bundled bodies, or show one body's modules."),
}
"""Subcommand -> the dataclass it parses into, its aliases, and its description where the
dataclass's docstring cannot give it."""


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand; return the process exit code: 0 done, 2 bad input (the message
    says what and how to fix it), 128 + signal number when a signal stopped training."""
    console = Console()
    argv = sys.argv[1:] if argv is None else list(argv)
    loaded = LoadedBodies()
    try:
        start_distributed(_distributed_flags(argv))  # before anything that starts JAX
        train_default = train_defaults(_flag_value(argv, "--body"),
                                       _flag_value(argv, "--partition"), loaded)
    except ModularPPOError as error:
        return _refuse(error, console)
    try:
        command = tyro.cli(
            Union[tuple(  # noqa: UP007  (tyro reads the Union of subcommands)
                Annotated[Any, tyro.conf.subcommand(
                    name=name, constructor=constructor, aliases=aliases or None,
                    description=description,
                    **({"default": train_default} if name == "train" else {}),
                )]
                for name, (constructor, aliases, description) in SUBCOMMANDS.items()
            )],
            args=argv,
            description=__doc__[:__doc__.index("\n\nThis module")],  # the user's part
            registry=help_registry(),
        )
    except SystemExit as exit_:  # tyro has printed the usage error, or the help
        return exit_.code if isinstance(exit_.code, int) else 2
    except ModularPPOError as error:
        return _refuse(error, console)
    try:
        with _compile_cache(command, console):
            _run(command, console, loaded)
    except ModularPPOError as error:
        return _refuse(error, console)
    except TrainingInterrupted as interrupted:
        console.print(f"[bold yellow]{escape(interrupted.message)}[/]", highlight=False)
        return interrupted.exit_code
    except KeyboardInterrupt:
        console.print("[bold yellow]interrupted[/] (Ctrl-C); what was saved before is kept.",
                      highlight=False)
        return 130
    return 0


def run() -> None:
    """The `modular-ppo` console script: `main` on sys.argv, its code as the exit status.
    Output piped into a reader that stops early (`| head`) ends it quietly."""
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no flush error at exit
        code = 1
    sys.exit(code)


def _refuse(error: ModularPPOError, console: Console) -> int:
    console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
    return 2


def _flag_value(argv: list[str], flag: str) -> str | None:
    """The value given to `flag` (as "--flag value" or "--flag=value"), if any: the body
    decides the train subcommand's defaults before tyro parses the rest."""
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None


def _distributed_flags(argv: list[str]) -> DistributedConfig:
    """The --distributed.* flags of a `train` command line, read before tyro parses it:
    JAX's distributed runtime must start before JAX does anything else (even choosing the
    default PPO settings by platform). Values that are not numbers are left to tyro to
    refuse."""
    if not argv or argv[0] != "train":
        return DistributedConfig()

    def number(flag: str) -> int | None:
        value = _flag_value(argv, flag)
        return int(value) if value is not None and value.isdigit() else None

    def seconds(flag: str) -> float:
        value = _flag_value(argv, flag)
        try:
            return float(value)
        except (TypeError, ValueError):
            return DistributedConfig.timeout_s

    distributed = DistributedConfig(
        coordinator_address=_flag_value(argv, "--distributed.coordinator-address"),
        num_processes=number("--distributed.num-processes"),
        process_id=number("--distributed.process-id"),
        auto="--distributed.auto" in argv,
        timeout_s=seconds("--distributed.timeout-s"),
    )
    check_distributed_backend(_flag_value(argv, "--backend") or "auto", distributed)
    return distributed


def _compile_cache(command: object, console: Console) -> contextlib.AbstractContextManager:
    """The persistent compilation cache of a command that compiles (its `cache` flags),
    set up before it starts."""
    if not isinstance(command, (TrainRunConfig, commands.EvalCommand, commands.RenderCommand)):
        return contextlib.nullcontext()
    return persistent_compile_cache(
        command.cache,
        lambda message: console.print(f"[bold yellow]warning:[/] {escape(message)}",
                                      highlight=False),
    )


def _run(command: object, console: Console, loaded: LoadedBodies) -> None:
    if isinstance(command, TrainRunConfig):
        commands.train(command, console, loaded)
    elif isinstance(command, commands.EvalCommand):
        commands.evaluate_run(command, console)
    elif isinstance(command, commands.RenderCommand):
        commands.render_run(command, console)
    elif isinstance(command, commands.AnalyzeCommand):
        commands.analyze_runs(command, console)
    elif isinstance(command, commands.BodiesListCommand):
        commands.list_bodies(console)
    elif isinstance(command, commands.BodiesShowCommand):
        commands.show_body(command, console)


if __name__ == "__main__":
    run()
