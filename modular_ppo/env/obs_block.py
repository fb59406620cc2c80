"""ObsBlock: one named, contiguous run of a module's observation vector."""

from __future__ import annotations

import dataclasses

GLOBAL = "global"
"""The `ObsBlock.source` of blocks every module shares (the root body's state)."""


@dataclasses.dataclass(frozen=True)
class ObsBlock:
    """A contiguous run of one module's observation vector."""

    source: str
    """The module whose features these are, or "global" for root-body features."""
    hops: int | None
    """0 for the module's own features, k for a neighbor k hops away, None for global.
    (mamujoco observations: hops in MaMuJoCo's graph of joints.)"""
    feature: str
    """e.g. "joint_pos", "body_vel", "root_height" (see features.py), or a MaMuJoCo
    category ("qpos", "cfrc_ext", ...)."""
    elements: tuple[str, ...]
    """Joints, bodies or actuators the block covers, in order (MaMuJoCo's node labels for
    its joint categories)."""
    size: int

    @property
    def name(self) -> str:
        return f"{self.source}/{self.feature}"
