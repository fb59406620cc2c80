"""Programs compiled ahead, at once: a step made of several jitted programs (the
pipelined backend's) compiles each at its first call, one after another, where XLA could
compile them side by side on the host's cores."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import jax
import numpy as np

from modular_ppo.env.cpu_simulator import usable_cores


def avals(tree: Any) -> tuple:
    """`tree`'s structure and each leaf's shape, dtype and weak type: what a compiled
    program checks its arguments against."""
    leaves, treedef = jax.tree.flatten(tree)
    return treedef, tuple((np.shape(x), jax.numpy.result_type(x), getattr(x, "weak_type", False))
                          for x in leaves)


class CompileAhead:
    """Traces jitted functions here (tracing holds Python's lock) and compiles them on a
    pool of threads, one per core this process may use, each at most once per shape."""

    def __init__(self):
        self._pool = ThreadPoolExecutor(usable_cores(), thread_name_prefix="compile")
        self._programs: dict[tuple, tuple[Future, Any]] = {}

    def submit(self, jitted: Any, *args: Any, n_static: int = 0) -> tuple[Future, Any]:
        """`jitted` traced for `args` (its `n_static` static arguments first, as it takes
        them, then arrays or `jax.ShapeDtypeStruct`s): the future of its compiled program,
        which takes the arguments after the static ones, and the shapes of its results
        (`jax.ShapeDtypeStruct`s)."""
        key = (jitted, *args[:n_static], *map(avals, args[n_static:]))
        if key not in self._programs:
            traced = jitted.trace(*args)
            future = self._pool.submit(lambda: traced.lower().compile())
            self._programs[key] = future, traced.out_info
        return self._programs[key]

    def close(self) -> None:
        """Wait for every compile (raising the first error) and free the threads."""
        try:
            for future, _ in self._programs.values():
                future.result()
        finally:
            self._pool.shutdown(cancel_futures=True)
