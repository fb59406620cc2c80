"""Every architecture on bodies of different module counts and sizes, behind one contract."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from flax import nnx

from modular_ppo.body import load_body
from modular_ppo.networks import count_parameters, make_network

ARCHS = ("separate", "shared", "graph", "attention")
BATCH = 512  # enough samples to check their spread; the networks are tiny


@nnx.jit
def sample_and_rescore(net, state, obs):
    """Sample, then re-score those samples: one compile for both."""
    step = net(state, obs)
    return step, net(state, obs, extras=step.output.extras).output


@nnx.jit
def mode_of(net, state, obs):
    return net(state, obs, deterministic=True).output


@pytest.mark.parametrize("body_name", ["ant", "chain", "humanoid"])
@pytest.mark.parametrize("arch", ARCHS)
def test_outputs_follow_the_contract(
    arch, body_name, bodies, obs_sizes_of, random_obs, build, padded
):
    body = bodies[body_name]
    net = build(body_name, arch=arch, attention={"max_hops": 1}, **padded)
    obs = random_obs(obs_sizes_of(body), BATCH)
    state = net.initialize_state(BATCH)
    step, rescored = sample_and_rescore(net, state, obs)
    resampled, _ = sample_and_rescore(net, state, obs)

    out = step.output
    assert set(out.actions) == set(out.loglikelihoods) == set(body.actuated_modules)
    assert set(out.value_estimates) == set(body.module_names)
    for m in body.actuated_modules:
        actions = np.asarray(out.actions[m])
        assert actions.shape == (BATCH, body.modules[m].n_actuators)
        assert np.all(np.abs(actions) <= 1.0)
        assert out.loglikelihoods[m].shape == (BATCH,)
        assert np.all(np.isfinite(out.loglikelihoods[m]))
        # Re-scoring the stored pre-squash samples gives the sampling-time log-likelihoods.
        np.testing.assert_allclose(
            rescored.loglikelihoods[m], out.loglikelihoods[m], rtol=1e-5, atol=1e-5
        )
        np.testing.assert_array_equal(rescored.actions[m], out.actions[m])
    for m in body.module_names:
        assert out.value_estimates[m].shape == (BATCH,)
        assert np.all(np.isfinite(out.value_estimates[m]))
    assert step.regularization_loss.shape == ()
    assert float(step.regularization_loss) < 0  # an entropy bonus at the initial std
    # Sampling draws fresh noise on every call.
    assert any(
        not np.allclose(resampled.output.actions[m], out.actions[m]) for m in body.actuated_modules
    )


def test_mode_is_squashed_mean_and_samples_scatter_around_it(
    bodies, obs_sizes_of, random_obs, build, padded
):
    body = bodies["humanoid"]  # 21 actions in 3 modules
    net = build("humanoid", arch="shared", attention={"max_hops": 1}, **padded)
    obs = random_obs(obs_sizes_of(body), BATCH)
    state = net.initialize_state(BATCH)
    step, _ = sample_and_rescore(net, state, obs)
    mode, mode_again = mode_of(net, state, obs), mode_of(net, state, obs)
    for m in body.actuated_modules:
        np.testing.assert_array_equal(mode.actions[m], mode_again.actions[m])
        np.testing.assert_allclose(
            mode.actions[m], np.tanh(mode.extras["raw_actions"][m]), atol=1e-6
        )
    # (sample - mean) / std is standard normal, independently per action and module.
    std = np.exp(net.config.init_log_std)
    noise = np.concatenate(
        [
            (
                np.asarray(step.output.extras["raw_actions"][m])
                - np.asarray(mode.extras["raw_actions"][m])
            )
            / std
            for m in body.actuated_modules
        ],
        axis=1,
    )
    assert noise.shape[1] == sum(body.modules[m].n_actuators for m in body.actuated_modules)
    assert np.all(np.abs(noise.mean(axis=0)) < 4 / np.sqrt(BATCH))
    np.testing.assert_allclose(noise.std(axis=0), 1.0, rtol=0.12)
    correlation = np.corrcoef(noise, rowvar=False)
    assert np.all(np.abs(correlation[~np.eye(len(correlation), dtype=bool)]) < 0.25)


def test_clipped_gaussian_with_state_dependent_std(chain, obs_sizes_of, random_obs, build):
    net = build("chain", arch="separate", distribution="clipped_gaussian", state_dependent_std=True)
    obs = random_obs(obs_sizes_of(chain), BATCH)
    step, rescored = sample_and_rescore(net, net.initialize_state(BATCH), obs)
    for m in chain.actuated_modules:
        raw = np.asarray(step.output.extras["raw_actions"][m])
        assert np.any(np.abs(raw) > 1)  # some samples fall outside and are clipped
        np.testing.assert_array_equal(step.output.actions[m], np.clip(raw, -1, 1))
        np.testing.assert_allclose(
            rescored.loglikelihoods[m], step.output.loglikelihoods[m], rtol=1e-5, atol=1e-5
        )


@pytest.mark.parametrize("arch", ARCHS)
def test_jit_and_grad_through_split_and_merge(
    arch, bodies, obs_sizes_of, random_obs, build, padded
):
    net = nnx.clone(build("chain", arch=arch, attention={"max_hops": 1}, **padded))
    obs = random_obs(obs_sizes_of(bodies["chain"]), BATCH)
    state = net.initialize_state(BATCH)
    graphdef, params, rest = nnx.split(net, nnx.Param, ...)

    def loss(params, rest, extras):
        step = nnx.merge(graphdef, params, rest)(state, obs, extras)
        out = step.output
        ll = sum(v.mean() for v in out.loglikelihoods.values())
        values = sum(v.mean() for v in out.value_estimates.values())
        return ll + values + step.regularization_loss, out.loglikelihoods

    @jax.jit
    def act_and_grad(params, rest):
        """A rollout step (sampling advances the RNG in `rest`) and a gradient step."""
        network = nnx.merge(graphdef, params, rest)
        step = network(state, obs)
        grads, rescored = jax.grad(loss, has_aux=True)(params, rest, step.output.extras)
        return step, nnx.split(network, nnx.Param, ...)[2], grads, rescored

    first, rest, grads, rescored = act_and_grad(params, rest)
    second, rest, _, _ = act_and_grad(params, rest)
    assert any(
        not np.allclose(first.output.actions[m], second.output.actions[m])
        for m in first.output.actions
    )
    for part in ("policy", "value"):
        leaves = jax.tree.leaves(grads[part])
        assert leaves and any(np.any(np.asarray(g) != 0) for g in leaves), part
        assert all(np.all(np.isfinite(np.asarray(g))) for g in leaves), part
    # With unchanged parameters the jitted re-scoring equals the sampling-time scoring.
    for m, ll in rescored.items():
        np.testing.assert_allclose(ll, first.output.loglikelihoods[m], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("arch", ["shared", "graph", "attention"])
def test_token_architectures_share_weights_across_bodies(
    arch, bodies, obs_sizes_of, random_obs, padded, small_config, build
):
    sizes = {name: obs_sizes_of(b) for name, b in bodies.items()}
    config = small_config(arch=arch, attention={"max_hops": 1}, **padded)
    ant = build("ant", arch=arch, attention={"max_hops": 1}, **padded)
    chain = make_network(bodies["chain"], sizes["chain"], config, rngs=nnx.Rngs(1))
    humanoid = make_network(bodies["humanoid"], sizes["humanoid"], config, rngs=nnx.Rngs(2))
    weights = nnx.state(ant, nnx.Param)
    assert count_parameters(chain) == count_parameters(humanoid) == count_parameters(ant)
    nnx.update(chain, weights)
    nnx.update(humanoid, weights)
    for name, net in (("chain", chain), ("humanoid", humanoid)):
        step, _ = sample_and_rescore(
            net, net.initialize_state(BATCH), random_obs(sizes[name], BATCH)
        )
        assert set(step.output.actions) == set(bodies[name].actuated_modules)
        assert all(np.all(np.isfinite(a)) for a in step.output.actions.values())


@pytest.mark.parametrize("arch", ["shared", "graph", "attention"])
def test_token_architectures_act_alike_on_a_leg_of_an_ant_with_a_leg_fewer(
    arch, bodies, obs_sizes_of, padded, small_config, build
):
    """The ant's weights in a network for the ant without its back right leg: front_left
    computes the same action there from the same tokens. Every module sees the same
    features and no module index, so what front_left gathers is the same in both bodies:
    its own token (shared), the mean of the torso's children (graph) and, one attention
    layer limited to 1 hop, itself and the torso (attention)."""
    fields = dict(arch=arch, module_identity="none", attention={"max_hops": 1}, **padded)
    ant = build("ant", **fields)
    three_legs = load_body("ant-modular-without-back_right")
    sizes = {"ant": obs_sizes_of(bodies["ant"]), "three_legs": obs_sizes_of(three_legs)}
    fewer = make_network(three_legs, sizes["three_legs"], small_config(**fields),
                         rngs=nnx.Rngs(1))
    nnx.update(fewer, nnx.state(ant, nnx.Param))
    features = np.random.default_rng(3).standard_normal((BATCH, 2))

    def observe(sizes: dict[str, int]) -> dict[str, np.ndarray]:
        obs = {m: np.zeros((BATCH, n), np.float32) for m, n in sizes.items()}
        for o in obs.values():
            o[:, :2] = features
        return obs

    leg = mode_of(ant, ant.initialize_state(BATCH), observe(sizes["ant"]))
    same_leg = mode_of(fewer, fewer.initialize_state(BATCH), observe(sizes["three_legs"]))
    np.testing.assert_allclose(
        same_leg.actions["front_left"], leg.actions["front_left"], rtol=1e-5, atol=1e-6
    )
