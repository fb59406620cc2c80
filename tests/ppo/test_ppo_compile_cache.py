"""A second `train` with the same env, network structure and config reuses the compiled
training step: checked by what JAX compiles (its compile log), not by how long it took.

Uses the learning tests' session env and config, so the step compiled here (or by an
earlier test) is the one tests/ppo/test_ppo_learning.py trains with."""

import logging

import jax
import numpy as np

from modular_ppo.ppo import train_from_scratch


def _compiled(records: list[logging.LogRecord]) -> list[str]:
    """The names of the functions JAX compiled, from its log_compiles messages."""
    prefix = "Compiling jit("
    return [r.getMessage()[len(prefix):].split(")")[0] for r in records
            if r.getMessage().startswith(prefix)]


def test_a_second_run_reuses_the_compiled_training_step(learning_env, learning_config,
                                                       make_test_network, caplog):
    def after_one_call(state, metrics):
        return True

    train_from_scratch([(learning_env, make_test_network())], learning_config,
                       on_iteration=after_one_call)
    with jax.log_compiles(), caplog.at_level(logging.WARNING, logger="jax"):
        jax.jit(lambda x: x + 1.0)(np.zeros(3, np.float32))  # the log does show compiles
        result = train_from_scratch([(learning_env, make_test_network(seed=1))],
                                    learning_config, on_iteration=after_one_call)
    compiled = _compiled(caplog.records)
    assert "<lambda>" in compiled and "train_step" not in compiled, compiled
    assert int(result.state.iteration) == learning_config.iterations_per_call
