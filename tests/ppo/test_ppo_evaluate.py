import jax
import numpy as np
from flax import nnx

from modular_ppo.ppo import evaluate


def test_evaluate_matches_a_step_by_step_episode(learning_env, make_test_network, eval_config):
    """Evaluating for twice the env's episode length counts exactly the first episode, as
    stepping it by hand does."""
    env, n = learning_env, eval_config.n_envs
    assert eval_config.episode_length == 2 * env.episode_length
    graphdef, network_state = nnx.split(make_test_network(seed=3))
    key = jax.random.key(5)
    metrics = evaluate(env, graphdef, network_state, eval_config, key)

    @jax.jit
    def act_and_step(env_state):
        out = nnx.merge(graphdef, network_state)((), env_state.obs, deterministic=True)
        return jax.vmap(env.step)(env_state, out.output.actions)

    env_state = jax.vmap(env.reset)(jax.random.split(key, n))
    returns = {m: np.zeros(n) for m in env.body.module_names}
    velocity = np.zeros(n)
    for _ in range(env.episode_length):
        env_state = act_and_step(env_state)
        for m in returns:
            returns[m] += np.asarray(env_state.reward[m])
        velocity += np.asarray(env_state.metrics["forward_velocity"])
    # The toy env's own episode record, which training metrics average, agrees.
    assert np.all(np.asarray(env_state.done) == 1.0)
    assert np.all(np.asarray(env_state.info["truncation"]) == 1.0)
    assert np.all(np.asarray(env_state.info["steps"]) == 0)  # already reset
    finished = env_state.info["last_episode"]
    np.testing.assert_allclose(finished["team_return"], sum(returns.values()), rtol=1e-5)
    for m, r in returns.items():
        np.testing.assert_allclose(finished[f"return/{m}"], r, rtol=1e-5)
    np.testing.assert_allclose(finished["forward_velocity"], velocity / env.episode_length,
                               rtol=1e-5, atol=1e-6)

    assert metrics["episode/length"] == env.episode_length
    for m, r in returns.items():
        np.testing.assert_allclose(metrics[f"episode/return/{m}"], r.mean(), rtol=1e-4)
    np.testing.assert_allclose(metrics["episode/team_return"], sum(returns.values()).mean(),
                               rtol=1e-4)
    np.testing.assert_allclose(metrics["episode/forward_velocity"],
                               (velocity / env.episode_length).mean(), rtol=1e-4, atol=1e-6)
