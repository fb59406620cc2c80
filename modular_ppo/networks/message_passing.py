"""The graph trunk: message passing along the module tree (NerveNet / SMP style)."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import Activation
from modular_ppo.networks.mlp import ACTIVATIONS, MLP


def tree_matrices(parents: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(from_parent, mean_from_children), [modules, modules] each: row i of the first picks
    module i's parent (zeros for the root), row i of the second averages module i's
    children (zeros for a leaf). Messages reach modules as one product with each."""
    n = len(parents)
    from_parent, mean_from_children = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
    for child, parent in enumerate(parents):
        if parent >= 0:
            from_parent[child, parent] = 1.0
    for i in range(n):
        children = [c for c, p in enumerate(parents) if p == i]
        mean_from_children[i, children] = 1.0 / max(len(children), 1)
    return from_parent, mean_from_children


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
        from_parent, mean_from_children = tree_matrices(self.parents)
        h = self.encoder(tokens)
        for own, to_parent, to_children in zip(self.own, self.to_parent, self.to_children):
            # The three linear maps of a round as one product with their kernels side by side.
            kernels = jnp.concatenate(
                [own.kernel[...], to_parent.kernel[...], to_children.kernel[...]], axis=1)
            mapped_own, mapped_up, mapped_down = jnp.split(h @ kernels, 3, axis=-1)
            up = jnp.einsum("ij,jbe->ibe", mean_from_children, mapped_up)
            down = jnp.einsum("ij,jbe->ibe", from_parent, mapped_down)
            h = activation(mapped_own + own.bias[...] + up + down)
        return h
