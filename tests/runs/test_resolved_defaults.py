"""The one resolution of a training run's config (`runs.resolve`): the ant's default run
is the one the command line trained before the config was resolved in one place, field by
field; the body is loaded once; shares keep their meaning (`n_envs` the total, each body's
environments beside the config)."""

import pytest

from modular_ppo import cli
from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import PPOConfig
from modular_ppo.runs import resolve, train_run
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import config_to_json
from modular_ppo.runs.resolve import resolve_train_config, train_defaults

ANT_DEFAULT = {
    "backend": "cpu",
    "body": "ant-modular",
    "body_env_shares": [],
    "body_loss_shares": [],
    "cache.compile_cache": True,
    "cache.compile_cache_dir": None,
    "checkpoint_every_steps": 500000,
    "device_share": 0.0,
    "distributed.auto": False,
    "distributed.coordinator_address": None,
    "distributed.num_processes": None,
    "distributed.process_id": None,
    "distributed.timeout_s": 60.0,
    "env.body_features": True,
    "env.body_frame": "root",
    "env.physics": "",
    "env.contact_cost_weight": None,
    "env.contact_forces": False,
    "env.ctrl_cost_weight": None,
    "env.direction_deg": 0.0,
    "env.episode_length": 1000,
    "env.forward_reward_weight": None,
    "env.global_features": True,
    "env.healthy_reward": None,
    "env.neighbor_hops": 1,
    "env.observation": "modular",
    "env.previous_action": False,
    "env.reset_noise_scale": None,
    "env.task": "run_forward",
    "env.team_reward": "even",
    "env.terminate_when_unhealthy": None,
    "eval.deterministic": True,
    "eval.episode_length": None,
    "eval.n_envs": 16,
    "eval_every_steps": 500000,
    "held_out": [],
    "init_from": None,
    "init_optimizer": "fresh",
    "keep_checkpoints": 3,
    "network.activation": "tanh",
    "network.arch": "separate",
    "network.attention.heads": 4,
    "network.attention.hop_bias": None,
    "network.attention.layers": 2,
    "network.attention.max_hops": None,
    "network.centralized_critic": False,
    "network.distribution": "tanh_gaussian",
    "network.embedding_size": 64,
    "network.entropy_weight": 0.01,
    "network.graph.rounds": 2,
    "network.init_log_std": -0.5,
    "network.max_action_size": None,
    "network.max_modules": None,
    "network.max_obs_size": None,
    "network.min_std": 0.001,
    "network.module_identity": "index",
    "network.morphology": "none",
    "network.normalize_observations": True,
    "network.observation_clip": 10.0,
    "network.policy_hidden_sizes": [64, 64],
    "network.recurrent": "none",
    "network.recurrent_size": 64,
    "network.state_dependent_std": False,
    "network.value_hidden_sizes": [64, 64],
    "new_body_statistics": "trained-bodies",
    "partition": None,
    "ppo.anneal_learning_rate": False,
    "ppo.clip_range": 0.2,
    "ppo.combine_advantages": True,
    "ppo.critic_loss_weight": 0.5,
    "ppo.data_parallel": False,
    "ppo.gae_lambda": 0.95,
    "ppo.gamma": 0.97,
    "ppo.gradient_clipping": 1.0,
    "ppo.iterations_per_call": 1,
    "ppo.learning_rate": 0.0003,
    "ppo.n_envs": 64,
    "ppo.n_epochs": 4,
    "ppo.n_minibatches": 4,
    "ppo.normalize_advantages": True,
    "ppo.reward_scale": 1.0,
    "ppo.rollout_length": 32,
    "ppo.total_steps": 5000000,
    "ppo.weight_decay": None,
    "resume": None,
    "run_name": None,
    "runs_root": "runs",
    "seed": 0,
    "seeds": [],
    "video": True,
    "video_length": 250,
}
"""`python cli.py train --body ant-modular`'s run config (config.json) on a CPU machine at
7db31a4, before the config was resolved in one place (runs/resolve.py)."""


