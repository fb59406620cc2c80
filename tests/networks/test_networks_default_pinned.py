"""The default networks compute what they computed before the morphology options existed.

`default_network_outputs.json` holds, for each configuration below, built on the 4-module
chain from seed 0, every parameter's shape, sum and sum of squares, and the deterministic
actions, values and log-likelihoods of fixed pre-squash actions on fixed observations. It
was written by this file (`python tests/networks/test_networks_default_pinned.py`) at the
commit before those options were added; rewrite it only for a change that is meant to
alter what a default network computes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from flax import nnx

from modular_ppo.networks import AttentionConfig, NetworkConfig, make_network

PINNED = Path(__file__).with_name("default_network_outputs.json")
BATCH = 4

CONFIGS = {
    "separate": NetworkConfig(arch="separate"),
    "shared": NetworkConfig(arch="shared"),
    "graph": NetworkConfig(arch="graph"),
    "attention": NetworkConfig(arch="attention"),
    "attention_max_hops_1": NetworkConfig(arch="attention", attention=AttentionConfig(max_hops=1)),
    "shared_centralized_critic": NetworkConfig(arch="shared", centralized_critic=True),
}


def fingerprint(body, obs_sizes: dict[str, int], config: NetworkConfig) -> dict:
    """Parameter shapes and sums, and outputs on fixed inputs, as plain JSON values."""
    network = make_network(body, obs_sizes, config, rngs=nnx.Rngs(0))
    rng = np.random.default_rng(7)
    obs = {m: rng.standard_normal((BATCH, n)).astype(np.float32) for m, n in obs_sizes.items()}
    raw = {m: rng.standard_normal((BATCH, body.modules[m].n_actuators)).astype(np.float32)
           for m in body.actuated_modules}
    state = network.initialize_state(BATCH)
    mode = network(state, obs, deterministic=True).output
    scored = network(state, obs, extras={"raw_actions": raw})
    params = {
        "/".join(map(str, path)): [list(v.shape), float(np.sum(v, dtype=np.float64)),
                                   float(np.sum(np.square(v, dtype=np.float64)))]
        for path, v in ((p, np.asarray(x[...])) for p, x in
                        nnx.to_flat_state(nnx.state(network, nnx.Param)))
    }
    return {
        "params": params,
        "mode_raw_actions": {m: np.asarray(a).tolist()
                             for m, a in mode.extras["raw_actions"].items()},
        "values": {m: np.asarray(v).tolist() for m, v in mode.value_estimates.items()},
        "loglikelihoods": {m: np.asarray(v).tolist()
                           for m, v in scored.output.loglikelihoods.items()},
        "regularization_loss": float(scored.regularization_loss),
    }


@pytest.mark.parametrize("name", list(CONFIGS))
def test_default_networks_are_unchanged(name, chain, obs_sizes_of):
    pinned = json.loads(PINNED.read_text())[name]
    now = fingerprint(chain, obs_sizes_of(chain), CONFIGS[name])
    assert {p: v[0] for p, v in now["params"].items()} == {
        p: v[0] for p, v in pinned["params"].items()}
    for path, (_, total, squares) in pinned["params"].items():
        np.testing.assert_allclose(now["params"][path][1:], [total, squares],
                                   rtol=1e-6, atol=1e-6, err_msg=path)
    for key in ("mode_raw_actions", "values", "loglikelihoods"):
        assert set(now[key]) == set(pinned[key]), key
        for module, values in pinned[key].items():
            np.testing.assert_allclose(now[key][module], values, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{key}/{module}")
    np.testing.assert_allclose(now["regularization_loss"], pinned["regularization_loss"],
                               rtol=1e-6)


if __name__ == "__main__":
    from conftest import _chain_body, _obs_sizes  # tests/networks/conftest.py, beside this file

    chain_body = _chain_body()
    PINNED.write_text("{\n" + ",\n".join(  # one line per configuration
        f"{json.dumps(name)}: {json.dumps(fingerprint(chain_body, _obs_sizes(chain_body), config))}"
        for name, config in CONFIGS.items()) + "\n}\n")
