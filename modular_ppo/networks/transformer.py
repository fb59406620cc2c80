"""The attention trunk: a transformer over module tokens, optionally masked by hops."""

from __future__ import annotations

import numpy as np
from flax import nnx
from jaxtyping import Array, Bool, Float

from modular_ppo.networks.config import Activation
from modular_ppo.networks.mlp import ACTIVATIONS, MLP


def hop_mask(
    hop_distance: tuple[tuple[int, ...], ...], max_hops: int | None
) -> tuple[tuple[bool, ...], ...] | None:
    """mask[i][j]: module i may attend to module j (at most max_hops apart); None: all."""
    if max_hops is None:
        return None
    return tuple(tuple(0 <= d <= max_hops for d in row) for row in hop_distance)


class TransformerBlock(nnx.Module):
    """Pre-norm self-attention and feed-forward, each with a residual connection."""

    def __init__(self, size: int, heads: int, activation: Activation, *, rngs: nnx.Rngs):
        self.attention_norm = nnx.LayerNorm(size, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(
            heads, size, decode=False, keep_rngs=False, rngs=rngs
        )
        self.feedforward_norm = nnx.LayerNorm(size, rngs=rngs)
        self.feedforward_in = nnx.Linear(size, 2 * size, rngs=rngs)
        self.feedforward_out = nnx.Linear(2 * size, size, rngs=rngs)
        self.activation = activation

    def __call__(
        self,
        h: Float[Array, "batch modules emb"],
        mask: Bool[np.ndarray, "1 1 modules modules"] | None,
    ) -> Float[Array, "batch modules emb"]:
        h = h + self.attention(self.attention_norm(h), mask=mask)
        hidden = ACTIVATIONS[self.activation](self.feedforward_in(self.feedforward_norm(h)))
        return h + self.feedforward_out(hidden)


class Transformer(nnx.Module):
    """Module tokens -> module embeddings: an MLP encoder, attention blocks, a final norm.

    With a hop mask, one block lets information travel at most max_hops module hops.
    """

    def __init__(
        self,
        in_features: int,
        hidden_sizes: tuple[int, ...],
        embedding_size: int,
        heads: int,
        layers: int,
        mask: tuple[tuple[bool, ...], ...] | None,
        activation: Activation,
        *,
        rngs: nnx.Rngs,
    ):
        self.encoder = MLP(in_features, (*hidden_sizes, embedding_size), activation, rngs=rngs)
        self.blocks = nnx.List(
            [TransformerBlock(embedding_size, heads, activation, rngs=rngs) for _ in range(layers)]
        )
        self.final_norm = nnx.LayerNorm(embedding_size, rngs=rngs)
        self.mask = mask
        self.out_features = embedding_size

    def __call__(
        self, tokens: Float[Array, "modules batch in"]
    ) -> Float[Array, "modules batch emb"]:
        mask = None if self.mask is None else np.asarray(self.mask)[None, None]
        h = self.encoder(tokens).swapaxes(0, 1)  # attention runs over the second-last axis
        for block in self.blocks:
            h = block(h, mask)
        return self.final_norm(h).swapaxes(0, 1)
