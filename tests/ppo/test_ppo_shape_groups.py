import jax.numpy as jnp
import numpy as np

from modular_ppo.ppo.metrics import nonfinite
from modular_ppo.ppo.shape_groups import stack_by_shape, unstack_by_shape

TREE = {
    "a": jnp.arange(6.0).reshape(2, 3),
    "b": {"c": jnp.ones(4), "d": -jnp.arange(6.0).reshape(2, 3), "e": jnp.float32(7.0)},
    "f": jnp.arange(4, dtype=jnp.int32),
}


def test_leaves_of_one_dtype_and_shape_share_a_stack_in_leaf_order():
    stacks = stack_by_shape(TREE)
    assert {key: value.shape for key, value in stacks.items()} == {
        "float32_2x3": (2, 2, 3), "float32_4": (1, 4), "float32_scalar": (1,),
        "int32_4": (1, 4)}
    np.testing.assert_array_equal(stacks["float32_2x3"][1], TREE["b"]["d"])


def test_unstacking_gives_back_each_leaf_where_it_was():
    back = unstack_by_shape(stack_by_shape(TREE), TREE)
    assert back.keys() == TREE.keys() and back["b"].keys() == TREE["b"].keys()
    for got, want in [(back["a"], TREE["a"]), (back["b"]["d"], TREE["b"]["d"]),
                      (back["b"]["e"], TREE["b"]["e"]), (back["f"], TREE["f"])]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_nonfinite_finds_a_nan_in_any_stack_and_ignores_integers():
    assert not nonfinite(TREE)
    assert nonfinite({**TREE, "b": {**TREE["b"], "d": TREE["b"]["d"].at[1, 2].set(jnp.nan)}})
    assert nonfinite({**TREE, "b": {**TREE["b"], "e": jnp.float32(jnp.inf)}})
    assert not nonfinite({"f": TREE["f"]}) and not nonfinite({})
