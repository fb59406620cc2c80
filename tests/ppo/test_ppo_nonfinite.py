"""The step flags non-finite values per module, so the run layer can name the module."""

import jax
import jax.numpy as jnp
import pytest

from modular_ppo.ppo import metrics_to_host, new_training_state, train_step
from modular_ppo.ppo.metrics import nonfinite


def poison(network_state, layer, module):
    """NaN in the bias of one module's layer (a value head or a policy mean)."""

    def nan_if_hit(path, leaf):
        keys = [str(getattr(p, "key", p)) for p in path]
        return jnp.full_like(leaf, jnp.nan) if keys[:3] == [layer, module, "bias"] else leaf

    return jax.tree_util.tree_map_with_path(nan_if_hit, network_state)


@pytest.fixture(scope="module")
def fresh(learning_env, learning_config, make_test_network):
    """The learning test's env, network structure and config: its compiled step is reused."""
    return new_training_state([(learning_env, make_test_network())], learning_config, seed=0)


def step_flags(config, groups, state):
    _, metrics = train_step(groups, config, state)
    return {k: v for k, v in metrics_to_host(metrics).items() if k.startswith("nonfinite/")}


@pytest.mark.parametrize(
    "layer, raised",
    [
        ("values", {"critic/left", "actor/left"}),  # NaN value -> NaN advantage and target
        ("means", {"actions/left"}),  # NaN actions, already in the rollout
    ],
)
def test_first_failure_names_the_module(learning_env, learning_config, fresh, layer, raised):
    """Ten iterations of 16 updates each: after the first update every module's losses are
    NaN, yet only the module that failed first is flagged."""
    groups, state = fresh
    state = state.replace(params=poison(state.params, layer, "left"))
    flags = step_flags(learning_config, groups, state)
    for kind in ("actor", "critic", "actions"):
        for module in ("hub", "left", "right"):
            assert flags[f"nonfinite/{kind}/{module}"] == (f"{kind}/{module}" in raised), (
                kind, module)
    assert flags["nonfinite/gradients"] and flags["nonfinite/parameters"]
    assert flags["nonfinite/any"] is True


def test_finite_run_raises_no_flag(learning_env, learning_config, fresh):
    flags = step_flags(learning_config, *fresh)
    per_module = {f"nonfinite/{kind}/{m}" for kind in ("actor", "critic", "actions")
                  for m in learning_env.body.module_names}
    overall = {f"nonfinite/{name}" for name in ("regularization", "gradients", "parameters",
                                                "rollout", "any")}
    assert set(flags) == per_module | overall
    assert not any(flags.values())


@pytest.mark.parametrize("bad", [jnp.nan, jnp.inf, -jnp.inf])
@pytest.mark.parametrize("where", ["scalar", "matrix", "half"])
def test_nonfinite_finds_one_bad_value_in_any_leaf_of_any_float_dtype(bad, where):
    """One NaN or infinity anywhere is found, whichever leaf, shape or float dtype holds it;
    integers are not looked at."""
    tree = {"scalar": jnp.float32(1.0), "matrix": jnp.ones((3, 4)),
            "half": jnp.ones(5, jnp.float16), "count": jnp.arange(3)}
    assert not bool(jax.jit(nonfinite)(tree))
    hit = dict(tree)
    hit[where] = tree[where].at[(...,) if where == "scalar" else (-1,)].set(bad)
    assert bool(jax.jit(nonfinite)(hit))
    assert not bool(nonfinite({"count": jnp.arange(3)})) and not bool(nonfinite({}))
