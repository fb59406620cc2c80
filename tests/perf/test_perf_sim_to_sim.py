"""Sim-to-sim: one fixed policy on the MJX env and on the CPU backend (MuJoCo's C
simulator behind the same env code) scores the same mean episode return and length over
many episodes. This is the accuracy claim between the two simulators.

Step for step they agree only for a while: with an unconverged contact solver (the ant's
and the centipedes' 1 Newton iteration) or a chaotic gait, float32 MJX and float64 C
trajectories part after some tens of steps (tests/body/test_body_mjx.py checks the first
step). So the claim is about distributions. Both backends run the same episodes: the same
reset keys, the same policy and the same action noise, through the production evaluator;
each batch of episodes gives one paired difference of batch means, and their mean must lie
within TOLERANCE_SE standard errors of zero, or within TOLERANCE_RELATIVE of the mean
(trajectories that do not part give differences with a tiny standard error).

The policy is a network fixed by its seed, acting stochastically (a random policy that
reacts to observations): bodies that can fall end episodes at varied lengths. The full
comparison, every body family, is benchmark-marked
(`pytest -m benchmark tests/perf/test_perf_sim_to_sim.py -s` prints the figures); CI runs
the hopper with few, short episodes. Trained policies moved between the backends:
tests/env/test_env_sim_to_sim.py.

Measured (2026-11-30, the standard tasks), team return and episode length, MJX vs C, mean
paired difference +- its standard error:
- CI, hopper, 128 episodes of up to 100 steps: 29.85 vs 29.34 (+0.52 +- 0.41), 30.0 vs 29.8
  (+0.24 +- 0.20). Deliberate breaks of MJX's step: actuators 20% weaker, length +4.3 +-
  0.6; 10% weaker, +2.5 +- 0.55; one physics step fewer per control step, +13.0 +- 0.5: all
  failed.
- Benchmark, 256 episodes of up to 1000 steps (10.5 minutes): ant 4.44 vs 4.95 (-0.50 +-
  1.52), length 56.3 vs 50.2 (+6.1 +- 3.7); halfcheetah -271.7 vs -270.9 (-0.9 +- 3.3), 1000
  steps; hopper 24.67 vs 24.45 (+0.23 +- 0.21); humanoid 107.83 vs 107.20 (+0.63 +- 0.23,
  0.6%); walker2d 7.18 vs 7.34 (-0.16 +- 0.17); centipede-4 -6.04 vs -6.05, length 22.1 vs
  23.1 (-1.0 +- 0.43); swimmer-4 -16.48 vs -16.33 (-0.15 +- 0.13), 1000 steps.
"""

from __future__ import annotations

import dataclasses

import jax
import numpy as np
import pytest
from body_families import one_size_per_family
from flax import nnx
from jaxtyping import Float

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import EvalConfig
from modular_ppo.ppo.evaluate import run_episodes

TOLERANCE_SE = 4.0
"""Paired differences of batch means beyond 4 standard errors: a false alarm about once in
15,000 runs (t distribution, 15 degrees of freedom: about once in 1,000)."""
TOLERANCE_RELATIVE = 0.03
"""Or within 3% of the mean: differences below that do not matter to a user comparing
returns, whatever their standard error."""
POLICY = NetworkConfig(arch="separate", policy_hidden_sizes=(32, 32), value_hidden_sizes=(8,))
STATISTICS = ("team_return", "length")
OPTIMIZED = {"xla_backend_optimization_level": 1, "xla_llvm_disable_expensive_passes": False}
"""The suite turns XLA's backend optimization off (tests/conftest.py), which makes an MJX
rollout run about 300 times slower (32 hopper episodes of 60 steps: 22 s instead of
0.08 s); level 1 costs 2 s more to compile and is as fast as the default (with LLVM's
passes, which the suite also turns off)."""


@dataclasses.dataclass(frozen=True)
class Comparison:
    """Batch means [batches] of each statistic, per backend."""

    body: str
    mjx: dict[str, Float[np.ndarray, "batches"]]
    cpu: dict[str, Float[np.ndarray, "batches"]]

    def difference(self, statistic: str) -> tuple[float, float]:
        """Mean paired difference (MJX - C) and its standard error."""
        paired = self.mjx[statistic] - self.cpu[statistic]
        return float(paired.mean()), float(paired.std(ddof=1) / np.sqrt(len(paired)))

    def report(self) -> str:
        parts = []
        for statistic in STATISTICS:
            difference, error = self.difference(statistic)
            parts.append(f"{statistic} MJX {self.mjx[statistic].mean():.2f} C "
                         f"{self.cpu[statistic].mean():.2f} (difference {difference:+.3f} "
                         f"+- {error:.3f})")
        return f"{self.body}: " + "; ".join(parts)

    def assert_agree(self) -> None:
        for statistic in STATISTICS:
            difference, error = self.difference(statistic)
            scale = abs(float(self.cpu[statistic].mean()))
            assert abs(difference) <= max(TOLERANCE_SE * error, TOLERANCE_RELATIVE * scale), (
                self.report())


def batch_means(env, graphdef, network_state, config: EvalConfig, n_batches: int,
                seed: int) -> dict[str, Float[np.ndarray, "batches"]]:
    """The evaluator's episode means over `n_batches` batches of `config.n_envs` episodes,
    batch k from reset key k of `seed` (the same keys on every backend). The evaluator is
    `make_evaluator`'s function, compiled with XLA's optimization."""
    keys = jax.random.split(jax.random.key(seed), n_batches)
    evaluate = run_episodes.lower(env, graphdef, config, network_state, keys[0]).compile(
        compiler_options=OPTIMIZED)
    rows = [jax.device_get(evaluate(network_state, key))
            for key in keys]
    return {s: np.array([float(row[f"episode/{s}"]) for row in rows]) for s in STATISTICS}


def compare(name: str, env_config: EnvConfig, config: EvalConfig, n_batches: int) -> Comparison:
    """The fixed policy (a network of seed 0) on both backends."""
    envs = {backend: make_env(load_body(name), env_config, backend)
            for backend in ("mjx", "cpu")}
    network = make_network(envs["cpu"].body, envs["cpu"].obs_sizes, POLICY, rngs=nnx.Rngs(0))
    graphdef, state = nnx.split(network)
    means = {backend: batch_means(env, graphdef, state, config, n_batches, seed=1)
             for backend, env in envs.items()}
    return Comparison(name, means["mjx"], means["cpu"])


def test_a_fixed_policy_scores_alike_on_mjx_and_the_c_simulator():
    """CI: the hopper, 128 episodes of up to 100 steps; most end by falling."""
    comparison = compare("hopper-modular", EnvConfig(episode_length=100),
                         EvalConfig(n_envs=8, deterministic=False), n_batches=16)
    print(comparison.report())
    assert 1 < comparison.cpu["length"].mean() < 100, "episodes should end at varied lengths"
    comparison.assert_agree()


@pytest.mark.benchmark
@pytest.mark.parametrize("name", one_size_per_family())
def test_every_body_scores_alike_on_mjx_and_the_c_simulator(name):
    """256 episodes of up to 1000 steps per body."""
    comparison = compare(name, EnvConfig(episode_length=1000),
                         EvalConfig(n_envs=16, deterministic=False), n_batches=16)
    print(comparison.report())
    comparison.assert_agree()
