"""Building a run from its config, and rebuilding a saved run from its directory."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
from flax import nnx
from rich.console import Console

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.compile_cache import exported_folder
from modular_ppo.env import default_backend, make_env
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import MaxSizeTooSmall, NetworkConfig, count_parameters, make_network
from modular_ppo.ppo import (
    BodyGroup,
    EvalConfig,
    ExportedSteps,
    OnIteration,
    TrainingState,
    body_key,
    for_body,
    make_evaluator,
    new_training_state,
    train,
)
from modular_ppo.ppo.sharding import to_local
from modular_ppo.runs.checkpoint import Checkpointer
from modular_ppo.runs.config import (
    TrainRunConfig, config_from_json, config_to_json, flag, task_record,
)
from modular_ppo.runs.errors import EnvRewardError, RenderError, RunConfigError, RunDirError
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.program_key import program_key
from modular_ppo.runs.run_dir import CHECKPOINT_DIR, VIDEO_DIR, existing_run_dir, read_run_record
from modular_ppo.runs.versions import versions


MODULE_HEADROOM = 2.0
"""Default max_modules of a run of several bodies or with held-out bodies: this many times
the largest training body's module count, so the trained network can act on larger bodies
of the family."""
SIZE_HEADROOM = 1.5
"""Default max_obs_size and max_action_size of such a run: this many times the largest,
rounded up."""


@dataclasses.dataclass
class Run:
    """Everything built from a run's config (nothing on disk): one body, or several
    sharing one network. Names follow the metrics' rule (`ppo.for_body`): with one body
    they are the body's own, with several each carries its body's name."""

    config: TrainRunConfig
    """With backend (and, for several bodies, network max sizes and shares) resolved to
    what the run uses."""
    bodies: dict[str, BodyGraph]
    groups: tuple[BodyGroup, ...]
    state: TrainingState
    custom_env: bool = False
    """Built on an env given in code, not from the config: its training step is traced
    every time (`runs.program_key` can name only what the config builds)."""

    @property
    def name(self) -> str:
        """The run's name in run directories and checkpoints: the bodies joined by '+'."""
        return "+".join(self.bodies)

    @property
    def progress_modules(self) -> tuple[str, ...]:
        """The module names the metrics use ("<body>/<module>" with several bodies)."""
        return tuple(self._named(body, module)
                     for body, graph in self.bodies.items() for module in graph.module_names)

    @property
    def progress_bodies(self) -> tuple[str, ...]:
        """The bodies shown apart in the progress display (none when there is one)."""
        return tuple(self.bodies) if len(self.bodies) > 1 else ()

    def record(self) -> dict[str, Any]:
        """What config.json holds besides the config: bodies, modules, sizes, parameters,
        versions. Per-body entries are the body's own with one body, keyed by body with
        several."""
        first = self.groups[0]
        envs = {group.name: group.env for group in self.groups}
        network = nnx.merge(first.graphdef, self.state.network_state(first.name))
        several = {
            "bodies": list(self.bodies),
            "body_envs": {group.name: group.n_envs for group in self.groups},
            "body_loss_weights": {group.name: group.loss_weight for group in self.groups},
        } if len(self.bodies) > 1 else {}
        return {
            "config": config_to_json(self.config),
            "body": self.name,
            **several,
            "arch": self.config.arch,
            "env": type(first.env).__name__,
            "task": self._per_body({name: task_record(env) for name, env in envs.items()}),
            "modules": list(self.progress_modules),
            "actuated_modules": self._per_body(
                {name: list(body.actuated_modules) for name, body in self.bodies.items()}),
            "obs_sizes": self._per_body({name: env.obs_sizes for name, env in envs.items()}),
            "action_sizes": self._per_body(
                {name: env.action_sizes for name, env in envs.items()}),
            "parameters": count_parameters(network),
            "versions": versions(),
        }

    def evaluator(self, config: EvalConfig) -> Callable[[TrainingState, Any], dict[str, float]]:
        """(state, key) -> every body's evaluation metrics ("episode/team_return", ...,
        named with `ppo.for_body`), computed by this process alone."""
        evaluators = {g.name: make_evaluator(g.env, g.graphdef, config) for g in self.groups}

        def evaluate(state: TrainingState, key) -> dict[str, float]:
            metrics = {}
            for name, evaluator in evaluators.items():
                network_state = to_local(state.network_state(name))
                metrics.update(for_body(to_floats(evaluator(network_state, key)),
                                        name, list(self.bodies)))
            return metrics

        return evaluate

    def fit(self, on_iteration: OnIteration) -> TrainingState:
        """Train from `state`. With JAX's compilation cache on (a local folder), the traced
        training step is kept there too (`ExportedSteps`), except with data_parallel, where a
        program would be tied to the devices' assignment, and on a custom env."""
        folder = exported_folder()
        exported = (ExportedSteps(folder, program_key(self.config, self.bodies))
                    if folder is not None and not self.custom_env
                    and not self.config.ppo.data_parallel else None)
        return train(self.groups, self.state, self.config.ppo, on_iteration=on_iteration,
                     exported=exported).state

    def summary(self, final: dict[str, float]) -> str:
        if len(self.bodies) == 1:
            return (f"team return {final['eval/team_return']:.1f}, forward velocity "
                    f"{final.get('eval/forward_velocity', math.nan):.2f}")
        return "team return " + ", ".join(
            f"{name} {final.get(body_key('eval/team_return', name), math.nan):.1f}"
            for name in self.bodies
        )

    def write_videos(self, state: TrainingState, run_dir: Path, console: Console) -> None:
        """A video of the final policy on each body: videos/final.mp4 with one body,
        videos/<body>.mp4 with several."""
        from modular_ppo.runs.episode import record_episode
        from modular_ppo.runs.video import render_frames, write_video

        for group in self.groups:
            qpos = record_episode(group.env, group.graphdef,
                                  to_local(state.network_state(group.name)),
                                  jax.random.key(self.config.seed), self.config.video_length)
            try:
                frames = render_frames(self.bodies[group.name], qpos)
            except RenderError as e:
                console.print(f"[yellow]no video[/]: {e}")
                return
            file = "final.mp4" if len(self.bodies) == 1 else f"{group.name}.mp4"
            path = write_video(frames, run_dir / VIDEO_DIR / file, fps=1.0 / group.env.dt)
            console.print(f"video: {path}")

    def _named(self, body: str, module: str) -> str:
        return module if len(self.bodies) == 1 else f"{body}/{module}"

    def _per_body(self, values: dict[str, Any]) -> Any:
        return next(iter(values.values())) if len(values) == 1 else values


