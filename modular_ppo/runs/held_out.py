"""Zero-shot evaluation of a run on bodies it does not train on (`--held-out`), at every
evaluation: the current parameters in a network built for each held-out body, its
normalizer statistics from `--new-body-statistics` (`transfer`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
from flax import nnx

from modular_ppo.ppo import EvalConfig, TrainingState, body_key, make_evaluator
from modular_ppo.ppo.sharding import to_local
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.run import Run
from modular_ppo.runs.transfer import DEFAULT_WARMUP_STEPS, network_for_body, new_body_statistics


def evaluator_with_held_out(
    run: Run, config: EvalConfig, ahead: bool = False
) -> Callable[[TrainingState, Any], dict[str, float]]:
    """(state, key) -> the run's evaluation metrics (`Run.evaluator`) and every held-out
    body's (`held_out_evaluator`). ahead: compile the run's own bodies' evaluations ahead
    (`Run.evaluator`)."""
    held_out = held_out_evaluator(run, config)
    trained = run.evaluator(config, ahead)  # after any refusal above: nothing compiles then
    return lambda state, key: {**trained(state, key), **held_out(state, key)}


def held_out_evaluator(
    run: Run, config: EvalConfig
) -> Callable[[TrainingState, Any], dict[str, float]]:
    """(state, key) -> every held-out body's evaluation metrics, named with the body
    ("episode/team_return/<body>", ...; none without --held-out). The held-out bodies'
    networks, envs and compiled evaluators are built once; each call gives their
    normalizers statistics afresh: the current parameters' warm-up, or the training bodies'
    current statistics."""
    held_out = {}
    for name in run.config.held_out_bodies:
        body, env, graphdef, rest = network_for_body(run.config, "--held-out", name, this_run=True)
        held_out[body.name] = (body, env, graphdef, rest, make_evaluator(env, graphdef, config))

    def evaluate(state: TrainingState, key) -> dict[str, float]:
        if not held_out:
            return {}
        params = to_local(state.params)
        networks = state.replace(params=params, groups={
            name: group.replace(network=to_local(group.network))
            for name, group in state.groups.items()})
        now = dataclasses.replace(run, state=networks)
        metrics = {}
        for name, (body, env, graphdef, rest, evaluator) in held_out.items():
            warm_key, eval_key = jax.random.split(key)
            network_state = new_body_statistics(now, body, env, graphdef,
                                                nnx.merge_state(params, rest),
                                                run.config.new_body_statistics,
                                                DEFAULT_WARMUP_STEPS, warm_key)
            metrics.update({body_key(k, name): v for k, v in
                            to_floats(evaluator(network_state, eval_key)).items()})
        return metrics

    return evaluate
