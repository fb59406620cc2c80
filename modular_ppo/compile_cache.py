"""The persistent compilation cache of the CLI's commands: compile a shape once, load it after.

`train`, `eval` and `render` run inside `persistent_compile_cache(flags, warn)`: JAX keeps
every program that took at least `MIN_COMPILE_S` to compile (the training step, the env
reset, the evaluation, the network's initializers) in a folder, and a later command that
builds the same program (same bodies, network, config, batch shape and versions) loads it
instead of compiling it. That holds for the CPU backend's programs too: they step MuJoCo's
C simulator through host calls (modular_ppo.env.host_call), which name the simulator by a
digest of its model instead of embedding a Python callback, which JAX would not write.
A run also keeps its traced training step in the folder's `exported/` (`exported_folder`;
modular_ppo.ppo.exported_step; the pipelined backend's programs: modular_ppo.ppo.ahead),
so a later run of the same shape does not trace it again.

Where (`cache_dir`): --compile-cache-dir, else JAX's own setting (JAX_COMPILATION_CACHE_DIR,
or what a program that calls `cli.main` set), else `$XDG_CACHE_HOME/modular_ppo/jax`
(`~/.cache/modular_ppo/jax` without XDG_CACHE_HOME). --no-compile-cache (or
JAX_ENABLE_COMPILATION_CACHE=false) turns it off. A folder that cannot be created or written
is not an error: the command warns, names the folder and the fix, and compiles uncached.
The settings are JAX's global configuration; they are restored when the command ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import jax
import tyro
from jax.experimental.compilation_cache import compilation_cache

MIN_COMPILE_S = 0.1
"""Programs compiled faster than this are not written (JAX's default is 1 s): loading one
costs a lookup that a program compiled in a few milliseconds does not save."""

_SETTINGS = ("jax_enable_compilation_cache", "jax_compilation_cache_dir",
             "jax_persistent_cache_min_compile_time_secs",
             "jax_persistent_cache_min_entry_size_bytes")
"""The JAX settings a command changes and restores."""


@dataclasses.dataclass(frozen=True)
class CompileCacheConfig:
    """Where compiled programs are kept between runs (the command's flags)."""

    compile_cache: bool = True
    """Keep compiled programs in a persistent cache, so a later command of the same shape
    loads them instead of compiling (the training step, env reset and evaluation, on
    either backend) and reads the training step instead of tracing it.
    --no-compile-cache compiles everything afresh."""
    compile_cache_dir: Path | None = None
    """The cache folder. Default: JAX_COMPILATION_CACHE_DIR if set, else
    $XDG_CACHE_HOME/modular_ppo/jax (~/.cache/modular_ppo/jax)."""


CompileCacheFlags = Annotated[CompileCacheConfig, tyro.conf.arg(name="")]
"""A command's field of these settings, flags without a prefix: --compile-cache-dir DIR,
--no-compile-cache."""


def cache_dir(flags: CompileCacheConfig) -> str:
    """The cache folder the flags choose (see the module docstring); a path, or a URL such
    as gs://... that JAX's own setting gave."""
    if flags.compile_cache_dir is not None:
        return str(flags.compile_cache_dir.expanduser())
    if jax.config.jax_compilation_cache_dir:
        return jax.config.jax_compilation_cache_dir
    user_cache = os.environ.get("XDG_CACHE_HOME", "")
    if not os.path.isabs(user_cache):  # the XDG spec: unset, empty or relative -> default
        user_cache = "~/.cache"
    return str(Path(user_cache).expanduser() / "modular_ppo" / "jax")


EXPORTED = "exported"
"""The compile cache folder's subfolder of exported training steps."""


def exported_folder() -> Path | None:
    """Where runs keep exported training steps: `EXPORTED` in the compilation cache folder
    JAX is set to use; None when the cache is off or its folder is a URL."""
    folder = jax.config.jax_compilation_cache_dir
    if not jax.config.jax_enable_compilation_cache or not folder or "://" in folder:
        return None
    return Path(folder) / EXPORTED


def _unusable(folder: str) -> str | None:
    """Why `folder` cannot hold the cache (it cannot be created, or a file cannot be written
    in it); None if it can. URLs are JAX's to check."""
    if "://" in folder:
        return None
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


@contextlib.contextmanager
def persistent_compile_cache(
    flags: CompileCacheConfig, warn: Callable[[str], None]
) -> Iterator[str | None]:
    """JAX's persistent compilation cache set up as the flags say, for the duration; yields
    the folder in use, or None when the command compiles uncached (off, or a folder that
    cannot be used: `warn` is called once with why and what to do)."""
    previous = {name: getattr(jax.config, name) for name in _SETTINGS}
    wanted = flags.compile_cache and previous["jax_enable_compilation_cache"]
    folder = cache_dir(flags) if wanted else None
    problem = _unusable(folder) if folder is not None else None
    if problem is not None:
        warn(f"the compile cache folder {folder} cannot be used ({problem}); this command "
             "compiles without it. Give --compile-cache-dir a folder you can write to, or "
             "--no-compile-cache to silence this.")
        folder = None
    settings = {
        "jax_enable_compilation_cache": folder is not None,
        "jax_compilation_cache_dir": folder,
        "jax_persistent_cache_min_compile_time_secs": MIN_COMPILE_S,
        "jax_persistent_cache_min_entry_size_bytes": -1,  # any size; no file-system override
    }
    _apply(settings)
    try:
        yield folder
    finally:
        _apply(previous)


def _apply(settings: dict) -> None:
    """Set JAX's cache settings; JAX reads them when its cache is first used, so it is reset
    to read them again."""
    for name, value in settings.items():
        jax.config.update(name, value)
    compilation_cache.reset_cache()
