"""What `--backend cpu-pipelined` must compute, built from the jitted CPU backend (and its
MJX device twin for `--device-share`): the rollout of each part of the environments and
the training step on them, and the comparison the pipelined tests make (tests/ppo,
tests/accelerator).

Tolerances: the pipelined steps are other XLA programs than the jitted rollout's scan, and
XLA may fuse the same float operations otherwise. A rollout from a fresh network came out
bit-identical but for 1 ulp of a reward-term metric (compared to rtol 1e-5 / atol 1e-6
here); after updates the network's actions differ by ulps too, the physics carries them,
and PPO's clipping turns them into differences of up to ~1e-3 of an array's largest
entry within 4 iterations (compared to 3e-3 of it). Random keys and integers: exactly.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from modular_ppo.env.device_twin import device_twin
from modular_ppo.ppo.pipelined_rollout import part_sizes, part_stream
from modular_ppo.ppo.pipelined_step import learn_from_rollouts, pipelined_train_step
from modular_ppo.ppo.rollout import collect_rollout, joined_rollouts
from modular_ppo.ppo.seeds import new_seed_states, one_seed
from modular_ppo.ppo.state import new_training_state
from modular_ppo.ppo.step import combined_metrics


_rollout = jax.jit(collect_rollout, static_argnums=(0, 1, 5))
"""One program per env and part size: the two halves share one, the two shares another
(one program of all four rollouts took minutes to compile on a TPU, MJX's step twice)."""


def parts_rollout(env, graphdef, network_state, env_state, recurrent, length,
                  device_share=0.0):
    """The jitted `collect_rollout` of each part of the environments (`part_sizes`): the
    host's halves on the CPU backend, the device's shares on its device twin (MJX), each
    part with its network stream (`part_stream`), joined: what `collect_pipelined`
    computes."""
    sizes = part_sizes(env_state.done.shape[0], device_share)
    ends = np.cumsum(sizes)
    outs = []
    for k, (size, end) in enumerate(zip(sizes, ends)):
        part = functools.partial(jax.tree.map, lambda x: x[end - size:end])
        outs.append(_rollout(env if k < 2 else device_twin(env), graphdef,
                             part_stream(network_state, k), part(env_state),
                             part(recurrent), length))
    joined = functools.partial(jax.tree.map, lambda *xs: jnp.concatenate(xs))
    return (outs[0][0], joined(*(out[1] for out in outs)), joined(*(out[2] for out in outs)),
            functools.reduce(joined_rollouts, [out[3] for out in outs]))


def reference_step(groups, config, state, device_share=0.0):
    """`pipelined_train_step`'s call with the rollouts of the jitted CPU backend and its
    device twin (`parts_rollout`) and the same update (`learn_from_rollouts`)."""
    outputs = []
    for _ in range(config.iterations_per_call):
        collections = {group.name: parts_rollout(
            group.env, group.graphdef, state.network_state(group.name),
            state.groups[group.name].env_state, state.groups[group.name].recurrent,
            config.rollout_length, device_share) for group in groups}
        state, output = learn_from_rollouts(groups, config, state, collections)
        outputs.append(output)
    stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *outputs)
    return state, combined_metrics(groups, state, stacked)


def assert_close(expected, actual, of_largest=None):
    """Equal trees: floats to rtol 1e-5 / atol 1e-6, or with `of_largest`, to that share
    of each array's largest magnitude; keys and integers exactly."""
    assert jax.tree.structure(expected) == jax.tree.structure(actual)
    for (path, x), y in zip(jax.tree_util.tree_leaves_with_path(expected),
                            jax.tree.leaves(actual)):
        where = jax.tree_util.keystr(path)
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            np.testing.assert_array_equal(jax.random.key_data(y), jax.random.key_data(x), where)
        elif not jnp.issubdtype(x.dtype, jnp.floating):
            np.testing.assert_array_equal(np.asarray(y), np.asarray(x), where)
        elif of_largest is None:
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=1e-5, atol=1e-6,
                                       err_msg=where)
        else:
            largest = float(np.max(np.abs(x), initial=0.0))
            np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=0,
                                       atol=of_largest * largest + 1e-6, err_msg=where)


def assert_training_matches(groups, config, state, step, calls: int = 2, device_share=0.0):
    """`calls` calls of a pipelined training `step` from `state` give the metrics and the
    state of `reference_step` (to 3e-3 of each array's largest entry)."""
    expected, actual = state, state
    for _ in range(calls):
        expected, expected_metrics = reference_step(groups, config, expected, device_share)
        actual, actual_metrics = step(actual)
        assert_close(expected_metrics, actual_metrics, of_largest=3e-3)
    assert_close(expected, actual, of_largest=3e-3)
    assert int(actual.iteration) == calls * config.iterations_per_call


def assert_seeds_match_alone(env, network_of_seed, config, device_share, seeds=(0, 5)):
    """A call of the seeded pipelined step (`seeded=True`: every program vmapped over the
    seeds, the host stepping all seeds' halves as one batch) gives each seed the state and
    metrics of its own pipelined step (to 3e-3 of each array's largest entry: vmapped
    matrix products may sum in another order), and the seeds train apart."""
    groups, states = new_seed_states(lambda seed: [(env, network_of_seed(seed))], config,
                                     seeds)
    together, together_metrics = pipelined_train_step(
        groups, config, states, device_share, seeded=True)(states)
    for index, seed in enumerate(seeds):
        _, state = new_training_state([(env, network_of_seed(seed))], config, seed=seed)
        alone, alone_metrics = pipelined_train_step(groups, config, state, device_share)(state)
        assert_close(alone, one_seed(together, index), of_largest=3e-3)
        assert_close(alone_metrics, one_seed(together_metrics, index), of_largest=3e-3)
    first, second = (one_seed(together, i).params for i in range(2))
    assert any(float(np.max(np.abs(a - b))) > 1e-3
               for a, b in zip(jax.tree.leaves(first), jax.tree.leaves(second)))
