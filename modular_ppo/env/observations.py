"""Per-module observations: own features, the neighbors' own features, global features.

A module's observation is the concatenation, in this order, of
1. its own blocks (`OWN_FEATURES` order, empty blocks left out),
2. the own blocks of each module 1..neighbor_hops hops away, in module order,
3. the global (root body) blocks, if `global_features`.
Sizes are fixed per module; `observation_layout` names every block (`bodies show` prints
it with `describe_observations`). See `features.py` for what each feature is and its frame.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from jaxtyping import Array, Float
from mujoco import mjx

from modular_ppo.body import BodyGraph, Module
from modular_ppo.env.config import EnvConfig
from modular_ppo.env.errors import EnvError
from modular_ppo.env.features import GLOBAL_FEATURES, OWN_FEATURES, FeatureVector

GLOBAL = "global"


@dataclasses.dataclass(frozen=True)
class ObsBlock:
    """A contiguous run of one module's observation vector."""

    source: str
    """The module whose features these are, or "global" for root-body features."""
    hops: int | None
    """0 for the module's own features, k for a neighbor k hops away, None for global."""
    feature: str
    """e.g. "joint_pos", "body_vel", "root_height" (see features.py)."""
    elements: tuple[str, ...]
    """Joints, bodies or actuators the block covers, in order."""
    size: int

    @property
    def name(self) -> str:
        return f"{self.source}/{self.feature}"


class Observer:
    """Computes every module's observation from an `mjx.Data` with static gathers."""

    def __init__(self, body: BodyGraph, config: EnvConfig):
        self.features = FeatureVector(body, config)
        own = {name: self._own_blocks(body, module) for name, module in body.modules.items()}
        global_blocks = [
            (ObsBlock(GLOBAL, None, f, (), len(self.features.slots[(f, -1)])),
             self.features.slots[(f, -1)])
            for f in GLOBAL_FEATURES if config.global_features
        ]
        self.layout: dict[str, tuple[ObsBlock, ...]] = {}
        """Module -> its observation's blocks, in order."""
        self._gather: dict[str, np.ndarray] = {}
        for name in body.module_names:
            blocks = list(own[name])
            for neighbor in body.neighbors(name, config.neighbor_hops):
                hops = int(body.hop_distance[body.module_index(name), body.module_index(neighbor)])
                blocks += [(dataclasses.replace(b, hops=hops), idx) for b, idx in own[neighbor]]
            blocks += global_blocks
            self.layout[name] = tuple(b for b, _ in blocks)
            self._gather[name] = np.concatenate([np.zeros(0, np.int64)] + [i for _, i in blocks])
        empty = [name for name, idx in self._gather.items() if idx.size == 0]
        if empty:
            raise EnvError(
                f"{body.source}: module(s) {', '.join(empty)} would observe nothing with this "
                "EnvConfig (no own joints or bodies to observe). Set global_features=True or "
                "neighbor_hops >= 1."
            )
        self.sizes = {name: int(idx.size) for name, idx in self._gather.items()}
        """Module -> observation size."""

    def _own_blocks(self, body: BodyGraph, module: Module) -> list[tuple[ObsBlock, np.ndarray]]:
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
            present = [e for e in elements[kind].tolist() if (feature, e) in self.features.slots]
            if present:
                index = np.concatenate([self.features.slots[(feature, e)] for e in present])
                block = ObsBlock(
                    module.name, 0, feature, tuple(names[kind](e) for e in present), index.size
                )
                blocks.append((block, index))
        return blocks

    def __call__(self, data: mjx.Data) -> dict[str, Float[Array, "obs"]]:
        flat = self.features(data)
        return {name: flat[index] for name, index in self._gather.items()}


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

