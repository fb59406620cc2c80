"""The training step kept between runs as a serialized program (`jax.export`).

JAX's persistent compilation cache keeps the compiled training step, but a run still traces
and lowers it first, to find the program's cache key: 6-7 s of a run's start on MJX, whose
physics is thousands of traced operations. `compile_train_step` with an `ExportedSteps`
traces once per key instead: the first run exports the traced step (StableHLO) to a file
and compiles that; a later run reads the file and compiles the same program, which the
compilation cache then loads, without tracing anything of the step.

The file is only as right as its key: `ExportedSteps.key` must name everything the step's
trace depends on besides the state's tree and shapes (which `compile_train_step` adds to the
file name): the groups (bodies, envs, networks) and the config, and the code and libraries
that trace them. `modular_ppo.runs.program_key` builds it for runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path

import jax
from jax import export

from modular_ppo.env.host_call import TARGET as HOST_CALL_TARGET
from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.metrics import Metrics
from modular_ppo.ppo.state import BodyGroup, TrainingState
from modular_ppo.ppo.step import train_step

CompiledStep = Callable[[TrainingState], tuple[TrainingState, Metrics]]

SUFFIX = ".train_step"

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")

_ALLOWED_CALLS = [export.DisabledSafetyCheck.custom_call(HOST_CALL_TARGET)]
"""The CPU backend's host calls into MuJoCo (modular_ppo.env.host_call): a custom call of
this package's own FFI target, registered in every process that builds such an env."""


@dataclasses.dataclass(frozen=True)
class ExportedSteps:
    """Where exported training steps are kept, and what this run's step depends on."""

    folder: Path
    key: str
    """Names everything the traced step depends on but the state's tree and shapes."""


def compile_train_step(groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState,
                       exported: ExportedSteps | None = None) -> CompiledStep:
    """`train_step(groups, config, ·)` compiled for states shaped like `state`.

    exported None: traced, lowered and compiled here. Otherwise the program comes from the
    file for this key and state in `exported.folder` (written first if missing, unreadable
    or not for these shapes), and the state travels as its flat list of leaves: the
    returned function takes and gives `TrainingState`s all the same.
    """
    if exported is None:
        return train_step.lower(groups, config, state).compile()
    leaves, treedef = jax.tree.flatten(state)
    path = exported.folder / f"{file_digest(exported.key, treedef, leaves)}{SUFFIX}"
    program = _read(path)
    if program is None or not _fits(program, leaves):
        try:
            program = _export(groups, config, treedef, leaves)
        except (ValueError, NotImplementedError):
            # A step that calls back into Python (jax.pure_callback: the CPU backend on an
            # accelerator, or a custom env's) or into a foreign custom call cannot be
            # exported; it is compiled directly, where a real error raises again.
            return train_step.lower(groups, config, state).compile()
        write_whole(path, program.serialize())

    def train_step_exported(*leaves):
        return program.call(*leaves)

    train_step_exported.__name__ = "train_step"  # the name JAX's logs and cache entries show
    compiled = jax.jit(train_step_exported).lower(*leaves).compile()

    def step(state: TrainingState) -> tuple[TrainingState, Metrics]:
        new_leaves, metrics = compiled(*jax.tree.leaves(state))
        return jax.tree.unflatten(treedef, new_leaves), metrics

    return step


def _export(groups, config, treedef, leaves) -> export.Exported:
    def train_step_flat(*leaves):
        new_state, metrics = train_step(groups, config, jax.tree.unflatten(treedef, leaves))
        new_leaves, new_treedef = jax.tree.flatten(new_state)
        if new_treedef != treedef:
            raise TypeError("train_step returned a state of another structure than it was "
                            f"given:\n{new_treedef}\nnot\n{treedef}")
        return new_leaves, metrics

    train_step_flat.__name__ = "train_step"
    return export.export(jax.jit(train_step_flat), disabled_checks=_ALLOWED_CALLS)(*leaves)


def file_digest(key: str, treedef, leaves) -> str:
    """The key, the state's tree and its leaves' shapes and dtypes, as a file name. The tree's
    text loses the addresses of objects in its static data (MJX's `Contact` holds numpy
    arrays wrapped for hashing, shown by address), which differ from process to process;
    those arrays come from the body's model, which the key names."""
    avals = [(leaf.shape, str(leaf.dtype), getattr(leaf, "weak_type", False))
             for leaf in leaves]
    tree = _ADDRESS.sub("", str(treedef))
    text = "\n".join([key, tree, repr(avals)])
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _read(path: Path) -> export.Exported | None:
    """The program in `path`; None if there is none or it cannot be read back (a file cut
    short, or written by another JAX): it is then exported again and replaced."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return export.deserialize(bytearray(data))
    except Exception:  # noqa: BLE001 - any unreadable file is rewritten, never trusted
        return None


def _fits(program: export.Exported, leaves) -> bool:
    return len(program.in_avals) == len(leaves) and all(
        aval.shape == leaf.shape and aval.dtype == leaf.dtype
        for aval, leaf in zip(program.in_avals, leaves))


def write_whole(path: Path, data: bytearray) -> None:
    """Write `data` to `path` whole or not at all (a run stopped mid-write, or two runs
    writing the same program, leave no partial file). A folder that cannot be written
    costs later runs the trace, nothing else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".partial")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
        os.chmod(temporary, 0o666 & ~_umask())  # mkstemp's 0600 -> what open() would give
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
