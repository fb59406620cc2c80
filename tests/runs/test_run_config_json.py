"""config.json round trips, and config.json files written by earlier versions still load."""

import copy
import json
from pathlib import Path

from modular_ppo.networks import AttentionConfig, GraphConfig, NetworkConfig
from modular_ppo.runs.config import TrainRunConfig, flag
from modular_ppo.runs.config_json import config_from_json, config_to_json

ROOT = Path(__file__).resolve().parents[2]

# The "network" of a config.json written before the architecture settings were nested
# (and spelled in US English: centralized_critic, env.neighbor_hops).
OLD_NETWORK = {
    "arch": "attention",
    "embedding_size": 48,
    "message_passing_rounds": 3,
    "attention_heads": 6,
    "attention_layers": 1,
    "attention_max_hops": 2,
    "centralised_critic": True,
}


def test_a_config_round_trips_through_json():
    config = TrainRunConfig(network=NetworkConfig(
        arch="graph", graph=GraphConfig(rounds=4), attention=AttentionConfig(max_hops=1),
        centralized_critic=True))
    assert config_from_json(config_to_json(config)) == config


def test_an_old_style_config_json_loads_with_its_network_settings():
    data = {"body": "ant-modular", "backend": "cpu", "network": OLD_NETWORK,
            "env": {"neighbour_hops": 2}}
    before = copy.deepcopy(data)
    config = config_from_json(data)
    assert config.env.neighbor_hops == 2
    assert config.device_share == 0.0  # before the device share, the host stepped every env
    network = config.network
    assert network == NetworkConfig(
        arch="attention", embedding_size=48, graph=GraphConfig(rounds=3),
        attention=AttentionConfig(heads=6, layers=1, max_hops=2), centralized_critic=True)
    assert data == before  # the record read is left as it was


def test_nested_network_fields_have_prefixed_flags():
    assert flag("network.attention.max_hops") == "--attention.max-hops"
    assert flag("network.centralized_critic") == "--centralized-critic"


def test_a_stored_old_run_record_loads():
    record = json.loads(
        (ROOT / "benchmarks/results/ours_ant/summary.json").read_text())["config"]
    old = record["config"]["network"]
    network = config_from_json(record["config"]).network
    assert network.graph.rounds == old["message_passing_rounds"]
    assert network.attention == AttentionConfig(
        old["attention_heads"], old["attention_layers"], old["attention_max_hops"])
    assert network.centralized_critic == old["centralised_critic"]
    assert config_from_json(record["config"]).env.neighbor_hops == (
        record["config"]["env"]["neighbour_hops"])
