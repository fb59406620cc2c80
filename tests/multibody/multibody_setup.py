"""Shapes shared by the multi-body tests (a module of its own name: `conftest` is
ambiguous across test folders)."""

from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import PPOConfig

BODIES = ("swimmer-3", "centipede-4")
NETWORK = NetworkConfig(arch="shared", policy_hidden_sizes=(8,), value_hidden_sizes=(8,),
                        max_modules=8, max_obs_size=112, max_action_size=2)
PPO = PPOConfig(n_envs=4, n_minibatches=1, rollout_length=4, n_epochs=1, learning_rate=1e-2,
                total_steps=16)
