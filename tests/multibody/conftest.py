"""Two small, unlike bodies (a 3-segment swimmer, 1 action per module, observations up to
47; a 4-legged centipede, 2 actions per module, observations up to 100) sharing one
tiny network, built once per session."""

import pytest
from flax import nnx

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import make_network
from modular_ppo.ppo import new_training_state
from multibody_setup import BODIES, NETWORK, PPO


@pytest.fixture(scope="session")
def envs():
    return {name: make_env(load_body(name), EnvConfig(episode_length=8), "cpu")
            for name in BODIES}


def make_networks(envs, seed=0):
    return {name: make_network(env.body, env.obs_sizes, NETWORK, rngs=nnx.Rngs(seed + i))
            for i, (name, env) in enumerate(envs.items())}


@pytest.fixture(scope="session")
def groups_and_state(envs):
    networks = make_networks(envs)
    return new_training_state(
        [(env, networks[name]) for name, env in envs.items()],
        body_envs={name: 2 for name in BODIES}, loss_weights={"swimmer-3": 0.25,
                                                           "centipede-4": 0.75},
        config=PPO, seed=0,
    )
