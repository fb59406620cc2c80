"""JAX's backend started in a thread while a command line imports the rest.

Starting the backend (a TPU v5e's runtime: 7.4 s on its host) releases Python's lock
(XLA's client constructor does), so it can run beside the imports of Flax, MuJoCo and
this package (~9.5 s there) instead of after them, where a run's first compile waits
for both."""

from __future__ import annotations

import threading

COMMANDS = ("train", "eval", "render")
"""The command lines that use a device: the others never start JAX's backend."""


def start_backend(argv: list[str]) -> None:
    """`jax.devices()` in a thread of its own for a `train`, `eval` or `render` command
    line without --distributed.* flags (JAX's distributed runtime must start before its
    backend: `ppo.start_distributed`). An error starting it is left to the command's own
    first use of JAX, which meets it again (JAX keeps no half-started backend)."""
    if not argv or argv[0] not in COMMANDS or any(
            arg.startswith("--distributed") for arg in argv):
        return
    import jax

    def start() -> None:
        try:
            jax.devices()
        except Exception:  # noqa: BLE001 - raised again where the command starts JAX
            pass

    # not a daemon: the interpreter waits for the runtime's start at exit rather than
    # stopping the thread inside it
    threading.Thread(target=start, name="start JAX").start()
