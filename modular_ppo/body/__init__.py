"""Stage 1 of the pipeline: MJCF -> BodyGraph.

Contract (what later stages may use):
- `BodyGraph.from_mjcf(path | xml string | mujoco.MjSpec, partition=None, name=None)`
  and `load_body(name_or_path, partition=None)` for bundled bodies (`bundled_names()`:
  the files in `bodies/` and generated sizes such as "centipede-6", "swimmer-4"; any size
  N of a generated family loads).
- `BodyGraph.model` (compiled `mujoco.MjModel`), `.xml` (MJCF text that rebuilds the same
  graph, partition included), `.modules` (name -> `Module`, root module first),
  `.module_names`, `.actuated_modules`, `.hop_distance` [M, M], `.neighbours(module, hops)`,
  `.root_body_id`, `.partition_of_actuators()`, `.partition_annotation()`, the body's
  own task `.task` (`TaskSpec`: reward weights, healthy ranges, reset noise, velocity
  source, frame skip; read from `modular_ppo:` annotations, see `modular_ppo.body.task`),
  `.frame_skip`, `.healthy_z`, `.init_qpos` [nq], `.numerics` (<custom><numeric> values).
- `Module`: `body_ids`, `joint_ids`, `qpos_adr`, `qvel_adr`, `actuator_ids` (numpy int32,
  sorted MuJoCo ids), `bodies`, `joints`, `actuators` (names), `root_body`, `root_bodies`,
  `parent`, `children`.
- Partitions (`partition=`): a mapping module -> bodies, a partition named in the MJCF
  (e.g. "4x2", "2x4d" for the ant: MaMuJoCo's), or a rule ("subtrees",
  "per_actuated_body"); the format is documented in `modular_ppo.body.partition`.
- Errors are `BodyGraphError` (a ValueError) with a message naming file, element and fix.
- `modular_ppo.body.describe`: plain-data tables and a PNG of the graph for the CLI.
"""

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.library import bundled_names, load_body
from modular_ppo.body.modules import Module
from modular_ppo.body.partition import Partition
from modular_ppo.body.task import TaskSpec

__all__ = [
    "BodyGraph", "BodyGraphError", "Module", "Partition", "TaskSpec", "bundled_names", "load_body",
]
