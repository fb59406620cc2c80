"""Programs compiled ahead, at once: a step made of several jitted programs (the
pipelined backend's) compiles each at its first call, one after another, where XLA could
compile them side by side on the host's cores.

With an `ExportedSteps` store, each program is also kept between runs as a serialized
program (`jax.export`) with the tree of its results, as `exported_step` keeps the jitted
training step: a later run with the same key reads the files instead of tracing and
lowering the programs (most of a run's start once the compilation cache holds them: MJX's
step is thousands of traced operations)."""

from __future__ import annotations

import pickle
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import jax
import numpy as np
from jax import export

from modular_ppo.env.cpu_simulator import usable_cores
from modular_ppo.ppo.exported_step import ExportedSteps, file_digest, write_whole

SUFFIX = ".program"


def avals(tree: Any) -> tuple:
    """`tree`'s structure and each leaf's shape, dtype and weak type: what a compiled
    program checks its arguments against."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((np.shape(x), jax.numpy.result_type(x), getattr(x, "weak_type", False))
                          for x in leaves)


class CompileAhead:
    """Traces jitted functions here (tracing holds Python's lock) and compiles them on a
    pool of threads, one per core this process may use, each at most once per shape.
    exported: keep the traced programs in this store (module docstring)."""

    def __init__(self, exported: ExportedSteps | None = None):
        self._pool = ThreadPoolExecutor(usable_cores(), thread_name_prefix="compile")
        self._programs: dict[tuple, tuple[Future, Any]] = {}
        self.exported = exported

    def submit(self, jitted: Any, *args: Any, n_static: int = 0,
               label: str = "") -> tuple[Future, Any]:
        """`jitted` traced for `args` (its `n_static` static arguments first, as it takes
        them, then arrays or `jax.ShapeDtypeStruct`s): the future of its compiled program,
        which takes the arguments after the static ones, and the shapes of its results
        (`jax.ShapeDtypeStruct`s). label: with an exported store, what tells this program
        apart from the run's others beyond its function's name and argument shapes (the
        store's key names the run's bodies and config): the static arguments' meaning,
        the body whose env the function closes over."""
        key = (jitted, *args[:n_static], *map(avals, args[n_static:]))
        if key not in self._programs:
            program = None
            if self.exported is not None:
                try:
                    program = self._from_store(jitted, args, n_static, label)
                except (ValueError, NotImplementedError):
                    pass  # one that calls back into Python cannot be exported: traced here
            self._programs[key] = program or self._traced(jitted, args)
        return self._programs[key]

    def _traced(self, jitted, args) -> tuple[Future, Any]:
        traced = jitted.trace(*args)
        return self._pool.submit(lambda: traced.lower().compile()), traced.out_info

    def close(self) -> None:
        """Wait for every compile (raising the first error) and free the threads."""
        try:
            for future, _ in self._programs.values():
                future.result()
        finally:
            self._pool.shutdown(cancel_futures=True)

    def _from_store(self, jitted, args, n_static, label) -> tuple[Future, Any]:
        static, dynamic = args[:n_static], args[n_static:]
        leaves, treedef = jax.tree.flatten(dynamic)
        name = getattr(jitted, "__name__", type(jitted).__name__)
        what = f"{self.exported.key}\n{label}\n{name}"
        path = self.exported.folder / f"{file_digest(what, treedef, leaves)}{SUFFIX}"
        stored = _read(path)
        if stored is None or not _fits(stored[0], leaves):
            program, out_tree = _export(jitted, static, treedef, leaves, name)
            serialized = program.serialize()
            write_whole(path, pickle.dumps((serialized, out_tree)))
            # as a later run reads it: the file keeps no weak types, and the next
            # programs' files are named by these results' shapes
            stored = export.deserialize(serialized), out_tree
        program, out_tree = stored

        def run(*dynamic):
            return jax.tree.unflatten(out_tree, program.call(*jax.tree.leaves(dynamic)))

        run.__name__ = name  # the name JAX's logs and cache entries show
        specs = jax.tree.unflatten(treedef, [
            jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
            for a in program.in_avals])
        shapes = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                  for a in program.out_avals]
        return (self._pool.submit(lambda: jax.jit(run).lower(*specs).compile()),
                jax.tree.unflatten(out_tree, shapes))


def _export(jitted, static, treedef, leaves, name) -> tuple[export.Exported, Any]:
    out_tree = []

    def flat(*flat_leaves):
        out = jitted(*static, *jax.tree.unflatten(treedef, flat_leaves))
        out_leaves, tree = jax.tree.flatten(out)
        out_tree.append(tree)
        return out_leaves

    flat.__name__ = name
    specs = [jax.ShapeDtypeStruct(np.shape(x), jax.numpy.result_type(x),
                                  weak_type=getattr(x, "weak_type", False)) for x in leaves]
    program = export.export(jax.jit(flat))(*specs)
    return program, out_tree[0]


def _read(path: Path) -> tuple[export.Exported, Any] | None:
    """The program and its results' tree in `path`; None if there is none or it cannot be
    read back (a file cut short, or written by another JAX or version of this package):
    it is then exported again and replaced."""
    try:
        serialized, out_tree = pickle.loads(path.read_bytes())
        return export.deserialize(bytearray(serialized)), out_tree
    except Exception:  # noqa: BLE001 - any unreadable file is rewritten, never trusted
        return None


def _fits(program: export.Exported, leaves) -> bool:
    return len(program.in_avals) == len(leaves) and all(
        aval.shape == np.shape(leaf) and aval.dtype == jax.numpy.result_type(leaf)
        for aval, leaf in zip(program.in_avals, leaves))
