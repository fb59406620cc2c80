"""JaxMARL-style IPPO (benchmarks/ippo.py, also behind benchmarks/mabrax_ant.py) learns
through the JaxMARL adapter: on the tiny body its deterministic return ends far above the
untrained policy's. Slow: run with `pytest -m benchmark`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import pytest
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph
from modular_ppo.env import EnvConfig
from modular_ppo.interop import JaxMARLEnv

MARGIN = 100.0
"""Team return the trained policy must gain over the untrained one (seed 0: -2.6 untrained,
483.6 after 160k steps); a policy that has not learned to push stays near 0."""
IPPO_FILE = Path(__file__).resolve().parents[2] / "benchmarks" / "ippo.py"


def _ippo():
    spec = importlib.util.spec_from_file_location("ippo", IPPO_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.benchmark
def test_ippo_through_the_adapter_learns_on_the_tiny_body():
    ippo = _ippo()
    env = JaxMARLEnv(BodyGraph.from_mjcf(tiny_xml()), config=EnvConfig(episode_length=100))
    config = ippo.IPPOConfig(total_steps=160_000, n_envs=32, n_steps=100)
    key, init_key, eval_key = jax.random.split(jax.random.PRNGKey(0), 3)
    shape = ippo.Homogeniser(env)
    untrained = ippo.init_params(init_key, shape.obs_size, shape.action_size, config.hidden)
    before = ippo.evaluate(env, untrained, eval_key, n_envs=16, n_steps=100)
    params, curve = ippo.train_ippo(env, config, key)
    after = ippo.evaluate(env, params, eval_key, n_envs=16, n_steps=100)
    print(f"IPPO on tiny: untrained {before:.1f}, trained {after:.1f}, "
          f"last training returns {[round(r['team_return'], 1) for r in curve[-3:]]}")
    assert after > before + MARGIN