def build_run(config: TrainRunConfig, env: ModularEnvProtocol | None = None) -> Run:
    """Bodies, envs, networks (one per body, sharing their parameters) and a fresh training
    state from the config (nothing on disk). The run's config has the backend "auto"
    resolved to the one chosen, the token architectures' unset max sizes set to those the
    network is built with (`with_max_sizes`), and with several bodies the env and loss
    shares resolved.

    env: train in this environment (a custom task, a wrapper) instead of the one
    `config.body`, `config.partition` and `config.env` describe; its `body` is the run's.
    """
    if env is not None:
        if config.multi_body:
            raise RunConfigError(
                f"--body {config.body!r}: a custom env trains one body; give one body with "
                "it, or drop the env to train the listed bodies."
            )
        check_env_rewards(env)
        bodies, envs = {env.body.name: env.body}, {env.body.name: env}
    else:
        bodies = {}
        for name in config.bodies:
            body = load_body(name, config.partition)
            if body.name in bodies:
                raise RunConfigError(
                    f"--body {config.body!r}: two bodies are named '{body.name}' (an MJCF "
                    "file's body takes the name in <mujoco model=...>, else the file's "
                    "name); give each body once, or give one of the files another model name.")
            bodies[body.name] = body
        if config.backend == "auto":
            backends = {default_backend(body) for body in bodies.values()}
            config = dataclasses.replace(
                config, backend=backends.pop() if len(backends) == 1 else "mjx")
        envs = {name: make_env(body, config.env, config.backend)
                for name, body in bodies.items()}
    n_envs, loss_weights = {next(iter(bodies)): config.ppo.n_envs}, None
    if config.network.arch != "separate":
        # A resumed run keeps the sizes it was built with (held-out bodies may be added).
        headroom = len(bodies) > 1 or bool(config.held_out and config.resume is None)
        config = dataclasses.replace(
            config, network=with_max_sizes(config.network, envs, headroom))
    if len(bodies) > 1:
        n_envs = dict(zip(bodies, split_envs(config)))
        loss_shares = config.body_loss_shares or (1.0,) * len(bodies)
        loss_weights = {name: share / sum(loss_shares)
                        for name, share in zip(bodies, loss_shares)}
        config = dataclasses.replace(
            config, body_env_shares=tuple(float(n) for n in n_envs.values()),
            body_loss_shares=tuple(loss_weights.values()))
    try:
        networks = [
            (env, make_network(bodies[name], env.obs_sizes, config.network,
                               rngs=nnx.Rngs(config.seed + i)))
            for i, (name, env) in enumerate(envs.items())
        ]
    except MaxSizeTooSmall as error:
        raise _max_size_error(config, error) from None
    groups, state = new_training_state(networks, config.ppo, config.seed, n_envs=n_envs,
                                       loss_weights=loss_weights)
    return Run(config, bodies, groups, state, custom_env=env is not None)


