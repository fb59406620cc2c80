"""Work started in a background thread now, whose result is waited for where it is needed."""

from __future__ import annotations

import threading
from collections.abc import Callable


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
