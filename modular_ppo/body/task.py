"""The body's own task, stated in its MJCF file and read once: `TaskSpec`.

A body file states its locomotion task with `modular_ppo:` elements in `<custom>`:

numerics (`<numeric name="modular_ppo:KEY" data="..."/>`):
  forward_reward_weight  w >= 0      reward w * velocity of `velocity_source` along +x
  healthy_reward         r >= 0      alive bonus per step (see healthy_reward_on)
  ctrl_cost_weight       w >= 0      cost w * sum(x^2), x as in ctrl_cost_on
  contact_cost_weight    w >= 0      cost w * sum(clip(cfrc_ext, contact_force_range)^2)
  contact_force_range    lo hi       clip of each contact-force entry (default -inf inf)
  contact_cost_range     lo hi       clip of the contact cost itself (default -inf inf)
  terminate_when_unhealthy  0 | 1    end the episode when the state is unhealthy (1)
  healthy_z              lo hi       root body height of a healthy state
  healthy_angle          lo hi       the root body's one hinge angle (planar pitch)
  healthy_state          lo hi       every qpos entry except the root's translation, and
                                     every qvel entry (Gymnasium Hopper's state range)
  reset_noise_scale      0 <= s <= 10  reset: qpos = init_qpos + U(-s, s), qvel: see below
  frame_skip             1 <= n <= 1000  physics steps per control step (integer)
texts (`<text name="modular_ppo:KEY" data="..."/>`):
  task_reference         free text saying which standard the task follows
  velocity_source        "root" (the root body's position), "com" (the center of mass of
                         the whole model), "root_joint" (the root's x / y joint coordinates
                         in qpos, as Gymnasium's planar bodies read qpos[0]) or a body's name
  height_source          "root_body" (the root body's height, default) or "root_joint" (its
                         z joint coordinate in qpos, as Gymnasium's v5 tasks read it)
  healthy_reward_on      "healthy_state": paid when the state after the step is healthy
                         (Gymnasium v5: not on the terminating step); "every_step": paid
                         on every step of an episode, the terminating one included (Brax)
  ctrl_cost_on           "action" (the policy's action in [-1, 1]) or "ctrl" (MuJoCo's
                         ctrl, the action mapped onto each actuator's ctrlrange)
  healthy_bounds         "strict" (lo < x < hi) or "inclusive" (lo <= x <= hi)
  reset_qvel_noise       "uniform" (U(-s, s)) or "normal" (s * N(0, 1))
  ppo_preset             "field=value; ..." PPOConfig settings the body trains best with
                         (e.g. "gamma=0.99"): the CLI's defaults for this body, which
                         flags still override (checked by the run layer)
  ppo_preset_accelerator the same, for runs on a GPU or TPU only, over ppo_preset and the
                         accelerator's batch shape (e.g. "n_envs=2048")
  arch_preset            the network architecture (`--arch`) the body trains best with,
                         e.g. "graph": the CLI's default for it (checked by the run layer)
  partition, partition:<name>   the module partitions (see `partition.py`)

Anything left out takes the `TaskSpec` default. All healthy ranges are checked on the
state after the step. Every value is checked here, each numeric by its `NUMBER_RULES`
entry through `numerics.checked_numeric` (count, NaN, infinities, integers, range: finite
values within ±1e6): a wrong value or an unknown key (the near names are suggested) raises
`BodyGraphError` naming the file, the element, the value and the fix. The numbers in
`ppo_preset` must be finite here; the PPO stage checks their names, types and ranges.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from typing import Literal

import mujoco
import numpy as np

from modular_ppo.body.errors import BodyGraphError
from modular_ppo.body.naming import name_of
from modular_ppo.body.numerics import MAX_MAGNITUDE, NumberRule, checked_numeric

PREFIX = "modular_ppo:"

Range = tuple[float, float]


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """A locomotion task's definition (Gymnasium v5 / Brax vocabulary); see the module
    docstring for each field's annotation."""

    task_reference: str = ""
    """Which standard the task follows, e.g. "Gymnasium Hopper-v5"; empty if none."""
    forward_reward_weight: float = 1.0
    velocity_source: str = "root"
    """"root", "com" (whole model's center of mass), "root_joint" or a body name."""
    height_source: Literal["root_body", "root_joint"] = "root_body"
    """What healthy_z limits: the root body's height or the root's z joint coordinate."""
    healthy_reward: float = 1.0
    healthy_reward_on: Literal["healthy_state", "every_step"] = "healthy_state"
    ctrl_cost_weight: float = 0.5
    ctrl_cost_on: Literal["action", "ctrl"] = "action"
    contact_cost_weight: float = 0.0
    contact_force_range: Range = (-math.inf, math.inf)
    contact_cost_range: Range = (-math.inf, math.inf)
    terminate_when_unhealthy: bool = True
    healthy_z: Range | None = None
    healthy_angle: Range | None = None
    healthy_state: Range | None = None
    healthy_bounds: Literal["strict", "inclusive"] = "strict"
    reset_noise_scale: float = 0.1
    reset_qvel_noise: Literal["uniform", "normal"] = "normal"
    frame_skip: int = 5

    @property
    def can_fall(self) -> bool:
        """Whether the task has a healthy range at all."""
        return any(r is not None for r in (self.healthy_z, self.healthy_angle, self.healthy_state))

    def summary(self) -> dict[str, object]:
        """Field -> value, JSON-ready (infinite bounds as the strings "inf" / "-inf")."""
        def plain(value):
            if isinstance(value, float) and math.isinf(value):
                return "inf" if value > 0 else "-inf"
            if isinstance(value, tuple):
                return [plain(v) for v in value]
            return value
        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)}


