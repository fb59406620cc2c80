import threading

import jax
import numpy as np
from flax import nnx

from modular_ppo.ppo import EvalConfig, evaluate, make_evaluator


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


BACKEND_COMPILE = "/jax/core/compile/backend_compile_duration"
"""The event JAX records for every program XLA compiles (jax._src.dispatch)."""


def test_an_evaluator_compiled_ahead_in_a_thread_compiles_nothing_at_its_call(
        toy_env, make_test_network):
    """`Evaluator.compile` in another thread leaves the program where the evaluator's first
    call finds it: the call compiles nothing, and gives what an evaluator never compiled
    ahead gives."""
    graphdef, network_state = nnx.split(make_test_network(seed=7))
    config = EvalConfig(n_envs=6, episode_length=3)  # a shape no other test compiles
    evaluator = make_evaluator(toy_env, graphdef, config)
    thread = threading.Thread(target=evaluator.compile,
                              args=(network_state, jax.random.key(0)))
    thread.start()
    thread.join()
    compiled = []

    def listener(event, duration, **_):
        if event == BACKEND_COMPILE:
            compiled.append(duration)

    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        metrics = evaluator(network_state, jax.random.key(1))
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    assert compiled == []
    fresh = evaluate(toy_env, graphdef, network_state, config, jax.random.key(1))
    assert {k: float(v) for k, v in metrics.items()} == fresh


def test_seeds_evaluated_in_one_program_are_each_seed_evaluated_alone(
        toy_env, make_test_network):
    """`make_evaluator(..., seeded=True)` on stacked network states and keys gives each
    seed the metrics of its own evaluation (different networks, different keys)."""
    from modular_ppo.ppo.seeds import one_seed, stack

    config = EvalConfig(n_envs=5, episode_length=12)  # past the toy's episodes of 10
    graphdef, first = nnx.split(make_test_network(seed=1))
    _, second = nnx.split(make_test_network(seed=2))
    keys = jax.random.split(jax.random.key(9), 2)
    together = make_evaluator(toy_env, graphdef, config, seeded=True)(stack([first, second]),
                                                                      keys)
    alone = [evaluate(toy_env, graphdef, state, config, keys[i])
             for i, state in enumerate((first, second))]
    assert alone[0]["episode/team_return"] != alone[1]["episode/team_return"]
    for i, expected in enumerate(alone):
        got = one_seed(together, i)
        assert set(got) == set(expected)
        for key, value in expected.items():
            np.testing.assert_allclose(float(got[key]), value, rtol=1e-5, atol=1e-6,
                                       err_msg=f"seed {i} {key}")


ON_ANOTHER_DEVICE = """
import jax, numpy as np
from flax import nnx
from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, make_env
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import EvalConfig
from modular_ppo.ppo.evaluate import Evaluator

body = load_body("hopper-modular")
env = make_env(body, EnvConfig(), "cpu")  # built on device 0, JAX's default
graphdef, state = nnx.split(make_network(body, env.obs_sizes, NetworkConfig(), rngs=nnx.Rngs(0)))
config, key = EvalConfig(n_envs=3, episode_length=30), jax.random.key(4)
here = Evaluator(env, graphdef, config)(state, key)
there = Evaluator(env, graphdef, config, device=jax.devices()[1])(state, key)
assert {d.id for d in there["episode/team_return"].devices()} == {1}
for name, value in here.items():
    np.testing.assert_allclose(np.asarray(there[name]), np.asarray(value), rtol=1e-5, err_msg=name)
print("ok", float(here["episode/team_return"]))
"""


def test_an_evaluation_placed_on_another_device_runs_there_and_agrees():
    """An `Evaluator` with a device places its arguments there and runs the episodes there
    (the C simulator's env, built on JAX's default device: what `evaluation_device` does on
    an accelerator, whose env runs its evaluation on the host's CPU), with the same
    metrics. Two host devices stand in for the chip and the host."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": os.environ.get("XLA_FLAGS", "")
           + " --xla_force_host_platform_device_count=2"}
    done = subprocess.run([sys.executable, "-c", ON_ANOTHER_DEVICE], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines()[-1].startswith("ok ")
