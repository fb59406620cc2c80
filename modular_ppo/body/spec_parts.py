"""Pieces shared by the body generators: scene, solver settings, annotations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import mujoco

from modular_ppo.body.partition import ANNOTATION, NAMED_ANNOTATION, format_annotation
from modular_ppo.body.task import PREFIX

ModuleBodies = Mapping[str, Sequence[str]]


def new_spec(name: str, comment: str, *, timestep: float, iterations: int) -> mujoco.MjSpec:
    """An empty spec in radians with MJX-friendly solver settings: Newton with few
    iterations and 4 line-search steps, Euler damping off (as Brax's MJX bodies)."""
    spec = mujoco.MjSpec()
    spec.modelname = name
    spec.comment = comment
    spec.compiler.degree = False
    spec.option.timestep = timestep
    spec.option.solver = mujoco.mjtSolver.mjSOL_NEWTON
    spec.option.iterations = iterations
    spec.option.ls_iterations = 4
    spec.option.disableflags |= mujoco.mjtDisableBit.mjDSBL_EULERDAMP
    return spec


def add_floor(spec: mujoco.MjSpec, *, collides: bool, z: float = 0.0) -> None:
    """A floor plane and a light. A colliding floor has conaffinity 1 (contype 0), so only
    geoms with contype 1 (feet) touch it and no other pair is ever checked."""
    spec.worldbody.add_light(
        pos=[0, 0, 3], dir=[0, 0, -1], type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL
    )
    spec.worldbody.add_geom(
        name="floor",
        type=mujoco.mjtGeom.mjGEOM_PLANE,
        size=[40, 40, 0.1],
        pos=[0, 0, z],
        rgba=[0.8, 0.9, 0.8, 1],
        contype=0,
        conaffinity=1 if collides else 0,
        condim=3,
    )


def add_motor(spec: mujoco.MjSpec, joint: str, gear: float) -> None:
    spec.add_actuator(
        name=joint,
        target=joint,
        trntype=mujoco.mjtTrn.mjTRN_JOINT,
        gear=[gear, 0, 0, 0, 0, 0],
        ctrlrange=[-1, 1],
        ctrllimited=mujoco.mjtLimited.mjLIMITED_TRUE,
    )


def annotate(spec: mujoco.MjSpec, default: ModuleBodies, named: Mapping[str, ModuleBodies]) -> None:
    """Write the default partition and the named ones as `modular_ppo:partition` texts."""
    spec.add_text(name=ANNOTATION, data=format_annotation(default))
    for name, modules in named.items():
        spec.add_text(name=NAMED_ANNOTATION + name, data=format_annotation(modules))


def add_numeric(spec: mujoco.MjSpec, name: str, values: Sequence[float]) -> None:
    spec.add_numeric(name=name, data=list(values), size=len(values))


def add_task(spec: mujoco.MjSpec, **fields: float | str | Sequence[float]) -> None:
    """State the body's task as `modular_ppo:` annotations (see `modular_ppo.body.task`):
    words as <text>, numbers as <numeric>."""
    for key, value in fields.items():
        if isinstance(value, str):
            spec.add_text(name=PREFIX + key, data=value)
        else:
            add_numeric(spec, PREFIX + key, [value] if isinstance(value, (int, float)) else value)
