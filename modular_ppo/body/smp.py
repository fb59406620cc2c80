"""The SMP and AMORPHEUS morphologies as bodies, their tasks, and their benchmark sets.

Files (bodies/smp/, MIT, notices beside them): SMP's 38 XMLs (huangwl18/modular-rl,
src/environments/xmls: 12 walkers, 15 cheetahs, 8 2D humanoids, 3 hoppers) and
AMORPHEUS's 5 NerveNet files (yobibyte/amorpheus, modular-rl/src/environments/xmls).

`smp_spec("smp-walker_3_main")`: the file `walker_3_main.xml` as a spec, its global
coordinates made local (`global_to_local`), named after its file (every file of a family
has the same model name), annotated with
- its task: SMP's step for that file (`SMP_TASKS`: forward velocity of qpos[0], alive
  bonus 1 on every step where the file pays one, control cost on the action, its
  termination on qpos[1] (height) and qpos[2] (pitch), reset noise; frame_skip 4);
- partition "per_actuated_body": each limb (body with a motor) a module, as SMP's
  per-limb policies, the torso a module of its own.
- PPO preset gamma 0.99: the papers' discount (`--discount 0.99` in both repositories'
  src/arguments.py); a run of a set takes it (`runs.resolve.train_defaults`). Ours
  defaults to 0.97: at 10M steps on amorpheus-walkers (3 seeds a side) 0.99 earned 3.3x
  on the trained bodies and 2.0x zero-shot (BENCHMARKS.md, SMP / AMORPHEUS).
- architecture preset "graph" (messages along the body's tree, as SMP's policy): at 10M
  steps with gamma 0.99 it earned 2.0x the shared MLP's return on the amorpheus-walkers'
  trained bodies and 1.6x zero-shot (3 seeds), 1.4x / 1.3x on the cheetahs (docs/smp.md).
`BODY_SETS`: the sets their code trains on, by name ("smp-walker++", ...), and the
held-out bodies ("amorpheus-walkers:held-out", ...).
"""

from __future__ import annotations

import math

import mujoco

from pathlib import Path

from modular_ppo.body import library
from modular_ppo.body.global_to_local import global_to_local
from modular_ppo.body.task import add_annotations

PREFIX = "smp-"


def smp_xmls() -> Path:
    """The folder of the vendored files (inside the bundled bodies' folder)."""
    return library.BODIES_DIR / "smp" / "environments" / "xmls"

_UPRIGHT = {"velocity_source": "root_joint", "healthy_reward": (1.0,),
            "healthy_reward_on": "every_step", "ctrl_cost_weight": (1e-3,),
            "ctrl_cost_on": "ctrl", "height_source": "root_joint", "healthy_bounds": "strict",
            "reset_noise_scale": (0.005,), "reset_qvel_noise": "uniform"}
_CHEETAH = {"velocity_source": "root_joint", "healthy_reward": (0.0,),
            "ctrl_cost_weight": (0.1,), "ctrl_cost_on": "ctrl", "reset_noise_scale": (0.1,),
            "reset_qvel_noise": "normal"}
_INF = math.inf


def _walker(low: float, high: float) -> dict:
    return {**_UPRIGHT, "healthy_z": (low, high), "healthy_angle": (-1.0, 1.0)}


def _hopper(low: float, angle: float) -> dict:
    return {**_UPRIGHT, "healthy_z": (low, _INF), "healthy_angle": (-angle, angle),
            "healthy_state": (-100.0, 100.0)}


SMP_TASKS: dict[str, dict[str, str | tuple[float, ...]]] = {
    **{f"walker_{n}_{kind}": _walker(0.8 - 0.26, 2.0 - 0.26)
       for n in (2, 3) for kind in ("main", "flipped")},
    **{f"walker_4_{kind}": _walker(0.8 - 0.136, 2.0 - 0.136) for kind in ("main", "flipped")},
    **{f"walker_{n}_{kind}": _walker(0.8, 2.0) for n in (5, 6, 7) for kind in ("main", "flipped")},
    "hopper_3": _hopper(0.45, 1.0), "hopper_4": _hopper(0.6, 1.0), "hopper_5": _hopper(0.95, 1.0),
    **{f"humanoid_2d_{n}": _walker(0.4, 2.1) for n in (
        "7_left_arm", "7_left_leg", "7_lower_arms", "7_right_arm", "7_right_leg",
        "8_left_knee", "8_right_knee", "9_full")},
    **{f"cheetah_{n}": _CHEETAH for n in (
        "2_back", "2_front", "3_back", "3_balanced", "3_front", "4_allback", "4_allfront",
        "4_back", "4_front", "5_back", "5_balanced", "5_front", "6_back", "6_front", "7_full")},
    "nervenet_halfhumanoid": _walker(0.8, 2.0),
    "nervenet_ostrich": _walker(0.8, 2.0),
    "nervenet_hopper": _hopper(0.7, 0.2),
    **{f"nervenet_{n}": {**_CHEETAH, "healthy_reward": (1.0,), "healthy_reward_on": "every_step",
                         "healthy_state": (-100.0, 100.0), "healthy_bounds": "strict"}
       for n in ("fullcheetah", "halfcheetah")},
}
"""File -> its task, from its env's `step` / `reset_model` (SMP's src/environments/<file>.py,
AMORPHEUS's for the NerveNet files). Not expressible as annotations, so left out: the
NerveNet ostrich's and cheetahs' extra termination on site heights."""


