"""Bodies shared by the network tests: ant-modular, a 4-module chain, the MJX humanoid."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import jax
import jax.numpy as jnp
import mujoco
import numpy as np
import pytest
from flax import nnx

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.networks import AttentionConfig, ModularNetwork, NetworkConfig, make_network

CHAIN_XML = """
<mujoco model="chain4">
  <default>
    <joint type="hinge" range="-60 60"/>
    <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.04"/>
    <motor gear="10"/>
  </default>
  <worldbody>
    <body name="seg0" pos="0 0 0.2">
      <freejoint/>
      <geom/>
      <body name="seg1" pos="0.2 0 0">
        <joint name="j1a" axis="0 0 1"/>
        <joint name="j1b" axis="0 1 0" range="-30 30"/>
        <geom/>
        <body name="seg2" pos="0.2 0 0">
          <joint name="j2" axis="0 0 1"/>
          <geom/>
          <body name="seg3" pos="0.2 0 0">
            <joint name="j3" axis="0 0 1"/>
            <geom/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor joint="j1a"/>
    <motor joint="j1b"/>
    <motor joint="j2"/>
    <motor joint="j3"/>
  </actuator>
</mujoco>
"""


def _chain_body() -> BodyGraph:
    """m0 (free root, no actuators) - m1 (2 actuators) - m2 - m3: hops 0..3 from m0."""
    return BodyGraph.from_mjcf(CHAIN_XML, partition={f"m{i}": [f"seg{i}"] for i in range(4)})


def _humanoid_body() -> BodyGraph:
    return BodyGraph.from_mjcf(Path(mujoco.__file__).parent / "mjx/test_data/humanoid/humanoid.xml")


def _obs_sizes(body: BodyGraph) -> dict[str, int]:
    return {name: int(m.qpos_adr.size + m.qvel_adr.size) + 2 for name, m in body.modules.items()}


def _random_obs(obs_sizes: dict[str, int], batch: int, seed: int = 0) -> dict[str, jax.Array]:
    # numpy draws: a jax.random call would compile once per distinct shape.
    rng = np.random.default_rng(seed)
    return {
        m: jnp.asarray(rng.standard_normal((batch, n)), jnp.float32) for m, n in obs_sizes.items()
    }


@pytest.fixture(scope="session")
def bodies() -> dict[str, BodyGraph]:
    return {"ant": load_body("ant-modular"), "chain": _chain_body(), "humanoid": _humanoid_body()}


@pytest.fixture(scope="session")
def chain(bodies: dict[str, BodyGraph]) -> BodyGraph:
    return bodies["chain"]


@pytest.fixture(scope="session")
def obs_sizes_of():
    """body -> obs sizes: each module's qpos and qvel sizes plus two extra features, so
    sizes differ between modules and a module without joints still observes something."""
    return _obs_sizes


@pytest.fixture(scope="session")
def random_obs():
    """(obs_sizes, batch, seed=0) -> module -> standard normal Float[batch, size]."""
    return _random_obs


# One small width everywhere: most layers share a shape, so JAX compiles each parameter
# initializer and operation once for the whole directory.
SMALL = {
    "policy_hidden_sizes": (16,),
    "value_hidden_sizes": (16,),
    "embedding_size": 16,
    "recurrent_size": 16,
    "attention": AttentionConfig(heads=2, layers=1),
}


def _small_config(**fields) -> NetworkConfig:
    """NetworkConfig with the tests' small widths as defaults (and arch "shared"). A nested
    config ("graph", "attention") may be given as a dict of its fields, which change only
    those fields."""
    base = NetworkConfig(arch="shared", **SMALL)
    nested = {name: dataclasses.replace(getattr(base, name), **value)
              for name, value in fields.items() if isinstance(value, dict)}
    return dataclasses.replace(base, **{**fields, **nested})


@pytest.fixture(scope="session")
def small_config():
    """(**NetworkConfig fields) -> NetworkConfig with the tests' small widths as defaults;
    `attention={"max_hops": 1}` changes one field of the small attention config."""
    return _small_config


@pytest.fixture(scope="session")
def padded(bodies) -> dict[str, int]:
    """Config fields that pad the token architectures to fit all three bodies, so their
    weights have the same shapes on each (and the tests share compiled operations)."""
    sizes = [_obs_sizes(b) for b in bodies.values()]
    return {
        "max_modules": max(len(b.module_names) for b in bodies.values()),
        "max_obs_size": max(max(s.values()) for s in sizes),
        "max_action_size": max(m.n_actuators for b in bodies.values() for m in b.modules.values()),
    }


@pytest.fixture(scope="session")
def build(bodies, obs_sizes_of, small_config):
    """(body name, **NetworkConfig fields) -> a small network, built once per session from
    seed 0.

    Shared between tests: a test that changes parameters or statistics must work on
    `nnx.clone(network)`. Sampling advances its RNG, so do not rely on its RNG state.
    """
    cache: dict[tuple[str, NetworkConfig], ModularNetwork] = {}

    def build_network(body: str, **fields) -> ModularNetwork:
        key = (body, small_config(**fields))
        if key not in cache:
            cache[key] = make_network(
                bodies[body], obs_sizes_of(bodies[body]), key[1], rngs=nnx.Rngs(0)
            )
        return cache[key]

    return build_network
