"""The stated range of every number a training run's config holds: `LIMITS`, one `Limit`
per numeric field path of `TrainRunConfig` (tuples of numbers: each element).

`runs.validate` checks a config against them wherever it comes from (flags, a body's
`ppo_preset`, a resumed run's config.json), so every number is whole where it must be,
finite and within its range before any work starts. The bounds are generous: wide enough
for any run this project can do, narrow enough that no value overflows a dtype or makes
the run compute nonsense (`tests/reliability/test_reliability_limits.py` checks every
numeric field has one).
"""

from __future__ import annotations

import dataclasses
from typing import Literal

MAX_ENVS = 262_144
"""The most environments of a run (2**18: 64 times the GPU default)."""
MAX_BODIES = 64
"""The most bodies of a run, trained and held out together."""
MAX_STEPS = 10**15
"""The longest run, in env steps (the step counter is exact to 2**61)."""
MAX_EPISODE_LENGTH = 1_000_000
"""The longest episode, in control steps."""
MAX_WIDTH = 8192
"""The widest layer or embedding."""
MAX_WEIGHT = 1e6
"""The largest reward weight (as the MJCF annotations' `numerics.MAX_MAGNITUDE`)."""


@dataclasses.dataclass(frozen=True)
class Limit:
    """A number's allowed values: `kind` "int" (a whole number, no float or bool) or
    "float" (any finite number), from `low` to `high`, each end included unless open."""

    kind: Literal["int", "float"]
    low: float
    high: float
    low_open: bool = False
    high_open: bool = False

    def holds(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        below = value < self.high if self.high_open else value <= self.high
        return above and below

    def text(self) -> str:
        """The range in words, e.g. "a whole number from 1 to 262,144"."""
        kind = "a whole number" if self.kind == "int" else "a finite number"
        low, high = f"{self.low:,}" if self.kind == "int" else f"{self.low:g}", (
            f"{self.high:,}" if self.kind == "int" else f"{self.high:g}")
        if self.low_open or self.high_open:
            return (f"{kind} in {'(' if self.low_open else '['}{low}, {high}"
                    f"{')' if self.high_open else ']'}")
        return f"{kind} from {low} to {high}"


def _int(low: int, high: int) -> Limit:
    return Limit("int", low, high)


def _float(low: float, high: float, low_open: bool = False, high_open: bool = False) -> Limit:
    return Limit("float", low, high, low_open, high_open)


_WEIGHT = _float(0, MAX_WEIGHT)
_WIDTH = _int(1, MAX_WIDTH)
_HOPS = _int(0, 1024)

LIMITS: dict[str, Limit] = {
    "seed": _int(0, 2**32 - 1),
    "seeds": _int(0, 2**32 - 1),
    "body_env_shares": _float(0, MAX_WEIGHT, low_open=True),
    "body_loss_shares": _float(0, MAX_WEIGHT, low_open=True),
    "device_share": _float(0, 1, high_open=True),
    # network
    "network.policy_hidden_sizes": _WIDTH,
    "network.value_hidden_sizes": _WIDTH,
    "network.embedding_size": _WIDTH,
    "network.graph.rounds": _int(0, 64),
    "network.attention.heads": _int(1, 256),
    "network.attention.layers": _int(1, 64),
    "network.attention.max_hops": _HOPS,
    "network.attention.hop_bias": _HOPS,
    "network.recurrent_size": _WIDTH,
    "network.init_log_std": _float(-20, 5),
    "network.min_std": _float(1e-8, 100),
    "network.entropy_weight": _float(0, 1e3),
    "network.observation_clip": _float(1e-3, MAX_WEIGHT),
    "network.max_modules": _int(1, 4096),
    "network.max_obs_size": _int(1, 1_000_000),
    "network.max_action_size": _int(1, 10_000),
    # env
    "env.neighbor_hops": _HOPS,
    "env.episode_length": _int(1, MAX_EPISODE_LENGTH),
    "env.forward_reward_weight": _WEIGHT,
    "env.healthy_reward": _WEIGHT,
    "env.ctrl_cost_weight": _WEIGHT,
    "env.contact_cost_weight": _WEIGHT,
    "env.reset_noise_scale": _float(0, 10),  # as the MJCF's task.MAX_RESET_NOISE
    "env.direction_deg": _float(-360, 360),
    # ppo
    "ppo.n_envs": _int(1, MAX_ENVS),
    "ppo.rollout_length": _int(1, 100_000),
    "ppo.n_epochs": _int(1, 1000),
    "ppo.n_minibatches": _int(1, MAX_ENVS),
    "ppo.learning_rate": _float(0, 10),
    "ppo.gamma": _float(0, 1),
    "ppo.gae_lambda": _float(0, 1),
    "ppo.reward_scale": _float(0, MAX_WEIGHT, low_open=True),
    "ppo.clip_range": _float(0, 1, low_open=True, high_open=True),
    "ppo.critic_loss_weight": _WEIGHT,
    "ppo.gradient_clipping": _float(0, 1e9, low_open=True),
    "ppo.weight_decay": _float(0, 10),
    "ppo.total_steps": _int(1, MAX_STEPS),
    "ppo.iterations_per_call": _int(1, 10_000),
    # evaluation, checkpoints, video
    "eval.n_envs": _int(1, MAX_ENVS),
    "eval.episode_length": _int(1, MAX_EPISODE_LENGTH),
    "eval_every_steps": _int(0, MAX_STEPS),
    "checkpoint_every_steps": _int(0, MAX_STEPS),
    "keep_checkpoints": _int(1, 10_000),
    "video_length": _int(1, 100_000),  # as `render --steps`
    # several processes
    "distributed.num_processes": _int(1, 65_536),
    "distributed.process_id": _int(0, 65_535),
    "distributed.timeout_s": _float(0, 86_400, low_open=True),
}
"""Numeric field path of `TrainRunConfig` -> its allowed values."""
