"""A plain multilayer perceptron over the last axis."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import Activation

ACTIVATIONS = {
    "tanh": jnp.tanh,
    "relu": jax.nn.relu,
    "silu": jax.nn.silu,
    "elu": jax.nn.elu,
    "gelu": jax.nn.gelu,
}


class MLP(nnx.Module):
    """Linear layers of the given widths, each followed by the activation.

    Leading axes are batch axes, so one call on module tokens [modules, batch, features]
    is a single matmul per layer with weights shared by all modules.
    """

    def __init__(
        self, in_features: int, sizes: tuple[int, ...], activation: Activation, *, rngs: nnx.Rngs
    ):
        widths = (in_features, *sizes)
        self.layers = nnx.List(
            [nnx.Linear(a, b, rngs=rngs) for a, b in zip(widths[:-1], widths[1:])]
        )
        self.activation = activation
        self.out_features = widths[-1]

    def __call__(self, x: Float[Array, "*batch in"]) -> Float[Array, "*batch out"]:
        activation = ACTIVATIONS[self.activation]
        for layer in self.layers:
            x = activation(layer(x))
        return x
