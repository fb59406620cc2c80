"""What each architecture lets flow where: shared weights, hops, masks, critic inputs."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from flax import nnx

BATCH = 4


def outputs(net, obs) -> dict[str, np.ndarray]:
    """Deterministic actions ("act/<module>") and values ("value/<module>")."""
    out = net(net.initialize_state(BATCH), obs, deterministic=True).output
    flat = {f"act/{m}": np.asarray(a) for m, a in out.actions.items()}
    flat.update({f"value/{m}": np.asarray(v) for m, v in out.value_estimates.items()})
    return flat


def changed_by(net, obs, module: str) -> set[str]:
    """The outputs that move when `module`'s observations are perturbed."""
    before = outputs(net, obs)
    after = outputs(net, {**obs, module: obs[module] + 1.0})
    return {k for k in before if not np.allclose(before[k], after[k], rtol=0, atol=1e-6)}


def within(chain, module: str, hops: int) -> set[str]:
    """Output keys of the chain's modules at most `hops` from `module`."""
    i = chain.module_index(module)
    near = {m for j, m in enumerate(chain.module_names) if chain.hop_distance[i, j] <= hops}
    keys = {f"value/{m}" for m in near}
    return keys | {f"act/{m}" for m in near if chain.modules[m].is_actuated}


def perturb_param(net, part: str, path_filter: str):
    """A clone of `net` with the first kernel entry under `part` matching the filter moved."""
    net = nnx.clone(net)
    for path, variable in nnx.to_flat_state(nnx.state(getattr(net, part), nnx.Param)):
        if path_filter in "/".join(map(str, path)) and path[-1] == "kernel":
            variable[...] = variable[...].at[(0,) * variable[...].ndim].add(1.0)
            return net
    raise AssertionError(f"no kernel under {part} matching {path_filter}")


TOKEN_ARCHS = ("shared", "graph", "attention")
"""The architectures whose weights serve every module (and every body)."""
FIRST_TRUNK_LAYER = {"shared": "trunk/layers/0", "graph": "trunk/encoder/layers/0",
                     "attention": "trunk/encoder/layers/0"}
"""Where each token architecture's policy first reads a module's token."""


@pytest.mark.parametrize("arch", TOKEN_ARCHS)
def test_token_policy_moves_every_leg_when_one_weight_moves(
    arch, bodies, obs_sizes_of, random_obs, build
):
    ant = bodies["ant"]
    legs = {f"act/{m}" for m in ant.actuated_modules}
    obs = random_obs(obs_sizes_of(ant), BATCH)
    net = build("ant", arch=arch)
    before = outputs(net, obs)
    after = outputs(perturb_param(net, "policy", FIRST_TRUNK_LAYER[arch]), obs)
    assert {k for k in legs if not np.allclose(before[k], after[k], atol=1e-6)} == legs


def test_separate_policy_moves_only_its_own_leg_when_one_weight_moves(
    bodies, obs_sizes_of, random_obs, build
):
    ant = bodies["ant"]
    legs = {f"act/{m}" for m in ant.actuated_modules}
    obs = random_obs(obs_sizes_of(ant), BATCH)
    separate = build("ant", arch="separate")
    before = outputs(separate, obs)
    after = outputs(perturb_param(separate, "policy", "front_left/trunk/layers/0"), obs)
    assert {k for k in legs if not np.allclose(before[k], after[k], atol=1e-6)} == {
        "act/front_left"
    }


def _alike_legs_obs(ant, sizes: dict[str, int]) -> dict[str, jax.Array]:
    """The same random observations for every leg, ones for the torso."""
    leg_obs = jax.random.normal(jax.random.key(0), (BATCH, sizes["front_left"]))
    return {m: leg_obs if m != "torso" else jax.numpy.ones((BATCH, n)) for m, n in sizes.items()}


@pytest.mark.parametrize("arch", TOKEN_ARCHS)
def test_token_policy_acts_alike_on_alike_legs_without_module_identity(
    arch, bodies, obs_sizes_of, build
):
    """The ant's legs are alike in the body graph too (children of the torso), so message
    passing and attention treat them alike as well."""
    ant = bodies["ant"]
    obs = _alike_legs_obs(ant, obs_sizes_of(ant))
    actions = outputs(build("ant", arch=arch, module_identity="none"), obs)
    for m in ant.actuated_modules:
        np.testing.assert_allclose(actions[f"act/{m}"], actions["act/front_left"], atol=1e-6)
    # With the module index in each token the same weights tell the legs apart.
    indexed = outputs(build("ant", arch=arch), obs)
    assert not np.allclose(indexed["act/back_right"], indexed["act/front_left"], atol=1e-4)


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_graph_messages_travel_one_hop_per_round(rounds, chain, obs_sizes_of, random_obs, build):
    net = build("chain", arch="graph", graph={"rounds": rounds})
    obs = random_obs(obs_sizes_of(chain), BATCH)
    # Top-down from the root and bottom-up from the far leaf (3 hops apart).
    assert changed_by(net, obs, "m0") == within(chain, "m0", rounds)
    assert changed_by(net, obs, "m3") == within(chain, "m3", rounds)


@pytest.mark.parametrize(("layers", "max_hops"), [(1, 1), (2, 1), (1, 2), (1, None)])
def test_attention_hop_mask_limits_what_each_layer_sees(
    layers, max_hops, chain, obs_sizes_of, random_obs, build
):
    net = build("chain", arch="attention",
                attention={"layers": layers, "max_hops": max_hops})
    obs = random_obs(obs_sizes_of(chain), BATCH)
    reach = 3 if max_hops is None else layers * max_hops
    assert changed_by(net, obs, "m0") == within(chain, "m0", reach)


@pytest.mark.parametrize("arch", ["separate", "shared"])
def test_centralized_critic_sees_all_modules_while_policies_stay_local(
    arch, chain, obs_sizes_of, random_obs, build
):
    obs = random_obs(obs_sizes_of(chain), BATCH)
    local = changed_by(build("chain", arch=arch), obs, "m3")
    assert local == {"act/m3", "value/m3"}
    central = changed_by(build("chain", arch=arch, centralized_critic=True), obs, "m3")
    assert central == {"act/m3"} | {f"value/{m}" for m in chain.module_names}


def test_a_message_passing_round_is_the_documented_update():
    """h_i <- tanh(W_self h_i + b + mean over children c of W_up h_c + W_down h_parent(i)),
    written out module by module on a tree with a root, two children and two leaves under
    the first child, against the trunk's batched form."""
    from modular_ppo.networks.message_passing import MessagePassing

    parents = (-1, 0, 0, 1, 1)
    trunk = MessagePassing(3, (8,), 6, 2, parents, "tanh", rngs=nnx.Rngs(0))
    tokens = jax.random.normal(jax.random.key(1), (len(parents), BATCH, 3))
    h = np.asarray(trunk.encoder(tokens))
    for own, up, down in zip(trunk.own, trunk.to_parent, trunk.to_children):
        w_self, b = np.asarray(own.kernel[...]), np.asarray(own.bias[...])
        w_up, w_down = np.asarray(up.kernel[...]), np.asarray(down.kernel[...])
        new = []
        for i, parent in enumerate(parents):
            total = h[i] @ w_self + b
            children = [c for c, p in enumerate(parents) if p == i]
            if children:
                total = total + np.mean([h[c] @ w_up for c in children], axis=0)
            if parent >= 0:
                total = total + h[parent] @ w_down
            new.append(np.tanh(total))
        h = np.stack(new)
    np.testing.assert_allclose(np.asarray(trunk(tokens)), h, rtol=1e-5, atol=1e-5)
