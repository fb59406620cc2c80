"""The graph trunk: message passing along the module tree (NerveNet / SMP style)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import Activation
from modular_ppo.networks.mlp import ACTIVATIONS, MLP


def from_parent(
    messages: Float[Array, "modules batch emb"], parents: tuple[int, ...]
) -> Float[Array, "modules batch emb"]:
    """Each module receives its parent's message; the root receives zeros."""
    index = np.array([max(p, 0) for p in parents])
    has_parent = np.array([p >= 0 for p in parents], np.float32)[:, None, None]
    return messages[index] * has_parent


def mean_from_children(
    messages: Float[Array, "modules batch emb"], parents: tuple[int, ...]
) -> Float[Array, "modules batch emb"]:
    """Each module receives the mean of its children's messages; leaves receive zeros.

    Static slices and sums over the few modules of a body: their gradients are slices and
    adds, with no scatter.
    """
    children = [[c for c, p in enumerate(parents) if p == i] for i in range(len(parents))]
    zeros = jnp.zeros_like(messages[0])
    return jnp.stack(
        [sum(messages[c] for c in kids) / len(kids) if kids else zeros for kids in children]
    )


class MessagePassing(nnx.Module):
    """Module tokens -> module embeddings.

    Tokens are encoded by an MLP; then each round updates every module's embedding h as
        h <- act(W_self h + mean over children c of W_up h_c + W_down h_parent + b),
    with weights per round and per direction (bottom-up as in SMP, top-down from the
    parent). After r rounds a module's embedding depends on exactly the modules within r
    hops of it. The module tree is static structure; the weights fit any tree.
    """

    def __init__(
        self,
        in_features: int,
        hidden_sizes: tuple[int, ...],
        embedding_size: int,
        rounds: int,
        parents: tuple[int, ...],
        activation: Activation,
        *,
        rngs: nnx.Rngs,
    ):
        size = embedding_size
        self.encoder = MLP(in_features, (*hidden_sizes, size), activation, rngs=rngs)

        def linears(use_bias: bool) -> nnx.List:
            return nnx.List(
                [nnx.Linear(size, size, use_bias=use_bias, rngs=rngs) for _ in range(rounds)]
            )

        self.own = linears(use_bias=True)
        self.to_parent = linears(use_bias=False)
        self.to_children = linears(use_bias=False)
        self.parents = parents
        self.activation = activation
        self.out_features = size

    def __call__(
        self, tokens: Float[Array, "modules batch in"]
    ) -> Float[Array, "modules batch emb"]:
        activation = ACTIVATIONS[self.activation]
        h = self.encoder(tokens)
        for own, to_parent, to_children in zip(self.own, self.to_parent, self.to_children):
            up = mean_from_children(to_parent(h), self.parents)
            down = from_parent(to_children(h), self.parents)
            h = activation(own(h) + up + down)
        return h
