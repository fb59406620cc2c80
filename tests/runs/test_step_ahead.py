"""A run's training step compiled while the run builds (`new_run(..., compile_ahead=True)`,
`ppo.StepAhead`): the run trains with that program, to the same state as a run compiling
its step when training starts; a state of other shapes, or a build that fails, leaves the
compile (and its error) to where training starts."""

from __future__ import annotations

import dataclasses
import sys
import threading

import jax
import numpy as np
import pytest
from tiny_body import tiny_run_config

from modular_ppo.ppo import StepAhead
from modular_ppo.runs.build import new_run
from modular_ppo.runs.resolve import resolve_train_config

ITERATIONS = 2


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    # the pipelined step (the chip's); its device share's programs compile alike, slower
    return tiny_run_config(tmp_path_factory, backend="cpu-pipelined")


@pytest.fixture
def compiled_by_train(monkeypatch):
    """The threads in which `train` itself compiled a training step."""
    module = sys.modules["modular_ppo.ppo.train"]
    threads, compile_step = [], module.compile_step

    def recorded(*args, **kwargs):
        threads.append(threading.current_thread().name)
        return compile_step(*args, **kwargs)

    monkeypatch.setattr(module, "compile_step", recorded)
    return threads


def fitted(run):
    rows = []
    return run.fit(lambda state, metrics: rows.append(metrics) or len(rows) >= ITERATIONS)


def test_the_run_trains_with_the_step_compiled_ahead_to_the_same_state(config,
                                                                       compiled_by_train):
    ahead = new_run(resolve_train_config(config), compile_ahead=True)
    assert isinstance(ahead.step_ahead, StepAhead)
    trained_ahead = fitted(ahead)
    assert compiled_by_train == []

    plain = new_run(resolve_train_config(config))
    assert plain.step_ahead is None
    trained = fitted(plain)
    assert compiled_by_train == ["MainThread"]

    assert int(trained_ahead.steps) == int(trained.steps) == ITERATIONS * 4 * 4
    for a, b in zip(jax.tree.leaves(trained_ahead.params), jax.tree.leaves(trained.params),
                    strict=True):
        np.testing.assert_array_equal(a, b)

    # a state of other shapes (here more envs) gets no program compiled for others
    wider = new_run(resolve_train_config(dataclasses.replace(
        config, ppo=dataclasses.replace(config.ppo, n_envs=8))))
    assert ahead.step_ahead.step_for(wider.state) is None


def test_a_failed_build_leaves_the_compile_and_its_error_to_where_training_starts(config):
    def broken_build():
        raise ValueError("a body the build refuses")

    assert StepAhead(broken_build, config.ppo).step_for(None) is None
