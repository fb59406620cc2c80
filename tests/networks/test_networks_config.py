"""Configuration and input errors that name what to fix; parameter counts."""

from __future__ import annotations

import jax.numpy as jnp
import pytest
from flax import nnx

from modular_ppo.networks import (
    AttentionConfig,
    GraphConfig,
    NetworkConfig,
    NetworkConfigError,
    count_parameters,
    make_network,
)


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"arch": "gnn"}, "NetworkConfig.arch"),
        ({"policy_hidden_sizes": ()}, "NetworkConfig.policy_hidden_sizes"),
        ({"value_hidden_sizes": (64, 0)}, "NetworkConfig.value_hidden_sizes"),
        ({"embedding_size": 30, "attention": AttentionConfig(heads=4)}, "NetworkConfig.attention.heads"),
        ({"attention": AttentionConfig(max_hops=-1)}, "NetworkConfig.attention.max_hops"),
        ({"attention": AttentionConfig(layers=0)}, "NetworkConfig.attention.layers"),
        ({"recurrent": "rnn"}, "NetworkConfig.recurrent"),
        ({"init_log_std": -8.0, "min_std": 1e-3}, "NetworkConfig.init_log_std"),
        ({"entropy_weight": -0.1}, "NetworkConfig.entropy_weight"),
        ({"max_modules": 0}, "NetworkConfig.max_modules"),
        ({"graph": GraphConfig(rounds=-1)}, "NetworkConfig.graph.rounds"),
    ],
)
def test_invalid_config_names_the_field(fields, named):
    with pytest.raises(NetworkConfigError, match=named.replace(".", r"\.")):
        NetworkConfig(**fields)


def test_body_mismatches_name_module_and_field(bodies, obs_sizes_of):
    ant = bodies["ant"]
    sizes = obs_sizes_of(ant)
    rngs = nnx.Rngs(0)
    missing = {m: n for m, n in sizes.items() if m != "back_left"}
    with pytest.raises(NetworkConfigError, match="missing \\['back_left'\\]"):
        make_network(ant, missing, NetworkConfig(arch="shared"), rngs=rngs)
    with pytest.raises(NetworkConfigError, match="obs_sizes\\['torso'\\]"):
        make_network(ant, {**sizes, "torso": -1}, NetworkConfig(arch="shared"), rngs=rngs)
    with pytest.raises(NetworkConfigError, match="NetworkConfig.max_obs_size is 3 .* at least"):
        make_network(ant, sizes, NetworkConfig(arch="shared", max_obs_size=3), rngs=rngs)


def test_bad_inputs_name_the_module(bodies, obs_sizes_of, random_obs, build):
    chain = bodies["chain"]
    net = build("chain", arch="separate")
    state = net.initialize_state(4)
    obs = random_obs(obs_sizes_of(chain), 4)
    with pytest.raises(NetworkConfigError, match="modules m0, m1, m2, m3"):
        net(state, {m: o for m, o in obs.items() if m != "m2"})
    with pytest.raises(NetworkConfigError, match=r"obs\['m1'\] has shape \(4, 3\)"):
        net(state, {**obs, "m1": jnp.zeros((4, 3))})
    with pytest.raises(NetworkConfigError, match="disagree on their batch axes"):
        net(state, {**obs, "m2": obs["m2"][:3]})
    with pytest.raises(NetworkConfigError, match="raw_actions"):
        net(state, obs, extras={})
    with pytest.raises(NetworkConfigError, match=r"obs\['m0'\]"):
        net.update_statistics({**obs, "m0": jnp.zeros((2, 5, 1))})
    with pytest.raises(NetworkConfigError, match="state has structure"):
        net((), obs)


def test_separate_parameter_counts_match_the_layer_sizes(bodies, obs_sizes_of, build):
    ant = bodies["ant"]
    sizes = obs_sizes_of(ant)
    counts = count_parameters(build("ant", arch="separate"))

    def mlp(widths):
        return sum((a + 1) * b for a, b in zip(widths[:-1], widths[1:]))

    for m in ant.actuated_modules:
        act = ant.modules[m].n_actuators
        # trunk, mean head, state-independent log-std per action
        assert counts[f"policy/{m}"] == mlp((sizes[m], 16, act)) + act
    for m in ant.module_names:
        assert counts[f"value/{m}"] == mlp((sizes[m], 16, 1))
    assert counts["policy"] == sum(counts[f"policy/{m}"] for m in ant.actuated_modules)
    assert counts["total"] == counts["policy"] + counts["value"]