_WEIGHTS = ("forward_reward_weight", "healthy_reward", "ctrl_cost_weight",
            "contact_cost_weight")
_RANGES = ("contact_force_range", "contact_cost_range", "healthy_z", "healthy_angle",
           "healthy_state")
_NUMERICS = (*_WEIGHTS, "reset_noise_scale", *_RANGES, "terminate_when_unhealthy", "frame_skip")
MAX_FRAME_SKIP = 1000
"""Physics steps per control step, at most (MuJoCo's own bodies use 1 to 10)."""
MAX_RESET_NOISE = 10.0
"""The largest reset noise scale (Gymnasium's tasks use 0.005 to 0.1)."""
_CHOICES: dict[str, tuple[str, ...]] = {
    "healthy_reward_on": ("healthy_state", "every_step"),
    "ctrl_cost_on": ("action", "ctrl"),
    "healthy_bounds": ("strict", "inclusive"),
    "reset_qvel_noise": ("uniform", "normal"),
    "height_source": ("root_body", "root_joint"),
}
_TEXTS = ("task_reference", "velocity_source", *_CHOICES)
_PARTITION_KEYS = ("partition",)
PPO_PRESET = "ppo_preset"
PPO_PRESET_ACCELERATOR = "ppo_preset_accelerator"
ARCH_PRESET = "arch_preset"
_PRESETS = (PPO_PRESET, PPO_PRESET_ACCELERATOR, ARCH_PRESET)
KNOWN_KEYS = (*_NUMERICS, *_TEXTS, *_PRESETS, *_PARTITION_KEYS, "partition:<name>")
"""Every key a `modular_ppo:` element may have."""


def read_task(
    model: mujoco.MjModel, numerics: dict[str, np.ndarray], texts: dict[str, str], where: str
) -> TaskSpec:
    """The task the model's `modular_ppo:` annotations state (defaults where silent)."""
    _check_keys(numerics, texts, where)
    values: dict[str, object] = {}
    for key in _NUMERICS:
        if PREFIX + key in numerics:
            values[key] = checked_numeric(PREFIX + key, numerics[PREFIX + key],
                                          NUMBER_RULES[key], where)
    for key in _TEXTS:
        if PREFIX + key in texts:
            values[key] = _text(key, texts[PREFIX + key].strip(), model, where)
    if "healthy_reward" not in values:
        # An alive bonus is only meaningful where the body can fall.
        falls = any(values.get(k) is not None for k in ("healthy_z", "healthy_angle", "healthy_state"))
        values["healthy_reward"] = 1.0 if falls else 0.0
    return TaskSpec(**values)


def add_annotations(spec: mujoco.MjSpec, values: dict[str, str | tuple[float, ...]]) -> None:
    """Write task annotations into `spec`: key -> a word (a `<text>`) or numbers (a
    `<numeric>`), each named `modular_ppo:<key>`; read back, and checked, by `read_task`."""
    for key, value in values.items():
        if isinstance(value, str):
            spec.add_text(name=PREFIX + key, data=value)
        else:
            spec.add_numeric(name=PREFIX + key, data=[float(v) for v in value])


def root_hinge(model: mujoco.MjModel, root: int, where: str) -> int:
    """The qpos address of the root body's one hinge joint (the pitch of a planar body),
    which `healthy_angle` limits; `root` is the body id of the root module's root body."""
    hinges = np.flatnonzero(
        (model.jnt_bodyid == root) & (model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)
    )
    if hinges.size != 1:
        raise BodyGraphError(
            f'{where}: <numeric name="{PREFIX}healthy_angle"> limits the root body\'s hinge '
            f"angle, but the root body has {hinges.size} hinge joints. Give it exactly one "
            "(the pitch of a planar body), or remove the numeric."
        )
    return int(model.jnt_qposadr[hinges[0]])


