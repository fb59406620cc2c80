"""The attention trunk: a transformer over module tokens, optionally masked by hops and
biased by hops."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import nnx
from jaxtyping import Array, Bool, Float, Int

from modular_ppo.networks.config import Activation
from modular_ppo.networks.mlp import ACTIVATIONS, MLP


def hop_mask(
    hop_distance: tuple[tuple[int, ...], ...], max_hops: int | None
) -> tuple[tuple[bool, ...], ...] | None:
    """mask[i][j]: module i may attend to module j (at most max_hops apart); None: all."""
    if max_hops is None:
        return None
    return tuple(tuple(0 <= d <= max_hops for d in row) for row in hop_distance)


def hop_buckets(
    hop_distance: tuple[tuple[int, ...], ...], hop_bias: int | None
) -> tuple[tuple[int, ...], ...] | None:
    """buckets[i][j]: which hop-bias value module i's attention to module j gets: their
    hop distance, capped at hop_bias (modules in separate trees: hop_bias); None: no bias."""
    if hop_bias is None:
        return None
    return tuple(tuple(hop_bias if d < 0 else min(d, hop_bias) for d in row)
                 for row in hop_distance)


def self_attention(
    attention: nnx.MultiHeadAttention,
    x: Float[Array, "batch modules emb"],
    mask: Bool[np.ndarray, "1 1 modules modules"] | None,
    bias: Float[Array, "1 heads modules modules"] | None,
) -> Float[Array, "batch modules emb"]:
    """`attention(x, mask=mask)` with `bias` added to the attention logits. The module's call
    takes no bias, so its steps are written out here: for a module without dropout or
    decoding they are the same computation (tests/networks/test_networks_morphology.py)."""
    query, key, value = attention.query(x), attention.key(x), attention.value(x)
    return attention.out(attention.attention_fn(query, key, value, bias=bias, mask=mask))


class TransformerBlock(nnx.Module):
    """Pre-norm self-attention and feed-forward, each with a residual connection; with
    `hop_bias_size`, a learned bias [heads, hop_bias_size] on the attention logits, looked
    up by the modules' hop bucket (`hop_buckets`)."""

    def __init__(
        self,
        size: int,
        heads: int,
        activation: Activation,
        hop_bias_size: int | None,
        *,
        rngs: nnx.Rngs,
    ):
        self.attention_norm = nnx.LayerNorm(size, rngs=rngs)
        self.attention = nnx.MultiHeadAttention(
            heads, size, decode=False, keep_rngs=False, rngs=rngs
        )
        self.feedforward_norm = nnx.LayerNorm(size, rngs=rngs)
        self.feedforward_in = nnx.Linear(size, 2 * size, rngs=rngs)
        self.feedforward_out = nnx.Linear(2 * size, size, rngs=rngs)
        self.activation = activation
        self.hop_bias = (
            None if hop_bias_size is None else nnx.Param(jnp.zeros((heads, hop_bias_size)))
        )

    def __call__(
        self,
        h: Float[Array, "batch modules emb"],
        mask: Bool[np.ndarray, "1 1 modules modules"] | None,
        buckets: Int[np.ndarray, "modules modules"] | None,
    ) -> Float[Array, "batch modules emb"]:
        bias = None if self.hop_bias is None else self.hop_bias[...][None, :, buckets]
        h = h + self_attention(self.attention, self.attention_norm(h), mask, bias)
        hidden = ACTIVATIONS[self.activation](self.feedforward_in(self.feedforward_norm(h)))
        return h + self.feedforward_out(hidden)


class Transformer(nnx.Module):
    """Module tokens -> module embeddings: an MLP encoder, attention blocks, a final norm.

    With a hop mask, one block lets information travel at most max_hops module hops. With
    a hop bias, every block learns a bias per head for hop distances 0..hop_bias
    (`hop_buckets`).
    """

    def __init__(
        self,
        in_features: int,
        hidden_sizes: tuple[int, ...],
        embedding_size: int,
        heads: int,
        layers: int,
        mask: tuple[tuple[bool, ...], ...] | None,
        hop_distance: tuple[tuple[int, ...], ...],
        hop_bias: int | None,
        activation: Activation,
        *,
        rngs: nnx.Rngs,
    ):
        self.encoder = MLP(in_features, (*hidden_sizes, embedding_size), activation, rngs=rngs)
        bias_size = None if hop_bias is None else hop_bias + 1  # the same for every body
        self.blocks = nnx.List([
            TransformerBlock(embedding_size, heads, activation, bias_size, rngs=rngs)
            for _ in range(layers)
        ])
        self.final_norm = nnx.LayerNorm(embedding_size, rngs=rngs)
        self.mask = mask
        self.buckets = hop_buckets(hop_distance, hop_bias)
        self.out_features = embedding_size

    def __call__(
        self, tokens: Float[Array, "modules batch in"]
    ) -> Float[Array, "modules batch emb"]:
        mask = None if self.mask is None else np.asarray(self.mask)[None, None]
        buckets = None if self.buckets is None else np.asarray(self.buckets)
        h = self.encoder(tokens).swapaxes(0, 1)  # attention runs over the second-last axis
        for block in self.blocks:
            h = block(h, mask, buckets)
        return self.final_norm(h).swapaxes(0, 1)