def smp_names() -> list[str]:
    """Every SMP / AMORPHEUS body name ("smp-walker_3_main", ...), sorted."""
    return sorted(PREFIX + p.stem for p in smp_xmls().glob("*.xml"))


def smp_spec(name: str) -> mujoco.MjSpec | None:
    """The annotated spec of an SMP body (module docstring); None if `name` is none."""
    if not name.startswith(PREFIX) or name[len(PREFIX):] not in SMP_TASKS:
        return None
    path = smp_xmls() / f"{name[len(PREFIX):]}.xml"
    spec = mujoco.MjSpec.from_string(global_to_local(path.read_text(), str(path)))
    spec.modelname = name
    add_annotations(spec, {"frame_skip": (4,), "task_reference": f"SMP {path.stem}",
                           "partition": "per_actuated_body", "ppo_preset": "gamma=0.99",
                           "arch_preset": "graph",
                           **SMP_TASKS[path.stem]})
    return spec


def _smp(*stems: str) -> tuple[str, ...]:
    return tuple(PREFIX + s for s in stems)


def _family(prefix: str) -> tuple[str, ...]:
    return tuple(PREFIX + s for s in sorted(SMP_TASKS) if s.startswith(prefix))


_AMORPHEUS_WALKERS = _smp("walker_2_main", "walker_4_main", "walker_5_main", "walker_7_main")
_AMORPHEUS_HUMANOIDS = _smp("humanoid_2d_7_left_arm", "humanoid_2d_7_lower_arms",
                            "humanoid_2d_7_right_arm", "humanoid_2d_7_right_leg",
                            "humanoid_2d_8_left_knee", "humanoid_2d_9_full")
_AMORPHEUS_CHEETAHS = _smp("cheetah_2_back", "cheetah_2_front", "cheetah_3_back",
                           "cheetah_3_front", "cheetah_4_allback", "cheetah_4_allfront",
                           "cheetah_4_back", "cheetah_4_front", "cheetah_5_balanced",
                           "cheetah_5_front", "cheetah_6_back", "cheetah_7_full")
_HOPPERS = _family("hopper_")

BODY_SETS: dict[str, tuple[str, ...]] = {
    # SMP's README: `--morphologies walker` etc. train on every file of the family
    "smp-walker++": _family("walker_"),
    "smp-cheetah++": _family("cheetah_"),
    "smp-humanoid++": _family("humanoid_2d_"),
    "smp-hopper++": _HOPPERS,
    # AMORPHEUS's folders (modular-rl/src/environments/<set>), as its scripts train on them
    "amorpheus-walkers": _AMORPHEUS_WALKERS,
    "amorpheus-cheetahs": _AMORPHEUS_CHEETAHS,
    "amorpheus-humanoids": _AMORPHEUS_HUMANOIDS,
    "amorpheus-hoppers": _HOPPERS,
    "amorpheus-walker-humanoids": _AMORPHEUS_HUMANOIDS + _AMORPHEUS_WALKERS,
    "amorpheus-walker-humanoids-hopper": _AMORPHEUS_WALKERS + _AMORPHEUS_HUMANOIDS + _HOPPERS,
    "amorpheus-cheetah-walker-humanoids": (
        _AMORPHEUS_CHEETAHS + _AMORPHEUS_HUMANOIDS + _AMORPHEUS_WALKERS),
    "amorpheus-cheetah-walker-humanoids-hopper": (
        _AMORPHEUS_CHEETAHS + _AMORPHEUS_WALKERS + _AMORPHEUS_HUMANOIDS + _HOPPERS),
    "amorpheus-nervenet": _family("nervenet_"),
    # held out: the family's files that AMORPHEUS's training folders leave out (inferred
    # from the folders; the main walkers only, as its walkers folder holds no flipped one)
    "amorpheus-walkers:held-out": _smp("walker_3_main", "walker_6_main"),
    "amorpheus-cheetahs:held-out": _smp("cheetah_3_balanced", "cheetah_5_back", "cheetah_6_front"),
    "amorpheus-humanoids:held-out": _smp("humanoid_2d_7_left_leg", "humanoid_2d_8_right_knee"),
}
"""Set name -> its bodies: what `--body NAME` and `--held-out NAME` expand to."""
