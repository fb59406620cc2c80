"""A body with other solver settings than its MJCF file declares: `PhysicsOptions`, applied
by `with_physics` (per-body physics settings: docs/physics.md).

A body file declares its physics in MJCF's own `<option>` (timestep, solver, iterations,
ls_iterations; `<flag NAME="disable"/>` children) and `<contact><exclude>` elements, as its
task in `modular_ppo:` annotations. `with_physics` rebuilds the body with some of the
`<option>` settings replaced, for a run or a measurement that wants another trade-off
between step cost and accuracy (benchmarks/physics_settings.py measures both).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import mujoco

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph

SOLVERS = {"Newton": mujoco.mjtSolver.mjSOL_NEWTON, "CG": mujoco.mjtSolver.mjSOL_CG}
"""The solvers MJX runs, by their MJCF names."""

FLAGS = {bit.name.removeprefix("mjDSBL_").lower(): bit for bit in (
    mujoco.mjtDisableBit.mjDSBL_EULERDAMP, mujoco.mjtDisableBit.mjDSBL_CLAMPCTRL,
    mujoco.mjtDisableBit.mjDSBL_WARMSTART, mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS,
    mujoco.mjtDisableBit.mjDSBL_REFSAFE, mujoco.mjtDisableBit.mjDSBL_FILTERPARENT,
)}
"""MJCF `<flag>` names (lower case, as in `<flag eulerdamp="disable"/>`) of the disable bits
a body may switch here: those that change cost or results without removing a kind of
constraint the body relies on."""

MAX_ITERATIONS = 1000


@dataclasses.dataclass(frozen=True)
class PhysicsOptions:
    """Replacements for a body file's `<option>` settings; None / empty keeps the file's."""

    solver: str | None = None
    """"Newton" or "CG"."""
    iterations: int | None = None
    """Solver iterations per physics step, 1 to 1000."""
    ls_iterations: int | None = None
    """Line-search iterations per solver iteration, 1 to 1000."""
    flags: tuple[tuple[str, bool], ...] = ()
    """(flag name in `FLAGS`, disabled?) pairs: `("eulerdamp", False)` enables Euler damping."""

    def label(self) -> str:
        """"solver=CG iterations=4 eulerdamp=enable": the settings replaced, or "declared"."""
        parts = [f"{k}={v}" for k in ("solver", "iterations", "ls_iterations")
                 if (v := getattr(self, k)) is not None]
        parts += [f"{name}={'disable' if off else 'enable'}" for name, off in self.flags]
        return " ".join(parts) or "declared"


def parse_options(text: str) -> PhysicsOptions:
    """`PhysicsOptions` from "key=value" words separated by spaces or commas ("solver=CG
    iterations=4 eulerdamp=enable"); "declared" or "" for none. Raises BodyGraphError
    naming the bad word."""
    values: dict[str, object] = {"flags": ()}
    for word in filter(None, text.replace(",", " ").split()):
        if word == "declared":
            continue
        key, _, value = word.partition("=")
        if key == "solver":
            values["solver"] = value
        elif key in ("iterations", "ls_iterations") and value.isdigit():
            values[key] = int(value)
        elif key in FLAGS and value in ("enable", "disable"):
            values["flags"] = (*values["flags"], (key, value == "disable"))
        else:
            raise BodyGraphError(
                f'physics setting "{word}": write solver=Newton|CG, iterations=N, '
                f"ls_iterations=N or FLAG=enable|disable with FLAG one of {', '.join(FLAGS)}."
            )
    options = PhysicsOptions(**values)
    check_options(options)
    return options


def check_options(options: PhysicsOptions) -> None:
    """Raises BodyGraphError naming the first setting out of range."""
    if options.solver is not None and options.solver not in SOLVERS:
        raise BodyGraphError(
            f'solver "{options.solver}": MJX runs "Newton" and "CG". Use one of them.')
    for key in ("iterations", "ls_iterations"):
        value = getattr(options, key)
        if value is not None and not 1 <= value <= MAX_ITERATIONS:
            raise BodyGraphError(f"{key} = {value}: give a whole number from 1 to {MAX_ITERATIONS}.")
    for name, _ in options.flags:
        if name not in FLAGS:
            raise BodyGraphError(f'flag "{name}": use one of {", ".join(FLAGS)}.')


def with_physics(body: BodyGraph, options: PhysicsOptions) -> BodyGraph:
    """`body` with the `<option>` settings `options` replaces: its compiled model copied with
    those settings (so nothing else changes, to the last bit), its MJCF (`xml`, what
    checkpoints and workers rebuild it from) carrying them too; partition, task and source
    kept. `body` itself where `options` replaces nothing."""
    check_options(options)
    if options == PhysicsOptions():
        return body
    spec = mujoco.MjSpec.from_string(body.xml)
    model = copy.copy(body.model)
    for option in (spec.option, model.opt):
        _apply(option, options)
    rebuilt = BodyGraph.from_mjcf(spec, None, body.name)
    return dataclasses.replace(rebuilt, model=model, source=body.source)


def _apply(option: Any, options: PhysicsOptions) -> None:
    """Write `options` into a spec's `option` or a model's `opt` (two types, the same fields)."""
    if options.solver is not None:
        option.solver = SOLVERS[options.solver]
    if options.iterations is not None:
        option.iterations = options.iterations
    if options.ls_iterations is not None:
        option.ls_iterations = options.ls_iterations
    for name, disabled in options.flags:
        bit = int(FLAGS[name])
        option.disableflags = option.disableflags | bit if disabled else option.disableflags & ~bit