def _check_keys(numerics: dict[str, np.ndarray], texts: dict[str, str], where: str) -> None:
    for kind, names, element in (("numeric", numerics, "numeric"), ("text", texts, "text")):
        for name in names:
            if not name.startswith(PREFIX):
                continue
            key = name[len(PREFIX):]
            if key.startswith("partition:") or key in (*_PARTITION_KEYS, *_PRESETS):
                if kind == "numeric":
                    raise BodyGraphError(
                        f'{where}: <numeric name="{name}">: {key} is a <text> element. '
                        f'Write <text name="{name}" data="..."/>.'
                    )
                continue
            if key in _NUMERICS and kind == "text":
                raise BodyGraphError(
                    f'{where}: <text name="{name}">: {key} is a number. Write '
                    f'<numeric name="{name}" data="..."/>.'
                )
            if key in _TEXTS and kind == "numeric":
                raise BodyGraphError(
                    f'{where}: <numeric name="{name}">: {key} is a word. Write '
                    f'<text name="{name}" data="..."/>.'
                )
            if key not in _NUMERICS and key not in _TEXTS:
                near = difflib.get_close_matches(key, [*_NUMERICS, *_TEXTS], n=1, cutoff=0.5)
                hint = f" Did you mean {PREFIX}{near[0]}?" if near else ""
                raise BodyGraphError(
                    f'{where}: <{element} name="{name}">: unknown key "{key}".{hint} Known '
                    f"keys: {', '.join(KNOWN_KEYS)}. Rename or remove the element."
                )


NUMBER_RULES: dict[str, NumberRule] = {
    **{key: NumberRule("real", f"one finite number >= 0 and <= {MAX_MAGNITUDE:g}", high=MAX_MAGNITUDE,
                       low=0.0) for key in _WEIGHTS},
    "reset_noise_scale": NumberRule(
        "real", f"one finite number >= 0 and <= {MAX_RESET_NOISE:g} (a noise scale in m or "
        "rad, e.g. 0.1)", low=0.0, high=MAX_RESET_NOISE),
    **{key: NumberRule("range", "two values 'min max' with min < max (inf and -inf "
                       f"allowed; finite ones within ±{MAX_MAGNITUDE:g})", count=2)
       for key in _RANGES},
    "terminate_when_unhealthy": NumberRule(
        "flag", "one value, 1 (end episodes on unhealthy states) or 0 (never)"),
    "frame_skip": NumberRule("integer", f"one positive integer, at most {MAX_FRAME_SKIP}",
                             low=1, high=MAX_FRAME_SKIP),
}
"""The rule each `modular_ppo:` numeric is read by (`numerics.checked_numeric`)."""


def _text(key: str, value: str, model: mujoco.MjModel, where: str) -> str:
    element = f'<text name="{PREFIX}{key}" data="{value}">'
    if key in _CHOICES:
        if value not in _CHOICES[key]:
            choices = " or ".join(f'"{c}"' for c in _CHOICES[key])
            raise BodyGraphError(f"{where}: {element}: use {choices}. Fix its data.")
        return value
    if key == "velocity_source":
        bodies = [name_of(model, "body", b) for b in range(1, model.nbody)]
        if value not in ("root", "com", "root_joint", *bodies):
            near = difflib.get_close_matches(value, bodies, n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(near)}?" if near else ""
            raise BodyGraphError(
                f'{where}: {element}: "{value}" names no body.{hint} Use "root", "com", '
                f"\"root_joint\" or one of the bodies: {', '.join(bodies)}."
            )
    return value


def read_ppo_preset(texts: dict[str, str], where: str, key: str = PPO_PRESET) -> dict[str, str]:
    """The `modular_ppo:ppo_preset` text (or the `key` one, PPO_PRESET_ACCELERATOR) as
    field -> value (strings; the PPO stage checks the names and converts the values)."""
    text = texts.get(PREFIX + key, "").strip()
    preset = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        field, sep, value = item.partition("=")
        if not sep or not field.strip() or not value.strip():
            raise BodyGraphError(
                f'{where}: <text name="{PREFIX}{key}" data="{text}">: "{item}" is not '
                '"field=value". Write it as "gamma=0.99; n_epochs=4".'
            )
        if _is_non_finite_number(value.strip()):
            raise BodyGraphError(
                f'{where}: <text name="{PREFIX}{key}" data="{text}">: "{item}" is not '
                'a finite number. Give a finite value, e.g. "gamma=0.99", or remove it.'
            )
        if field.strip() in preset:
            raise BodyGraphError(
                f'{where}: <text name="{PREFIX}{key}" data="{text}">: "{field.strip()}" '
                "is set twice. Keep one value for it."
            )
        preset[field.strip()] = value.strip()
    return preset


def read_arch_preset(texts: dict[str, str], where: str) -> str | None:
    """The `modular_ppo:arch_preset` text: one architecture name, or None where the file
    gives none (the run layer checks that the architecture exists)."""
    text = texts.get(PREFIX + ARCH_PRESET, "").strip()
    if len(text.split()) > 1:
        raise BodyGraphError(
            f'{where}: <text name="{PREFIX}{ARCH_PRESET}" data="{text}">: give one '
            'architecture name, e.g. "graph" (`python cli.py train --help`, --arch).'
        )
    return text or None


def _is_non_finite_number(text: str) -> bool:
    try:
        return not math.isfinite(float(text))
    except ValueError:
        return False
