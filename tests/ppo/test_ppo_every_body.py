"""Every architecture runs on every bundled and default generated body inside the jitted
PPO step (benchmark-marked: 40 compiles, about 10 minutes on 2 CPU cores; run on purpose
with `pytest -m benchmark tests/ppo/test_ppo_every_body.py`)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import nnx

from modular_ppo.body import load_body
from modular_ppo.body.library import bundled_names
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, count_parameters, make_network
from modular_ppo.ppo import PPOConfig, new_training_state, train_step

ARCHS = ("separate", "shared", "graph", "attention")
CONFIG = PPOConfig(n_envs=4, rollout_length=4, n_epochs=1, n_minibatches=2)


@pytest.fixture(scope="module", params=bundled_names())
def env(request):
    return make_env(load_body(request.param), EnvConfig(), backend="auto")


@pytest.mark.benchmark
@pytest.mark.parametrize("arch", ARCHS)
def test_architecture_trains_on_body(env, arch):
    network = make_network(env.body, env.obs_sizes, NetworkConfig(arch=arch, embedding_size=16),
                           rngs=nnx.Rngs(0))
    groups, state = new_training_state([(env, network)], CONFIG, seed=0)
    new_state, metrics = train_step(groups, CONFIG, state)
    losses = {k: float(v) for k, v in metrics.items() if k.startswith("losses/")}
    assert {f"losses/critic/{m}" for m in env.body.module_names} <= set(losses)
    assert all(np.isfinite(v) for v in losses.values()), losses
    moved = jax.tree.map(lambda a, b: jnp.any(a != b), new_state.params, state.params)
    assert any(jax.tree.leaves(moved))
    print(f"{env.body.name} / {arch}: {count_parameters(network)['total']:,} parameters, "
          f"{len(env.body.module_names)} modules, critic losses "
          + ", ".join(f"{k.removeprefix('losses/critic/')} {v:.3g}" for k, v in losses.items()
                      if k.startswith("losses/critic/")))
