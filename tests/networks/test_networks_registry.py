"""The architecture registry: every name the configuration offers has one spec, which
builds the network; any other name is refused with the known ones listed."""

import typing

import pytest

from modular_ppo.networks import NetworkConfig, NetworkConfigError
from modular_ppo.networks.config import Architecture
from modular_ppo.networks.message_passing import MessagePassing
from modular_ppo.networks.mlp import MLP
from modular_ppo.networks.registry import ARCHITECTURES, acting_on_any_body, architecture
from modular_ppo.networks.separate import SeparateNetwork
from modular_ppo.networks.token_network import TokenNetwork
from modular_ppo.networks.transformer import Transformer

TRUNKS = {"shared": MLP, "graph": MessagePassing, "attention": Transformer}


def test_the_registry_holds_exactly_the_names_the_configuration_offers():
    assert tuple(ARCHITECTURES) == typing.get_args(Architecture)
    assert acting_on_any_body() == "shared, graph or attention"


def test_an_unknown_name_is_refused_with_the_known_ones():
    with pytest.raises(NetworkConfigError,
                       match="'gnn': no such architecture; choose one of separate, shared, "
                             "graph, attention"):
        architecture("gnn")


@pytest.mark.parametrize("arch", list(ARCHITECTURES))
def test_each_spec_builds_its_own_network(build, arch):
    network = build("ant", arch=arch)
    spec = architecture(arch)
    if spec.per_module_weights:
        assert isinstance(network, SeparateNetwork) and not spec.tokens
        assert spec.needs == "weights per module"
        return
    assert isinstance(network, TokenNetwork) and spec.tokens
    assert type(network.policy.trunk) is TRUNKS[arch] is type(network.value.trunk)
    assert ("edges" in spec.needs) == (arch == "graph") == spec.graph_edges
    assert ("hop distances" in spec.needs) == (arch == "attention") == spec.hop_distances


def test_morphology_features_are_refused_where_every_module_has_its_own_weights():
    with pytest.raises(NetworkConfigError,
                       match="arch 'separate' gives every module its own weights.*use arch "
                             "shared, graph or attention"):
        NetworkConfig(arch="separate", morphology="value")
