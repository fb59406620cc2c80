"""runs/background.py: the work runs in another thread, `wait` returns once it is done and
raises what it raised, once."""

import threading

import pytest

from modular_ppo.runs import background
from modular_ppo.runs.background import Background


def test_wait_returns_once_the_work_ran_in_another_thread():
    ran_in = []
    Background(lambda: ran_in.append(threading.current_thread().name), "work").wait()
    assert ran_in == ["work"]


def test_wait_raises_the_works_error_once():
    def fail():
        raise ValueError("cannot compile")

    pending = Background(fail, "failing work")
    with pytest.raises(ValueError, match="cannot compile"):
        pending.wait()
    pending.wait()  # already reported


@pytest.mark.parametrize(("cores", "spare"), [(1, False), (2, False), (4, True), (13, True)])
def test_work_is_started_ahead_only_with_cores_to_spare(cores, spare, monkeypatch):
    monkeypatch.setattr(background, "usable_cores", lambda: cores)
    assert background.cores_to_spare() is spare
