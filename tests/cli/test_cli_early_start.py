"""`early_start.start_backend`: JAX's backend started in a thread beside the command
line's imports, for the commands that use a device, never before --distributed.* joins
JAX's distributed runtime (which must come first)."""

from __future__ import annotations

import threading

import jax
import pytest

from modular_ppo import early_start


@pytest.fixture
def started(monkeypatch):
    """The threads start_backend started (run here, at once)."""
    threads = []

    class Recorded:
        def __init__(self, target, name):
            self.target, self.name = target, name

        def start(self):
            threads.append(self.name)
            self.target()

    monkeypatch.setattr(threading, "Thread", Recorded)
    return threads


@pytest.mark.parametrize("argv", [["train", "--body", "ant-modular"],
                                  ["eval", "--run", "runs/x"], ["render", "--run", "runs/x"]])
def test_the_commands_that_use_a_device_start_it_beside_the_imports(argv, started):
    early_start.start_backend(argv)
    assert started == ["start JAX"]


@pytest.mark.parametrize("argv", [
    [], ["analyze", "runs/x"], ["bodies", "list"], ["--help"],
    ["train", "--body", "ant-modular", "--distributed.coordinator-address", "h:1234"],
    ["train", "--distributed.auto"],
])
def test_other_commands_and_distributed_runs_do_not(argv, started):
    early_start.start_backend(argv)
    assert started == []


def test_an_error_starting_the_backend_is_left_to_the_command(started, monkeypatch):
    def refused():
        raise RuntimeError("Unable to initialize backend 'tpu': in use by another process")

    monkeypatch.setattr(jax, "devices", refused)
    early_start.start_backend(["train"])  # no exception, no traceback from the thread
    assert started == ["start JAX"]
