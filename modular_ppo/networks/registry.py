"""The architectures by name (`NetworkConfig.arch`), each with what it needs of a body.

Every place that depends on the architecture asks its `ArchitectureSpec` here instead of
comparing names: an architecture is added by adding one entry to `ARCHITECTURES` (and its
name to `networks.config.Architecture`, the choices the command line offers).
"""

from __future__ import annotations

import dataclasses

from flax import nnx

from modular_ppo.networks.actor_critic import ModularActorCritic
from modular_ppo.networks.config import NetworkConfig
from modular_ppo.networks.errors import NetworkConfigError
from modular_ppo.networks.layout import BodyLayout
from modular_ppo.networks.message_passing import MessagePassing
from modular_ppo.networks.mlp import MLP
from modular_ppo.networks.separate import SeparateNetwork
from modular_ppo.networks.token_network import TokenNetwork, TrunkBuilder
from modular_ppo.networks.transformer import Transformer, hop_mask



@dataclasses.dataclass(frozen=True)
class ArchitectureSpec:
    """One architecture and what it needs."""

    name: str
    per_module_weights: bool
    """Every module has its own weights, stored by module name: the parameters fit only
    the bodies they were built for (no several bodies, held-out bodies or transfer), and
    a module's constant morphology features add nothing."""
    graph_edges: bool
    """The network reads the module tree's edges (message passing along parents)."""
    hop_distances: bool
    """The network reads the modules' hop distances (an attention mask or bias)."""
    trunk: TrunkBuilder | None
    """The token trunk, [modules, batch, inputs] -> [modules, batch, F], of an
    architecture over padded module tokens (None: per-module MLPs, no tokens)."""

    @property
    def needs(self) -> str:
        """What the architecture reads of a body, in words (`bodies show`)."""
        if self.per_module_weights:
            return "weights per module"
        return ", ".join(("padded module tokens",
                          *(["the module tree's edges"] if self.graph_edges else []),
                          *(["hop distances"] if self.hop_distances else [])))

    @property
    def tokens(self) -> bool:
        """Modules are padded tokens of one size (`max_modules`, `max_obs_size`,
        `max_action_size`), so the weights fit any body within those sizes."""
        return self.trunk is not None

    def build(self, layout: BodyLayout, config: NetworkConfig, rngs: nnx.Rngs
              ) -> ModularActorCritic:
        """The network of this architecture for `layout`."""
        if self.trunk is None:
            return SeparateNetwork(layout, config, rngs=rngs)
        return TokenNetwork(layout, config, self.trunk, rngs=rngs)


def _mlp_trunk(layout: BodyLayout, config: NetworkConfig, inputs: int,
               hidden: tuple[int, ...], rngs: nnx.Rngs) -> MLP:
    return MLP(inputs, hidden, config.activation, rngs=rngs)


def _graph_trunk(layout: BodyLayout, config: NetworkConfig, inputs: int,
                 hidden: tuple[int, ...], rngs: nnx.Rngs) -> MessagePassing:
    return MessagePassing(inputs, hidden, config.embedding_size, config.graph.rounds,
                          layout.parents, config.activation, rngs=rngs)


def _attention_trunk(layout: BodyLayout, config: NetworkConfig, inputs: int,
                     hidden: tuple[int, ...], rngs: nnx.Rngs) -> Transformer:
    attention = config.attention
    return Transformer(inputs, hidden, config.embedding_size, attention.heads,
                       attention.layers, hop_mask(layout.hop_distance, attention.max_hops),
                       layout.hop_distance, attention.hop_bias, config.activation, rngs=rngs)


ARCHITECTURES: dict[str, ArchitectureSpec] = {
    spec.name: spec for spec in (
        ArchitectureSpec("separate", per_module_weights=True, graph_edges=False,
                         hop_distances=False, trunk=None),
        ArchitectureSpec("shared", per_module_weights=False, graph_edges=False,
                         hop_distances=False, trunk=_mlp_trunk),
        ArchitectureSpec("graph", per_module_weights=False, graph_edges=True,
                         hop_distances=False, trunk=_graph_trunk),
        ArchitectureSpec("attention", per_module_weights=False, graph_edges=False,
                         hop_distances=True, trunk=_attention_trunk),
    )
}
"""Architecture name -> its spec, in the order the command line lists them."""


def architecture(name: str) -> ArchitectureSpec:
    """The spec of architecture `name`; NetworkConfigError naming the known ones for any
    other name."""
    try:
        return ARCHITECTURES[name]
    except KeyError:
        raise NetworkConfigError(
            f"NetworkConfig.arch is {name!r}: no such architecture; choose one of "
            f"{', '.join(ARCHITECTURES)}."
        ) from None


def acting_on_any_body() -> str:
    """The architectures whose weights fit other bodies, as a message lists them
    ("shared, graph or attention")."""
    names = [name for name, spec in ARCHITECTURES.items() if not spec.per_module_weights]
    return ", ".join(names[:-1]) + " or " + names[-1]
