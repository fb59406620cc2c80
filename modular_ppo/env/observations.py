"""Per-module observations, in one of two modes (`EnvConfig.observation`).

"modular" (the default): a module's observation is the concatenation, in this order, of
1. its own blocks (`OWN_FEATURES` order, empty blocks left out),
2. the own blocks of each module 1..neighbor_hops hops away, in module order,
3. the global (root body) blocks, if `global_features`.
See `features.py` for what each feature is and its frame.
"mamujoco": Gymnasium-Robotics' MaMuJoCo observations, for the bodies and partitions it
defines (mamujoco.py).
Either way an observation is a static gather from one flat vector of the state's
quantities; sizes are fixed per module; `observation_layout` names every block (`bodies
show` prints it with `describe_observations`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph, Module
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.errors import EnvError
from modular_ppo.env.features import GLOBAL_FEATURES, OWN_FEATURES, FeatureVector
from modular_ppo.env.mamujoco import Blocks, mamujoco_blocks, reads_contact_forces
from modular_ppo.env.obs_block import GLOBAL, ObsBlock

__all__ = ["GLOBAL", "ObsBlock", "Observer", "describe_observations", "observation_layout"]


def observation_reads_contact_forces(body: BodyGraph, config: EnvConfig) -> bool:
    """Whether the observations read contact forces (cfrc_ext), which the simulator then
    computes: `config.contact_forces` for "modular" observations, MaMuJoCo's categories
    (its Ant and Humanoid) for "mamujoco"."""
    if config.observation == "mamujoco":
        return reads_contact_forces(body, config)
    return config.contact_forces


class Observer:
    """Computes every module's observation from an `mjx.Data` with static gathers."""

    def __init__(self, body: BodyGraph, config: EnvConfig):
        make_blocks = mamujoco_blocks if config.observation == "mamujoco" else _modular_blocks
        features, blocks = make_blocks(body, config)
        self.features: Callable[[mjx.Data], Float[Array, "features"]] = features
        """The flat vector of the state's observed quantities."""
        self.layout: dict[str, tuple[ObsBlock, ...]] = {
            name: tuple(b for b, _ in module_blocks) for name, module_blocks in blocks.items()
        }
        """Module -> its observation's blocks, in order."""
        self._gather = {
            name: np.concatenate([np.zeros(0, np.int64)] + [i for _, i in module_blocks])
            for name, module_blocks in blocks.items()
        }
        empty = [name for name, idx in self._gather.items() if idx.size == 0]
        if empty:
            raise EnvError(
                f"{body.source}: module(s) {', '.join(empty)} would observe nothing with this "
                "EnvConfig (no own joints or bodies to observe). Set global_features=True or "
                "neighbor_hops >= 1."
            )
        self.sizes = {name: int(idx.size) for name, idx in self._gather.items()}
        """Module -> observation size."""

    def __call__(self, data: mjx.Data) -> dict[str, Float[Array, "obs"]]:
        flat = self.features(data)
        return {name: flat[index] for name, index in self._gather.items()}


def _modular_blocks(body: BodyGraph, config: EnvConfig) -> tuple[FeatureVector, Blocks]:
    """The "modular" observations: own, neighbor and global blocks (module docstring)."""
    features = FeatureVector(body, config)
    own = {name: _own_blocks(features, body, module) for name, module in body.modules.items()}
    global_blocks = [
        (ObsBlock(GLOBAL, None, f, (), len(features.slots[(f, -1)])), features.slots[(f, -1)])
        for f in GLOBAL_FEATURES if config.global_features
    ]
    blocks: Blocks = {}
    for name in body.module_names:
        module_blocks = list(own[name])
        for neighbor in body.neighbors(name, config.neighbor_hops):
            hops = int(body.hop_distance[body.module_index(name), body.module_index(neighbor)])
            module_blocks += [(dataclasses.replace(b, hops=hops), idx) for b, idx in own[neighbor]]
        blocks[name] = module_blocks + global_blocks
    return features, blocks


def _own_blocks(
    features: FeatureVector, body: BodyGraph, module: Module
) -> list[tuple[ObsBlock, np.ndarray]]:
    model = body.model
    names = {
        "joint": lambda i: model.joint(i).name or f"joint{i}",
        "body": lambda i: model.body(i).name or f"body{i}",
        "actuator": lambda i: model.actuator(i).name or f"actuator{i}",
    }
    elements = {
        "joint": module.joint_ids,
        "body": module.body_ids,
        "actuator": module.actuator_ids,
    }
    kinds = {"joint_pos": "joint", "joint_vel": "joint", "prev_action": "actuator"}
    blocks = []
    for feature in OWN_FEATURES:
        kind = kinds.get(feature, "body")
        present = [e for e in elements[kind].tolist() if (feature, e) in features.slots]
        if present:
            index = np.concatenate([features.slots[(feature, e)] for e in present])
            block = ObsBlock(
                module.name, 0, feature, tuple(names[kind](e) for e in present), index.size
            )
            blocks.append((block, index))
    return blocks


def observation_layout(body: BodyGraph, config: EnvConfig) -> dict[str, tuple[ObsBlock, ...]]:
    """Module -> the named blocks of its observation, without building the simulator."""
    return Observer(body, config).layout


def describe_observations(body: BodyGraph, config: EnvConfig) -> str:
    """The observation layout as text, one line per block, for `bodies show`."""
    lines = []
    for module, blocks in observation_layout(body, config).items():
        lines.append(f"{module}: {sum(b.size for b in blocks)} values")
        for b in blocks:
            where = "own" if b.hops == 0 else GLOBAL if b.hops is None else f"{b.hops} hop"
            detail = f"  [{', '.join(b.elements)}]" if b.elements else ""
            lines.append(f"  {b.name:<32} {b.size:>4}  ({where}){detail}")
    return "\n".join(lines)
