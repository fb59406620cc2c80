"""Ctrl-C and SIGTERM during training: save a checkpoint, then stop cleanly.

The first SIGINT (Ctrl-C) or SIGTERM (sent by job schedulers before they kill a job) asks
the run to save and stop after the iteration in progress; a second one stops at once,
keeping the checkpoints already saved.
"""

from __future__ import annotations

import signal
import threading

from rich.console import Console


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StopRequests:
    """While active (a context manager, in the main thread), the first stop signal sets
    `signum` and training saves and stops at the end of the iteration; a second one
    raises KeyboardInterrupt where the program is."""

    def __init__(self, console: Console):
        self.console = console
        self.signum: int | None = None
        self._previous: dict[int, object] = {}

    @property
    def requested(self) -> bool:
        return self.signum is not None

    def __enter__(self) -> StopRequests:
        # Python delivers signals to the main thread only; elsewhere the defaults stay.
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._handle) for s in STOP_SIGNALS}
        return self

    def _handle(self, signum: int, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.signum = signum
        self.console.print(
            f"[yellow]{signal.Signals(signum).name}[/]: saving a checkpoint at the end of "
            "this iteration (the first one includes compiling), then stopping. Press Ctrl-C "
            "again to stop at once.",
            highlight=False,
        )

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
