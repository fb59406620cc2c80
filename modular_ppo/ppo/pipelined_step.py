"""The training step of `--backend cpu-pipelined`: each body's rollout collected by
`collect_pipelined` (the host's C simulator and the device overlapped), then the same
update as `train_step` (`step.learn`), jitted on the device; for one training state, or
for several seeds' stacked along a leading axis (`ppo.seeds`), each program then vmapped
over it."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from flax import nnx

from modular_ppo.ppo.config import PPOConfig
from modular_ppo.ppo.errors import BodyGroupError
from modular_ppo.ppo.metrics import Metrics
from modular_ppo.ppo.ahead import CompileAhead, avals
from modular_ppo.ppo.exported_step import ExportedSteps
from modular_ppo.ppo.pipelined_rollout import collect_pipelined, compile_rollout, cpu_physics
from modular_ppo.ppo.rollout import Rollout
from modular_ppo.ppo.state import BodyGroup, TrainingState
from modular_ppo.ppo.step import Collected, combined_metrics, keep_collected, learn


@functools.partial(jax.jit, static_argnums=(0, 1))
def learn_from_rollouts(
    groups: tuple[BodyGroup, ...], config: PPOConfig, state: TrainingState,
    collections: dict[str, tuple[nnx.State, object, object, Rollout]],
) -> tuple[TrainingState, tuple]:
    """`step.learn` from each body's (network state, env state, recurrent state, rollout),
    as `collect_rollout` returns them: one PPO iteration after its rollouts."""
    collected = Collected({}, {}, {}, {}, {}, {})
    for group in groups:
        keep_collected(collected, group.name, state.groups[group.name].recurrent, config,
                       *collections[group.name])
    return learn(groups, config, state, collected)


@functools.partial(jax.jit, static_argnums=(0, 1))
def learn_from_rollouts_seeds(groups: tuple[BodyGroup, ...], config: PPOConfig,
                              states: TrainingState, collections: dict) -> tuple:
    """`learn_from_rollouts` of every seed (a leading seed axis in and out)."""
    return jax.vmap(lambda state, own: learn_from_rollouts(groups, config, state, own))(
        states, collections)


@functools.partial(jax.jit, static_argnums=0)
def _combined(groups: tuple[BodyGroup, ...], state: TrainingState, outputs: list) -> Metrics:
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *outputs)
    return combined_metrics(groups, state, stacked)


@functools.partial(jax.jit, static_argnums=0)
def _combined_seeds(groups: tuple[BodyGroup, ...], states: TrainingState,
                    outputs: list) -> Metrics:
    return jax.vmap(lambda state, own: _combined(groups, state, own))(states, outputs)


def pipelined_train_step(groups: tuple[BodyGroup, ...], config: PPOConfig,
                         state: TrainingState, device_share: float = 0.0,
                         exported: ExportedSteps | None = None, seeded: bool = False):
    """A function state -> (state, metrics) computing what `train_step(groups, config, ·)`
    does, with every body's rollout collected by `collect_pipelined` (so each part of a
    body's environments but the first draws its action noise from a stream of its own:
    pipelined_rollout.py) and the updates jitted apart; its programs compiled here for
    states shaped like `state`, side by side (`CompileAhead`). device_share: of each body's environments,
    about this share is stepped by MJX on the device (`part_sizes`). exported: keep the
    traced programs there under its key, so a later run with the key reads them instead of
    tracing them (`CompileAhead`). BodyGroupError for data parallelism or an env not on
    the CPU backend. seeded: `state` is several seeds' stacked (`seeds.stack`), and so are
    the step's state and metrics; seed k's are those of its state stepped alone."""
    if config.data_parallel:
        raise BodyGroupError("--backend cpu-pipelined runs on one device: drop "
                             "--ppo.data-parallel, or use --backend mjx to split the "
                             "environments over devices.")
    for group in groups:
        cpu_physics(group.env)
    ahead = CompileAhead(exported)
    try:
        rollouts, collections = {}, {}
        for group in groups:
            rollouts[group.name], collections[group.name] = compile_rollout(
                group.env, group.graphdef, state.network_state(group.name),
                state.groups[group.name].env_state, state.groups[group.name].recurrent,
                config.rollout_length, ahead, device_share, label=group.name)
        learn, (next_state, output) = ahead.submit(
            learn_from_rollouts_seeds if seeded else learn_from_rollouts, groups, config,
            state, collections, n_static=2, label="learn")
        combined, _ = ahead.submit(_combined_seeds if seeded else _combined, groups, next_state,
                                   [output] * config.iterations_per_call, n_static=1,
                                   label="metrics")
        _check_same_shapes(state, next_state)
    finally:
        ahead.close()
    programs = {name: compiled() for name, compiled in rollouts.items()}
    learn, combined = learn.result(), combined.result()

    def step(state: TrainingState) -> tuple[TrainingState, Metrics]:
        outputs = []
        for _ in range(config.iterations_per_call):
            collections = {
                group.name: collect_pipelined(
                    group.env, group.graphdef, state.network_state(group.name),
                    state.groups[group.name].env_state, state.groups[group.name].recurrent,
                    config.rollout_length, programs[group.name])
                for group in groups
            }
            state, output = learn(state, collections)
            outputs.append(output)
        return state, combined(state, outputs)

    return step


def _check_same_shapes(state: TrainingState, next_state: TrainingState) -> None:
    """The update's state has the structure, shapes and types of the state it was given,
    so its program takes its own result (a program compiled ahead takes only those)."""
    given, made = avals(state), avals(next_state)
    if given != made:
        raise BodyGroupError(f"the update returns a state of other shapes than it takes: "
                             f"{made} for {given}")
