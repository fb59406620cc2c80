"""Stage 1 of the pipeline: MJCF -> BodyGraph.

Contract (what later stages may use):
- `BodyGraph.from_mjcf(path | xml string | mujoco.MjSpec, partition=None, name=None)`
  and `load_body(name_or_path, partition=None)` for bundled bodies in `bodies/`.
- `BodyGraph.model` (compiled `mujoco.MjModel`), `.xml` (MJCF text to rebuild it),
  `.modules` (name -> `Module`, root module first), `.module_names`, `.actuated_modules`,
  `.hop_distance` [M, M], `.neighbours(module, hops)`, `.frame_skip`, `.root_body_id`,
  `.numerics` (the model's <custom><numeric> values: task parameters such as
  "modular_ppo:healthy_z", "init_qpos").
- `Module`: `body_ids`, `joint_ids`, `qpos_adr`, `qvel_adr`, `actuator_ids` (numpy int32,
  sorted MuJoCo ids), `parent`, `children`, `root_body`, `bodies`.
- Errors are `BodyGraphError` (a ValueError) with a message naming file, element and fix.
"""

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph, Module
from modular_ppo.body.library import bundled_names, load_body

__all__ = ["BodyGraph", "BodyGraphError", "Module", "bundled_names", "load_body"]
