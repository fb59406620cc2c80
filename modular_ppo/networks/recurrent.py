"""The optional recurrent core between a trunk and its head."""

from __future__ import annotations

from typing import Any

import jax.numpy as jnp
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import Recurrence

Carry = Any
"""GRU: Float[*batch, size]; LSTM: a (cell, hidden) pair of them."""


class RecurrentCore(nnx.Module):
    """A GRU or LSTM cell over the last axis; leading axes (batch, modules) are batch axes."""

    def __init__(self, kind: Recurrence, in_features: int, size: int, *, rngs: nnx.Rngs):
        self.kind = kind
        self.size = size
        cell = nnx.GRUCell if kind == "gru" else nnx.OptimizedLSTMCell
        self.cell = cell(in_features, size, rngs=rngs)

    def initial_carry(self, leading_shape: tuple[int, ...]) -> Carry:
        """The zero state, which is also what `reset_state` restores."""
        zeros = jnp.zeros((*leading_shape, self.size), jnp.float32)
        return zeros if self.kind == "gru" else (zeros, zeros)

    def __call__(
        self, carry: Carry, features: Float[Array, "*batch feat"]
    ) -> tuple[Carry, Float[Array, "*batch size"]]:
        return self.cell(carry, features)
