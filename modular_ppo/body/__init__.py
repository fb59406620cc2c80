"""Stage 1 of the pipeline: MJCF -> BodyGraph. Each name's docstring is its contract:

- the graph: `BodyGraph` (graph.py: `from_mjcf(path | xml string | MjSpec, partition=...)`,
  the compiled model, modules in module order, hop distances, the body's own task) and
  its `Module`s (modules.py: names and sorted MuJoCo index arrays);
- bundled bodies: `load_body`, `bundled_names`, `family_members` (library.py: the files
  in `bodies/`, generated families such as "centipede-N" and the sizes each has,
  limb-removed variants);
- the SMP / AMORPHEUS bodies ("smp-walker_3_main": smp.py, their global coordinates
  converted by global_to_local.py) and their benchmark sets `BODY_SETS` ("smp-walker++",
  "amorpheus-walkers:held-out", ...: names `--body` / `--held-out` expand);
- morphology features: `morphology_features`, `MORPHOLOGY_NAMES`, `MORPHOLOGY_WIDTH`
  (morphology.py: per module, its place in the module tree, joint axes / ranges / gears,
  masses, limb lengths, one fixed-width vector for any body);
- partitions: `Partition` (partition.py: the mapping / named-partition / rule format and
  the `modular_ppo:partition` annotation; rules in rules.py);
- the body's task: `TaskSpec` (task.py: the `modular_ppo:` annotations of a body file);
  its physics: MJCF's own `<option>` / `<contact>`, other solver settings applied by
  `physics_options.with_physics` (docs/physics.md);
- errors: `BodyGraphError` (errors.py);
- rendering: `modular_ppo.body.render.BodyRenderer` (headless frames of a state);
- for the CLI: `modular_ppo.body.describe` (tables and a PNG of the graph).
"""

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.graph import BodyGraph
from modular_ppo.body.library import bundled_names, family_members, load_body
from modular_ppo.body.modules import Module
from modular_ppo.body.morphology import MORPHOLOGY_NAMES, MORPHOLOGY_WIDTH, morphology_features
from modular_ppo.body.partition import Partition
from modular_ppo.body.smp import BODY_SETS
from modular_ppo.body.task import TaskSpec

__all__ = [
    "BODY_SETS", "MORPHOLOGY_NAMES", "MORPHOLOGY_WIDTH", "BodyGraph", "BodyGraphError", "Module",
    "Partition", "TaskSpec", "bundled_names", "family_members", "load_body", "morphology_features",
]
