"""A small network that follows the networks contract, written independently of
modular_ppo.networks so the PPO core can be tested on its own: one MLP per module with a
tanh-Gaussian policy for actuated modules, a value head for every module, a running
observation normalizer, and optionally a recurrent (Elman) layer."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import nnx

from modular_ppo.networks.contract import ModularNetwork, NetworkOutput, StepOutput


class RunningNormalizer(nnx.Module):
    def __init__(self, size: int):
        self.count = nnx.BatchStat(jnp.zeros(()))
        self.mean = nnx.BatchStat(jnp.zeros(size))
        self.sum_squares = nnx.BatchStat(jnp.zeros(size))

    def __call__(self, x):
        var = jnp.where(self.count[...] > 1, self.sum_squares[...] / self.count[...], 1.0)
        return jnp.clip((x - self.mean[...]) / jnp.sqrt(var + 1e-6), -10.0, 10.0)

    def update(self, x):
        x = x.reshape(-1, x.shape[-1])
        n, mean = x.shape[0], jnp.mean(x, axis=0)
        total = self.count[...] + n
        delta = mean - self.mean[...]
        self.sum_squares[...] = (self.sum_squares[...] + jnp.sum((x - mean) ** 2, axis=0)
                                 + delta**2 * self.count[...] * n / total)
        self.mean[...] = self.mean[...] + delta * n / total
        self.count[...] = total


class PerModuleMLP(ModularNetwork):
    def __init__(self, obs_sizes, action_sizes, *, hidden=32, recurrent=False,
                 entropy_weight=0.0, rngs: nnx.Rngs):
        self.actuated = tuple(action_sizes)
        self.hidden = hidden
        self.recurrent = recurrent
        self.entropy_weight = entropy_weight
        extra = hidden if recurrent else 0
        self.normalizers = nnx.Dict({m: RunningNormalizer(n) for m, n in obs_sizes.items()})
        self.first = nnx.Dict({m: nnx.Linear(n + extra, hidden, rngs=rngs)
                               for m, n in obs_sizes.items()})
        self.second = nnx.Dict({m: nnx.Linear(hidden, hidden, rngs=rngs) for m in obs_sizes})
        self.values = nnx.Dict({m: nnx.Linear(hidden, 1, rngs=rngs) for m in obs_sizes})
        self.means = nnx.Dict({
            m: nnx.Linear(hidden, n, kernel_init=nnx.initializers.normal(0.01), rngs=rngs)
            for m, n in action_sizes.items()
        })
        self.log_stds = nnx.Dict({m: nnx.Param(jnp.full(n, -0.5))
                                  for m, n in action_sizes.items()})
        self.rngs = rngs

    def initialize_state(self, batch_size):
        if not self.recurrent:
            return ()
        return {m: jnp.zeros((batch_size, self.hidden)) for m in self.first}

    def reset_state(self, state, done):
        return jax.tree.map(lambda h: jnp.where(done[:, None], 0.0, h), state)

    def __call__(self, state, obs, extras=None, deterministic=False):
        next_state, features = {}, {}
        for m in self.first:
            x = self.normalizers[m](obs[m])
            if self.recurrent:
                x = jnp.concatenate([x, state[m]], axis=-1)
            h = jnp.tanh(self.first[m](x))
            next_state[m] = h
            features[m] = jnp.tanh(self.second[m](h))
        actions, loglikelihoods, raw, entropy = {}, {}, {}, 0.0
        if extras is None and not deterministic:  # one draw for all modules: fast to compile
            batch = features[self.actuated[0]].shape[0]
            width = sum(self.log_stds[m].shape[0] for m in self.actuated)
            noise = jax.random.normal(self.rngs.action(), (batch, width))
        start = 0
        for m in self.actuated:
            mean, log_std = self.means[m](features[m]), self.log_stds[m][...]
            if extras is not None:
                u = extras["raw_actions"][m]
            elif deterministic:
                u = mean
            else:
                u = mean + jnp.exp(log_std) * noise[:, start : start + mean.shape[1]]
                start += mean.shape[1]
            gaussian = (-0.5 * ((u - mean) / jnp.exp(log_std)) ** 2 - log_std
                        - 0.5 * math.log(2 * math.pi))
            squash = 2.0 * (math.log(2.0) - u - jax.nn.softplus(-2.0 * u))  # log(1 - tanh(u)^2)
            loglikelihoods[m] = jnp.sum(gaussian - squash, axis=-1)
            actions[m], raw[m] = jnp.tanh(u), u
            entropy = entropy + jnp.sum(log_std + 0.5 * math.log(2 * math.pi * math.e))
        values = {m: self.values[m](f)[:, 0] for m, f in features.items()}
        return StepOutput(
            next_state=next_state if self.recurrent else (),
            output=NetworkOutput(actions, loglikelihoods, values, {"raw_actions": raw}),
            regularization_loss=-self.entropy_weight * entropy,
        )

    def update_statistics(self, obs):
        for m, x in obs.items():
            self.normalizers[m].update(x)
