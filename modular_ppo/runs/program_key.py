"""The key under which a run keeps its exported training step (modular_ppo.ppo.exported_step).

A later run loads the exported step instead of tracing it. It must get the program it would
have traced, so the key names everything the trace reads besides the training state's tree
and shapes:
- the run's settings that build the bodies, envs, networks and PPO step: the config without
  the fields that only say where, how long or how to report (`NOT_IN_PROGRAM`);
- each body's MJCF as the run compiled it (an edited body file gives a new key);
- the code: a digest of every file of this package, and the versions of the libraries
  that trace and lower it;
- JAX's settings (e.g. jax_enable_x64) and the devices the program is lowered for;
- the cores this process may run on: the C simulator's host calls are named with its thread
  count (`env.cpu_simulator.simulator_key`), so a step exported by a run on two cores calls
  a simulator that a run pinned to one core (`taskset -c 0`) never registers.
A custom env (`build_run(config, env)`) is Python the key cannot see: such runs trace.
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

import jax

from modular_ppo.body import BodyGraph
from modular_ppo.env.cpu_simulator import usable_cores
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import config_to_json
from modular_ppo.runs.versions import LIBRARIES, PACKAGE_DIR, library_version

NOT_IN_PROGRAM = ("body", "held_out", "seed", "seeds", "eval", "eval_every_steps",
                  "checkpoint_every_steps", "keep_checkpoints", "video", "video_length",
                  "runs_root", "run_name", "resume", "init_from", "init_optimizer",
                  "distributed", "cache")
"""TrainRunConfig fields the training step does not depend on: the bodies stand in the key
as their MJCF (`body` only names them), held-out bodies are evaluated outside the step,
and the seed gives the state's values, not its shapes."""

_TRACING_LIBRARIES = (*LIBRARIES, "jaxlib", "numpy")

_NOT_TRACING_SETTINGS = ("jax_compilation_cache", "jax_persistent_cache",
                         "jax_enable_compilation_cache", "jax_log", "jax_explain",
                         "jax_dump", "jax_pprint", "jax_debug_log", "jax_logging")
"""Prefixes of JAX settings that say where programs are kept or what is logged."""


def program_key(config: TrainRunConfig, bodies: dict[str, BodyGraph]) -> str:
    """A digest of what the run's training step is traced from (module docstring)."""
    settings = {name: value for name, value in config_to_json(config).items()
                if name not in NOT_IN_PROGRAM}
    parts: dict[str, Any] = {
        "config": settings,
        "bodies": [(name, body.xml) for name, body in bodies.items()],
        "code": code_digest(),
        "libraries": {name: library_version(name) for name in _TRACING_LIBRARIES},
        "jax_settings": {name: repr(value) for name, value in sorted(jax.config.values.items())
                         if not name.startswith(_NOT_TRACING_SETTINGS)},
        "devices": [(d.platform, d.device_kind) for d in jax.devices()],
        "processes": jax.process_count(),
        "host_cores": usable_cores(),
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


@functools.cache
def code_digest() -> str:
    """A digest of every file of this package (not its bytecode caches), read once per
    process."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(str(path.relative_to(PACKAGE_DIR)).encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()