def _max_size_error(config: TrainRunConfig, error: MaxSizeTooSmall) -> RunConfigError:
    """The run's view of a max size too small for a body: the flag to raise, or, when
    the network comes from --init-from, the source run that cannot hold the body."""
    if config.init_from is not None:
        return RunConfigError(f"--init-from {config.init_from}: {source_cannot_hold(error)}")
    name = flag(error.field)
    return RunConfigError(f"{name} {error.value}: {_what_body_needs(error)}. Give {name} "
                          f"{error.needed} or more, or leave it out to fit the body.")


def source_cannot_hold(error: MaxSizeTooSmall, this_run: bool = False) -> str:
    """Why a trained run's network (its max sizes fix its parameters) cannot act on a
    body, and the run that could; `this_run`: the network of the run being set up (its
    `--held-out` bodies), and the flag that makes room."""
    name = flag(error.field)
    if this_run:
        return (f"this run's network is built with {name} {error.value}, but "
                f"{_what_body_needs(error)}. Give {name} {error.needed} or more.")
    return (f"that run's network was built with {name} {error.value}, but "
            f"{_what_body_needs(error)}. Train a run with {name} {error.needed} or more "
            "to act on this body.")


def _what_body_needs(error: MaxSizeTooSmall) -> str:
    body, needed = error.body_name, error.needed
    return {
        "max_modules": f"body '{body}' has {needed} modules",
        "max_obs_size": f"a module of body '{body}' observes {needed} values",
        "max_action_size": f"a module of body '{body}' has {needed} actions",
    }[error.field]


