"""PPO and evaluation settings: frozen, tyro-ready dataclasses checked on construction."""

from __future__ import annotations

import dataclasses
import difflib
import math
import typing
from collections.abc import Mapping

from modular_ppo.ppo.errors import PPOConfigError


def _require(ok: bool, config: str, field: str, value: object, fix: str) -> None:
    if not ok:
        raise PPOConfigError(f"{config}.{field} = {value!r}: {fix}")


@dataclasses.dataclass(frozen=True)
class PPOConfig:
    """Proximal policy optimization with one value head and one policy head per module."""

    n_envs: int = 64
    """Environments stepped in parallel; a multiple of n_minibatches (of devices x
    n_minibatches with data_parallel)."""
    rollout_length: int = 32
    """Environment steps per environment collected before each update."""
    n_epochs: int = 4
    """Passes over each rollout."""
    n_minibatches: int = 4
    """Minibatches per epoch, drawn over environments (whole trajectories), not time steps."""
    learning_rate: float = 3e-4
    """Adam(W) step size (0 freezes the parameters)."""
    anneal_learning_rate: bool = False
    """Decay the step size linearly from learning_rate to 0 over the run's updates
    (`total_updates`), as CleanRL's anneal_lr does; the optimizer state then holds the
    schedule's count, so a checkpoint resumes only with the same choice."""
    gamma: float = 0.99
    """Discount factor of future rewards, in [0, 1]."""
    gae_lambda: float = 0.95
    """GAE(lambda) trade-off between bias (0) and variance (1), in [0, 1]."""
    reward_scale: float = 1.0
    """Every module's rewards are multiplied by this before GAE, so the value heads learn
    returns in these units (Brax's `reward_scaling`); episode returns are reported
    unscaled. > 0."""
    clip_range: float = 0.2
    """PPO ratio clipping: ratios outside [1 - clip_range, 1 + clip_range] give no gradient.
    In (0, 1)."""
    normalize_advantages: bool = True
    """Standardize the advantages of each policy key within each minibatch."""
    combine_advantages: bool = False
    """Sum the modules' advantages into one team advantage and train every policy head on
    it (modules with a value head but no actions contribute to the sum)."""
    critic_loss_weight: float = 0.5
    """Weight of the summed critic losses (each 0.5 * mean squared error) in the total loss."""
    gradient_clipping: float | None = 1.0
    """Clip the gradient to this global norm before the optimizer step; None disables."""
    weight_decay: float | None = None
    """None: Adam. A value: AdamW with this decoupled weight decay."""
    total_steps: int = 1_000_000
    """Environment steps (over all environments) after which `train` stops."""
    iterations_per_call: int = 1
    """PPO iterations run inside one jitted call, between two host synchronizations."""
    data_parallel: bool = False
    """Split the environments evenly over every device (of every process, after
    `initialize_distributed`), parameters and optimizer state copied to each, gradients
    averaged across them: the same update as one device with the same n_envs. n_envs must
    then be a multiple of devices x n_minibatches (checked when the run starts)."""

    def __post_init__(self) -> None:
        name = type(self).__name__
        for field in ("n_envs", "rollout_length", "n_epochs", "n_minibatches", "total_steps",
                      "iterations_per_call"):
            value = getattr(self, field)
            _require(isinstance(value, int) and value > 0, name, field, value,
                     "must be a positive integer.")
        _require(
            self.n_envs % self.n_minibatches == 0, name, "n_envs", self.n_envs,
            f"must be divisible by n_minibatches = {self.n_minibatches}, because minibatches "
            "hold whole environments. Choose n_envs a multiple of n_minibatches.",
        )
        for field in ("learning_rate", "gamma", "gae_lambda", "reward_scale", "clip_range",
                      "critic_loss_weight", "gradient_clipping", "weight_decay"):
            value = getattr(self, field)
            _require(value is None or math.isfinite(value), name, field, value,
                     "must be a finite number.")
        _require(self.learning_rate >= 0, name, "learning_rate", self.learning_rate,
                 "must be >= 0.")
        _require(0 <= self.gamma <= 1, name, "gamma", self.gamma, "must be in [0, 1].")
        _require(0 <= self.gae_lambda <= 1, name, "gae_lambda", self.gae_lambda,
                 "must be in [0, 1].")
        _require(self.reward_scale > 0, name, "reward_scale", self.reward_scale,
                 "must be > 0 (1 leaves the rewards as the env gives them).")
        _require(0 < self.clip_range < 1, name, "clip_range", self.clip_range,
                 "must be in (0, 1), e.g. 0.2.")
        _require(self.critic_loss_weight >= 0, name, "critic_loss_weight",
                 self.critic_loss_weight, "must be >= 0.")
        _require(self.gradient_clipping is None or self.gradient_clipping > 0, name,
                 "gradient_clipping", self.gradient_clipping,
                 "must be a positive global norm, or None to disable clipping.")
        _require(self.weight_decay is None or self.weight_decay >= 0, name, "weight_decay",
                 self.weight_decay, "must be >= 0, or None for plain Adam.")

    @property
    def minibatch_size(self) -> int:
        """Environments per minibatch."""
        return self.n_envs // self.n_minibatches

    @property
    def steps_per_iteration(self) -> int:
        """Environment steps collected by one PPO iteration."""
        return self.n_envs * self.rollout_length

    @property
    def total_updates(self) -> int:
        """Optimizer updates of a whole run: n_epochs x n_minibatches an iteration, for the
        iterations that reach total_steps."""
        iterations = -(-self.total_steps // self.steps_per_iteration)
        return iterations * self.n_epochs * self.n_minibatches


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """Evaluation: a batch of full episodes from fresh resets."""

    n_envs: int = 16
    """Episodes run in parallel (one per environment)."""
    episode_length: int | None = None
    """Steps per evaluation episode; None uses the environment's own episode_length."""
    deterministic: bool = True
    """Act with the policy's mode instead of sampling."""

    def __post_init__(self) -> None:
        name = type(self).__name__
        _require(isinstance(self.n_envs, int) and self.n_envs > 0, name, "n_envs", self.n_envs,
                 "must be a positive integer.")
        _require(
            self.episode_length is None
            or (isinstance(self.episode_length, int) and self.episode_length > 0),
            name, "episode_length", self.episode_length,
            "must be a positive integer, or None for the environment's episode_length.",
        )


LOCOMOTION = dict(gamma=0.97, combine_advantages=True)
"""What `default_ppo_config` adds to `PPOConfig()` for the CLI's locomotion tasks: Brax's
discount for its ant, and every policy trained on the team advantage (the sum of the
modules' GAE). On ant-modular these learned a faster gait per env step than PPOConfig()
(BENCHMARKS.md, learning)."""

ACCELERATOR = dict(n_envs=4096, rollout_length=16, n_minibatches=16,
                   total_steps=100_000_000, gamma=0.99)
"""What `default_ppo_config` picks on a GPU or TPU. The batch shape: MJX's cost per step
hardly grows with the batch there (Brax trains its MJX ant with 4096 envs), so many
environments and fewer updates per sample. The discount replaces LOCOMOTION's 0.97: at this
shape the ant's evaluations with 0.99 were ahead at 10M steps in all four seed pairs run
(two on one TPU v5e chip, two on CPU; mean 2,596 against 1,730) and its episodes ended by
falls or jumps far less often (BENCHMARKS.md, Accelerator). Not yet measured on a GPU by
this repository."""

CPU_SHAPE = dict(total_steps=5_000_000)
"""On CPU: PPOConfig()'s sample-efficient shape (64 envs x 32 steps, 16 updates per
iteration; each env step costs the same at any batch size there), for 5M steps (time:
BENCHMARKS.md, "Learning")."""


def default_ppo_config(platform: str | None = None) -> PPOConfig:
    """The `cli.py train` default: `LOCOMOTION` settings with `CPU_SHAPE` when JAX runs on
    CPU; on an accelerator, with `ACCELERATOR` (its discount replacing LOCOMOTION's).
    platform: "cpu", "gpu" or "tpu" (default: JAX's)."""
    if platform is None:
        import jax

        platform = jax.default_backend()
    return PPOConfig(**{**LOCOMOTION, **(CPU_SHAPE if platform == "cpu" else ACCELERATOR)})


def with_preset(config: PPOConfig, preset: Mapping[str, str], where: str,
                element: str = "modular_ppo:ppo_preset") -> PPOConfig:
    """`config` with the settings of a body's `element` text (field -> value as written in
    the MJCF), converted to each field's type and checked like any PPOConfig."""
    values: dict[str, object] = {}
    for name, text in preset.items():
        if name not in {f.name for f in dataclasses.fields(PPOConfig)}:
            near = difflib.get_close_matches(name, [f.name for f in dataclasses.fields(PPOConfig)], n=1)
            hint = f" Did you mean {near[0]}?" if near else ""
            raise PPOConfigError(
                f'{where}: <text name="{element}">: "{name}" is no PPO setting.'
                f"{hint} Use the names of `python cli.py train --help`'s --ppo.* flags "
                "(with underscores), or remove it."
            )
        values[name] = _parse(text, typing.get_type_hints(PPOConfig)[name],
                              f'{where}: <text name="{element}">: {name}={text}')
    try:
        return dataclasses.replace(config, **values)
    except PPOConfigError as error:
        raise PPOConfigError(f'{where}: <text name="{element}">: {error} Fix '
                             "its value.") from None


def _parse(text: str, hint: object, where: str) -> object:
    """`text` as a value of the field type `hint` (bool, int, float, optionally None)."""
    kinds = [kind for kind in typing.get_args(hint) or (hint,) if kind is not type(None)]
    optional = len(kinds) < len(typing.get_args(hint) or (hint,))
    kind = kinds[0]
    lowered = text.lower()
    if lowered == "none" and optional:
        return None
    try:
        if kind is bool:
            if lowered not in ("true", "false", "1", "0"):
                raise ValueError
            return lowered in ("true", "1")
        return kind(text)
    except ValueError:
        names = {bool: "true or false", int: "whole number", float: "number"}
        raise PPOConfigError(
            f"{where}: needs a {names[kind]}{' or none' if optional else ''}. Fix its value."
        ) from None
