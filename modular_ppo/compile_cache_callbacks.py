"""JAX's persistent compilation cache for programs that call back into Python.

JAX (0.10) never writes a program with host callbacks (`jax.pure_callback`) to its
persistent cache ("Not writing persistent cache entry ... because it uses host
callbacks"), because it loads cached programs without them. The CPU backend steps MuJoCo's
C simulator from such callbacks inside the training step, the env reset and the
evaluation, so without this every run compiles them again (12 s for the ant's training
step on one core).

Why loading them is sound: a compiled program calls its callbacks by their position in the
list its lowering made (the custom call's `index` attribute), and nothing of the Python
functions themselves is in the program. The cache key is a hash of the lowered program,
those positions included, and the key is computed from a fresh lowering in the process
that looks the program up; that lowering made its own list, in the same order, of this
process's functions. So `cache_programs_with_callbacks` lets JAX write such programs like
any other, and loads a cached one with the callbacks of the lowering that looked it up
(`Client.deserialize_executable(..., host_callbacks=...)`, the argument JAX's cache does
not pass).

It replaces three private JAX functions while active. A JAX whose functions differ from the
ones this was written against is left alone (`supported()` is False): programs with
callbacks are then compiled by every run, as before.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from jax._src import compilation_cache, compiler

_EXPECTED = {
    (compiler, "compile_or_get_cached"): ("backend", "computation", "devices",
                                          "compile_options", "host_callbacks",
                                          "executable_devices"),
    (compiler, "_cache_write"): ("cache_key", "compile_time_secs", "module_name", "backend",
                                 "executable", "host_callbacks"),
    (compilation_cache, "get_executable_and_time"): ("cache_key", "compile_options",
                                                     "backend", "executable_devices"),
    (compilation_cache, "_get_cache"): ("backend",),
    (compilation_cache, "decompress_executable"): ("executable",),
    (compilation_cache, "extract_executable_and_time"): ("executable_and_time",),
}
"""The JAX functions used or replaced here, and the leading parameters they must have."""

_callbacks: contextvars.ContextVar[Sequence[Any]] = contextvars.ContextVar(
    "modular_ppo_host_callbacks", default=())
"""The host callbacks of the program being compiled or looked up in this thread."""


def supported() -> bool:
    """Whether this JAX has the private functions this module relies on, as expected."""
    for (module, name), parameters in _EXPECTED.items():
        function = getattr(module, name, None)
        if function is None:
            return False
        try:
            given = tuple(inspect.signature(function).parameters)
        except (TypeError, ValueError):
            return False
        if given[:len(parameters)] != parameters:
            return False
    return True


@contextlib.contextmanager
def cache_programs_with_callbacks() -> Iterator[bool]:
    """While active, JAX's persistent cache writes and loads programs with host callbacks
    (see the module docstring). Yields whether it is active: False, and nothing changed,
    on a JAX this does not support."""
    if not supported():
        yield False
        return
    replaced = {
        (compiler, "compile_or_get_cached"): _remembering_callbacks(compiler.compile_or_get_cached),
        (compiler, "_cache_write"): _writing_with_callbacks(compiler._cache_write),
        (compilation_cache, "get_executable_and_time"): _executable_and_time,
    }
    originals = {where: getattr(*where) for where in replaced}
    for (module, name), function in replaced.items():
        setattr(module, name, function)
    try:
        yield True
    finally:
        for (module, name), function in originals.items():
            setattr(module, name, function)


def _remembering_callbacks(compile_or_get_cached: Callable) -> Callable:
    def remembering(backend, computation, devices, compile_options, host_callbacks,
                    *args, **kwargs):
        token = _callbacks.set(tuple(host_callbacks))
        try:
            return compile_or_get_cached(backend, computation, devices, compile_options,
                                         host_callbacks, *args, **kwargs)
        finally:
            _callbacks.reset(token)

    return remembering


def _writing_with_callbacks(cache_write: Callable) -> Callable:
    def writing(cache_key, compile_time_secs, module_name, backend, executable,
                host_callbacks, *args, **kwargs):
        # JAX's own checks (process 0 only, minimum compile time) still apply.
        return cache_write(cache_key, compile_time_secs, module_name, backend, executable,
                           (), *args, **kwargs)

    return writing


def _executable_and_time(cache_key, compile_options, backend, executable_devices):
    """JAX's `get_executable_and_time`, loading with the remembered host callbacks. JAX's
    caller turns its exceptions into a warning and a compile."""
    cache = compilation_cache._get_cache(backend)
    if cache is None:
        return None, None
    entry = cache.get(cache_key)
    if entry is None:
        return None, None
    serialized, compile_time = compilation_cache.extract_executable_and_time(
        compilation_cache.decompress_executable(entry))
    executable = backend.deserialize_executable(
        serialized, executable_devices, compile_options, host_callbacks=list(_callbacks.get()))
    return executable, compile_time
