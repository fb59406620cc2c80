"""A stream: trunk, optional recurrent core, head. Every policy and value is one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flax import nnx
from jaxtyping import Array, Float

from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.recurrent import Carry, RecurrentCore


class Stream(nnx.Module):
    """inputs -> trunk -> (recurrent core) -> head.

    The trunk maps inputs [*batch, in] to features [*batch, trunk_features]: an MLP of one
    module's observations, or a network over all module tokens [modules, batch, in].
    Without a recurrent core the carry is the empty tuple.
    """

    def __init__(
        self,
        trunk: nnx.Module,
        trunk_features: int,
        make_head: Callable[[int], nnx.Module],
        config: NetworkConfig,
        *,
        rngs: nnx.Rngs,
    ):
        self.trunk = trunk
        self.core = (
            RecurrentCore(config.recurrent, trunk_features, config.recurrent_size, rngs=rngs)
            if config.recurrent != "none"
            else None
        )
        self.head = make_head(trunk_features if self.core is None else config.recurrent_size)

    def initial_carry(self, leading_shape: tuple[int, ...]) -> Carry:
        return () if self.core is None else self.core.initial_carry(leading_shape)

    def __call__(self, carry: Carry, inputs: Float[Array, "*batch in"]) -> tuple[Carry, Any]:
        features = self.trunk(inputs)
        if self.core is not None:
            carry, features = self.core(carry, features)
        return carry, self.head(features)