def _flat(values: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in values.items():
        if isinstance(value, dict):
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def test_the_ants_resolved_default_config_is_the_one_the_cli_trained_before():
    resolved = resolve_train_config(train_defaults("ant-modular"))
    got = _flat(config_to_json(resolved.config))
    assert sorted(got) == sorted(ANT_DEFAULT)
    for path, value in ANT_DEFAULT.items():
        assert got[path] == value, path
    assert resolved.body_envs == {"ant-modular": 64}
    assert resolved.loss_weights == {"ant-modular": 1.0}


class Built(Exception):
    """Raised in place of building the run: resolution is all this test needs."""


def test_a_cli_train_run_loads_its_body_once(monkeypatch, tmp_path):
    loads = []

    def load_body(name, partition=None):
        loads.append((name, partition))
        return real_load(name, partition)

    def new_run(resolved, **_):
        raise Built(resolved)

    real_load = resolve.load_body
    monkeypatch.setattr(resolve, "load_body", load_body)
    monkeypatch.setattr(train_run, "new_run", new_run)
    with pytest.raises(Built) as built:
        cli.main(["train", "--body", "halfcheetah-modular", "--partition", "per_actuated_body",
                  "--runs-root", str(tmp_path), "--ppo.n-epochs", "3"])
    assert loads == [("halfcheetah-modular", "per_actuated_body")]
    config = built.value.args[0].config
    assert (config.ppo.gamma, config.ppo.n_minibatches) == (0.99, 16)  # the body's preset
    assert config.ppo.n_epochs == 3  # a flag over the preset


def test_n_envs_is_the_total_and_each_bodys_share_is_beside_the_config():
    config = TrainRunConfig(body="centipede-4,centipede-6", network=NetworkConfig(arch="shared"),
                            ppo=PPOConfig(n_envs=64, n_minibatches=4),
                            body_env_shares=(1.0, 3.0), body_loss_shares=(3.0, 1.0),
                            backend="cpu")
    resolved = resolve_train_config(config)
    assert resolved.body_envs == {"centipede-4": 16, "centipede-6": 48}
    assert sum(resolved.body_envs.values()) == resolved.config.ppo.n_envs == 64
    assert resolved.loss_weights == {"centipede-4": 0.75, "centipede-6": 0.25}
    # The shares given stay as given; resolving the resolved config changes nothing.
    assert resolved.config.body_env_shares == (1.0, 3.0)
    again = resolve_train_config(resolved.config)
    assert (again.config, again.body_envs, again.loss_weights) == (
        resolved.config, resolved.body_envs, resolved.loss_weights)


@pytest.mark.parametrize(("cores", "backend", "share"), [(13, "cpu-pipelined", 0.4),
                                                          (4, "cpu", 0.0)])
def test_auto_on_a_tpu_with_host_cores_to_spare_is_the_pipelined_backend(
        monkeypatch, cores, backend, share):
    """JAX's platform and the host's cores stood in for: with 8 cores or more, "auto" on a
    TPU is the pipelined backend with resolve.DEVICE_SHARE on MJX; with fewer, the
    bodies' default backend (on this CPU machine's JAX: "cpu")."""
    monkeypatch.setattr(resolve, "_platform", lambda: "tpu")
    monkeypatch.setattr(resolve, "usable_cores", lambda: cores)
    config = TrainRunConfig(body="hopper-modular", ppo=PPOConfig(n_envs=8))
    resolved = resolve_train_config(config).config
    assert (resolved.backend, resolved.device_share) == (backend, share)
    given = TrainRunConfig(body="hopper-modular", backend="cpu-pipelined", device_share=0.1)
    assert resolve_train_config(given).config.device_share == 0.1
    seeds = TrainRunConfig(body="hopper-modular", seeds=(0, 1), ppo=PPOConfig(n_envs=8))
    assert resolve_train_config(seeds).config.backend == backend  # the seeds' one program
