"""A run of one shared network on several bodies: built from a TrainRunConfig whose --body
lists them, trained, evaluated per body and recorded like a single-body `Run`."""

from __future__ import annotations

import dataclasses
import math
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
from flax import nnx
from rich.console import Console

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.env import default_backend, make_env
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from modular_ppo.ppo import EvalConfig, make_evaluator
from modular_ppo.ppo.multi_body_metrics import body_key, for_body
from modular_ppo.ppo.multi_body_state import BodyGroup, MultiBodyState, new_multi_body_state
from modular_ppo.ppo.multi_body_train import OnMultiBodyIteration, train_multi_body
from modular_ppo.runs.config import RunConfigError, TrainRunConfig, config_to_json, task_record
from modular_ppo.runs.metrics_log import to_floats

MODULE_HEADROOM = 2.0
"""Default max_modules of a multi-body run: this many times the largest body's module
count, so the trained network can be evaluated on larger bodies of the same family."""
SIZE_HEADROOM = 1.5
"""Default max_obs_size and max_action_size: this many times the largest, rounded up."""


@dataclasses.dataclass
class MultiBodyRun:
    """Everything built from a multi-body run's config (nothing on disk)."""

    config: TrainRunConfig
    """With backend, network max sizes and shares resolved to what the run uses."""
    bodies: dict[str, BodyGraph]
    envs: dict[str, ModularEnvProtocol]
    groups: tuple[BodyGroup, ...]
    state: MultiBodyState

    @property
    def name(self) -> str:
        """The run's name in run directories and checkpoints: the bodies joined by '+'."""
        return "+".join(self.bodies)

    @property
    def progress_modules(self) -> tuple[str, ...]:
        """Every body's modules as "<body>/<module>", the names its metrics use."""
        return tuple(f"{b}/{m}" for b, body in self.bodies.items() for m in body.module_names)

    @property
    def progress_bodies(self) -> tuple[str, ...]:
        return tuple(self.bodies)

    def record(self) -> dict[str, Any]:
        """What config.json holds besides the config: bodies, modules, sizes, parameters."""
        first = self.groups[0]
        network = nnx.merge(first.graphdef, self.state.network_state(first.name))
        return {
            "config": config_to_json(self.config),
            "body": self.name,
            "bodies": list(self.bodies),
            "arch": self.config.arch,
            "env": type(self.envs[first.name]).__name__,
            "task": {name: task_record(env) for name, env in self.envs.items()},
            "modules": list(self.progress_modules),
            "body_envs": {group.name: group.n_envs for group in self.groups},
            "body_loss_weights": {group.name: group.loss_weight for group in self.groups},
            "obs_sizes": {name: env.obs_sizes for name, env in self.envs.items()},
            "action_sizes": {name: env.action_sizes for name, env in self.envs.items()},
            "parameters": count_parameters(network),
            "versions": {
                "python": platform.python_version(),
                "jax": jax.__version__,
                "devices": [str(d) for d in jax.devices()],
            },
        }

    def evaluator(self, config: EvalConfig) -> Callable[[MultiBodyState, Any], dict[str, float]]:
        """(state, key) -> every body's evaluation metrics, keyed with its name
        ("episode/team_return/<body>", ...)."""
        evaluators = {g.name: make_evaluator(g.env, g.graphdef, config) for g in self.groups}

        def evaluate(state: MultiBodyState, key) -> dict[str, float]:
            metrics = {}
            for name, evaluator in evaluators.items():
                metrics.update(for_body(to_floats(evaluator(state.network_state(name), key)),
                                        name))
            return metrics

        return evaluate

    def fit(self, on_iteration: OnMultiBodyIteration) -> MultiBodyState:
        return train_multi_body(self.groups, self.state, self.config.ppo,
                                on_iteration=on_iteration).state

    def summary(self, final: dict[str, float]) -> str:
        return "team return " + ", ".join(
            f"{name} {final.get(body_key('eval/team_return', name), math.nan):.1f}"
            for name in self.bodies
        )

    def write_videos(self, state: MultiBodyState, run_dir: Path, console: Console) -> None:
        from modular_ppo.runs.episode import record_episode
        from modular_ppo.runs.video import RenderError, render_frames, write_video

        for group in self.groups:
            qpos = record_episode(group.env, group.graphdef, state.network_state(group.name),
                                  jax.random.key(self.config.seed), self.config.video_length)
            try:
                frames = render_frames(self.bodies[group.name], qpos)
            except RenderError as e:
                console.print(f"[yellow]no video[/]: {e}")
                return
            path = write_video(frames, run_dir / "videos" / f"{group.name}.mp4",
                               fps=1.0 / group.env.dt)
            console.print(f"video: {path}")


def build_multi_body_run(config: TrainRunConfig) -> MultiBodyRun:
    """Bodies, envs, one network per body sharing its parameters, and a fresh state."""
    bodies = {}
    for name in config.bodies:
        body = load_body(name, config.partition)
        if body.name in bodies:
            raise RunConfigError(f"--body {config.body!r}: two bodies are named "
                                 f"'{body.name}'; each body may appear once.")
        bodies[body.name] = body
    if config.backend == "auto":
        backends = {default_backend(body) for body in bodies.values()}
        config = dataclasses.replace(config, backend="cpu" if backends == {"cpu"} else "mjx")
    envs = {name: make_env(body, config.env, config.backend) for name, body in bodies.items()}
    config = dataclasses.replace(config, network=with_headroom(config.network, envs))
    n_envs = split_envs(config)
    loss_shares = config.body_loss_shares or (1.0,) * len(bodies)
    loss_weights = {name: share / sum(loss_shares) for name, share in zip(bodies, loss_shares)}
    config = dataclasses.replace(config, body_env_shares=tuple(float(n) for n in n_envs),
                                 body_loss_shares=tuple(loss_weights.values()))
    networks = {
        name: (env, make_network(bodies[name], env.obs_sizes, config.network,
                                 rngs=nnx.Rngs(config.seed + i)))
        for i, (name, env) in enumerate(envs.items())
    }
    groups, state = new_multi_body_state(
        networks, dict(zip(bodies, n_envs)), loss_weights, config.ppo, config.seed
    )
    return MultiBodyRun(config, bodies, envs, groups, state)


def with_headroom(network: NetworkConfig, envs: dict[str, ModularEnvProtocol]) -> NetworkConfig:
    """`network` with its unset max sizes set to fit every body with headroom
    (MODULE_HEADROOM, SIZE_HEADROOM); sizes given are kept (too small ones fail when the
    networks are built, naming the body and the size it needs)."""
    modules = max(len(env.obs_sizes) for env in envs.values())
    obs = max(max(env.obs_sizes.values()) for env in envs.values())
    actions = max(max(env.action_sizes.values(), default=1) for env in envs.values())
    defaults = {
        "max_modules": math.ceil(MODULE_HEADROOM * modules),
        "max_obs_size": math.ceil(SIZE_HEADROOM * obs),
        "max_action_size": math.ceil(SIZE_HEADROOM * actions),
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