def with_max_sizes(network: NetworkConfig, envs: dict[str, ModularEnvProtocol],
                   headroom: bool) -> NetworkConfig:
    """`network` with its unset max sizes set to fit every body of `envs`: with headroom
    (MODULE_HEADROOM, SIZE_HEADROOM) for a network meant to act on other bodies too, else
    exactly (the sizes a network built with them unset has, now recorded in the run's
    config so that zero-shot and fine-tuning know them). Sizes given are kept (too small
    ones fail when the networks are built, naming the body and the size it needs)."""
    modules = max(len(env.obs_sizes) for env in envs.values())
    obs = max(max(env.obs_sizes.values()) for env in envs.values())
    actions = max(max(env.action_sizes.values(), default=1) for env in envs.values())
    module_factor, size_factor = (MODULE_HEADROOM, SIZE_HEADROOM) if headroom else (1, 1)
    defaults = {
        "max_modules": math.ceil(module_factor * modules),
        "max_obs_size": math.ceil(size_factor * obs),
        "max_action_size": math.ceil(size_factor * actions),
    }
    return dataclasses.replace(network, **{
        field: value for field, value in defaults.items() if getattr(network, field) is None
    })


def split_envs(config: TrainRunConfig) -> list[int]:
    """Each body's environment count: its share of ppo.n_envs, in whole minibatch slots
    (multiples of n_minibatches), adding up to n_envs."""
    ppo, bodies = config.ppo, config.bodies
    shares = config.body_env_shares or (1.0,) * len(bodies)
    slots = ppo.n_envs // ppo.n_minibatches
    counts = [math.floor(slots * share / sum(shares)) for share in shares]
    counts[-1] += slots - sum(counts)
    if min(counts) < 1:
        raise RunConfigError(
            f"--ppo.n-envs {ppo.n_envs} with --ppo.n-minibatches {ppo.n_minibatches} leaves "
            f"{slots} slots of {ppo.n_minibatches} environments for {len(bodies)} bodies with "
            f"shares {shares}: some body gets none. Raise --ppo.n-envs to at least "
            f"{ppo.n_minibatches * len(bodies)}, or even out --body-env-shares."
        )
    return [count * ppo.n_minibatches for count in counts]


def check_env_rewards(env: ModularEnvProtocol) -> None:
    """Raise EnvRewardError unless `env` rewards exactly the modules it observes: each
    module's value head, and each policy head trained on its own module's advantage,
    needs that module's reward stream."""
    rewarded = jax.eval_shape(env.reset, jax.random.key(0)).reward
    missing = [m for m in env.obs_sizes if m not in rewarded]
    unknown = [m for m in rewarded if m not in env.obs_sizes]
    if missing or unknown:
        raise EnvRewardError(
            f"{type(env).__name__}: its State.reward is keyed by {sorted(rewarded)}, but it "
            f"observes modules {sorted(env.obs_sizes)}; missing: {missing or 'none'}, "
            f"unknown: {unknown or 'none'}. Per-module advantages need a reward for every "
            "observed module: give each one a reward (0.0 where it earns none) in reset and "
            "step, and no others."
        )


def load_run_config(run_dir: Path) -> TrainRunConfig:
    """The config a run directory was trained with (its config.json)."""
    run_dir = existing_run_dir(run_dir)
    try:
        return config_from_json(read_run_record(run_dir)["config"])
    except ModularPPOError as e:
        raise RunDirError(f"{run_dir / 'config.json'}: {e}") from None
    except (TypeError, ValueError, AttributeError) as e:
        raise RunDirError(
            f"{run_dir / 'config.json'}: its config cannot be read ({e}). Restore the file "
            "written by the training run, or start a new run."
        ) from None


def checkpointer_for(run_dir: Path, run: Run) -> Checkpointer:
    return Checkpointer(
        Path(run_dir) / CHECKPOINT_DIR,
        {"body": run.name, "arch": run.config.arch},
        max_to_keep=run.config.keep_checkpoints,
    )


def restore_run(run_dir: Path, env: ModularEnvProtocol | None = None) -> tuple[Run, int]:
    """A run rebuilt from its directory, at its latest readable checkpoint (and its step)."""
    run = build_run(load_run_config(run_dir), env)
    checkpointer = checkpointer_for(run_dir, run)
    try:
        step, state = checkpointer.restore_latest(run.state)
    finally:
        checkpointer.close()
    return dataclasses.replace(run, state=state), step
