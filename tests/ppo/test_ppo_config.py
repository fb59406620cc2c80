import dataclasses

import pytest

from modular_ppo.ppo import EvalConfig, PPOConfig, PPOConfigError


def test_defaults_are_valid_and_frozen():
    config = PPOConfig()
    assert config.minibatch_size * config.n_minibatches == config.n_envs
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.n_envs = 8  # type: ignore[misc]


@pytest.mark.parametrize(
    "changes, field",
    [
        ({"n_envs": 30, "n_minibatches": 4}, "n_envs"),
        ({"n_envs": 0}, "n_envs"),
        ({"rollout_length": 0}, "rollout_length"),
        ({"n_epochs": -1}, "n_epochs"),
        ({"n_minibatches": 0}, "n_minibatches"),
        ({"iterations_per_call": 0}, "iterations_per_call"),
        ({"total_steps": 0}, "total_steps"),
        ({"clip_range": 0.0}, "clip_range"),
        ({"clip_range": 1.5}, "clip_range"),
        ({"gamma": 1.1}, "gamma"),
        ({"gae_lambda": -0.1}, "gae_lambda"),
        ({"learning_rate": -1e-3}, "learning_rate"),
        ({"learning_rate": float("nan")}, "learning_rate"),
        ({"gamma": float("nan")}, "gamma"),
        ({"clip_range": float("nan")}, "clip_range"),
        ({"gradient_clipping": float("inf")}, "gradient_clipping"),
        ({"weight_decay": float("nan")}, "weight_decay"),
        ({"critic_loss_weight": float("inf")}, "critic_loss_weight"),
        ({"critic_loss_weight": -1.0}, "critic_loss_weight"),
        ({"gradient_clipping": 0.0}, "gradient_clipping"),
        ({"weight_decay": -0.1}, "weight_decay"),
    ],
)
def test_bad_ppo_config_names_the_field(changes, field):
    with pytest.raises(PPOConfigError, match=rf"PPOConfig\.{field} = "):
        PPOConfig(**changes)


def test_divisibility_error_says_how_to_fix():
    with pytest.raises(ValueError, match="multiple of n_minibatches"):
        PPOConfig(n_envs=30, n_minibatches=4)


@pytest.mark.parametrize("changes, field",
                         [({"n_envs": 0}, "n_envs"), ({"episode_length": 0}, "episode_length")])
def test_bad_eval_config_names_the_field(changes, field):
    with pytest.raises(PPOConfigError, match=rf"EvalConfig\.{field} = "):
        EvalConfig(**changes)


def test_default_batch_shape_follows_the_hardware():
    from modular_ppo.ppo import default_ppo_config

    cpu, gpu = default_ppo_config("cpu"), default_ppo_config("gpu")
    assert (cpu.n_envs, cpu.rollout_length) == (PPOConfig().n_envs, PPOConfig().rollout_length)
    assert gpu.steps_per_iteration > 10 * cpu.steps_per_iteration
    assert cpu.combine_advantages and gpu.combine_advantages
    assert (cpu.gamma, gpu.gamma) == (0.97, 0.99)  # the accelerator's measured discount
