"""Work started in a background thread now, whose result is waited for where it is needed."""

from __future__ import annotations

import threading
from collections.abc import Callable

from modular_ppo.env.cpu_simulator import usable_cores


class Background:
    """`work()` running in a thread of its own. Not a daemon thread: the interpreter waits for
    it at exit, since one killed inside XLA's compiler would abort the process.

    `wait()` blocks until it has finished and raises what it raised, once; later calls
    return at once.
    """

    def __init__(self, work: Callable[[], object], name: str):
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name)
        self._thread.start()

    def _run(self, work: Callable[[], object]) -> None:
        try:
            work()
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            self._error = error

    def wait(self) -> None:
        self._thread.join()
        error, self._error = self._error, None
        if error is not None:
            raise error


def cores_to_spare(needed: int = 4) -> bool:
    """Whether this process may run on at least `needed` cores: where it may not (a 2-core
    CI machine, a process pinned with `taskset`), a second compile beside the training
    step's only takes cores from it, and work started ahead that a run never uses (one that
    fails or stops before its first evaluation) is a cost."""
    return usable_cores() >= needed
