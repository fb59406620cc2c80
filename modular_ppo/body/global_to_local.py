"""MJCF in global coordinates -> the same model in local coordinates, for MuJoCo >= 2.3.4.

MuJoCo up to 2.3.3 read `<compiler coordinate="global">`: every body, joint, geom, site
and camera position (and geom / site `fromto`) given in the world frame, converted to
frames local to each parent body when compiling. MuJoCo 2.3.4 dropped it ("global
coordinates no longer supported"), which refuses the SMP / AMORPHEUS walkers, hoppers and
NerveNet files. `global_to_local(xml, where)` does that conversion on the XML text:

- a body's position becomes its offset from its parent body's (global) position; a joint's,
  geom's, site's, camera's or light's position and a geom's or site's `fromto` points
  become offsets from their body's position (an element without a position stays at its
  body's origin: MuJoCo's default in both modes);
- directions (joint axes, element orientations) stay as written, which holds while every
  body frame stays aligned with the world: a body with an orientation (quat, euler,
  axisangle, xyaxes, zaxis) is refused (none of these files has one);
- a number written as a quotient "a/b" (six of these files write pos="0.13/2 ...", which
  MuJoCo >= 2.3 refuses) is read as its value;
- `<include file=...>` paths become absolute (the output is a string, read without the
  file's folder), and `coordinate="global"` is removed.

Checked against MuJoCo 2.3.3's own compilation of every such file, its numbers stored in
tests/body/fixtures/smp_global_reference.json by benchmarks/smp_global_reference.py
(tests/body/test_body_smp_global.py).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import numpy as np

from modular_ppo.body.errors import BodyGraphError

_QUOTIENT = re.compile(r"^(-?[0-9.]+(?:e-?[0-9]+)?)/([0-9.]+(?:e-?[0-9]+)?)$")
_POSITIONED = ("joint", "geom", "site", "camera", "light")
_ORIENTATIONS = ("quat", "euler", "axisangle", "xyaxes", "zaxis")


def is_global(xml: str) -> bool:
    """Whether the MJCF text sets `<compiler coordinate="global">`."""
    root = ElementTree.fromstring(xml)
    return any(c.get("coordinate") == "global" for c in root.iter("compiler"))


def global_to_local(xml: str, where: str) -> str:
    """The MJCF text `xml` (read from `where`: its includes are found beside it) with its
    global coordinates made local (module docstring); unchanged if it has none.

    Raises BodyGraphError naming the file and element for a rotated frame or a number it
    cannot read."""
    root = ElementTree.fromstring(xml)
    folder = Path(where).parent
    for include in root.iter("include"):
        include.set("file", str((folder / include.get("file", "")).resolve()))
    compilers = [c for c in root.iter("compiler") if c.get("coordinate") == "global"]
    if compilers:
        for compiler in compilers:
            del compiler.attrib["coordinate"]
        for worldbody in root.iter("worldbody"):
            _localize_children(worldbody, np.zeros(3), where)
    return ElementTree.tostring(root, encoding="unicode")


def _localize_children(parent: ElementTree.Element, origin: np.ndarray, where: str) -> None:
    """Make the positions of `parent`'s elements relative to `origin`, its global
    position, and recurse into its bodies."""
    for child in parent:
        if child.tag == "body":
            _refuse_rotation(child, where)
            position = _vector(child, "pos", where)
            child.set("pos", _text(position - origin))
            _localize_children(child, position, where)
        elif child.tag in _POSITIONED:
            if child.get("pos") is not None:
                child.set("pos", _text(_vector(child, "pos", where) - origin))
            if child.get("fromto") is not None:
                points = _numbers(child, "fromto", where).reshape(2, 3) - origin
                child.set("fromto", _text(points.ravel()))


def _refuse_rotation(element: ElementTree.Element, where: str) -> None:
    for key in _ORIENTATIONS:
        if element.get(key) is not None:
            raise BodyGraphError(
                f"{where}: <{element.tag} name=\"{element.get('name', '')}\"> has {key}=: "
                "global_to_local converts positions only (frames that stay aligned with the "
                "world). Convert this file with MuJoCo 2.3.3 (load it, then mj_saveLastXML)."
            )


def _vector(element: ElementTree.Element, key: str, where: str) -> np.ndarray:
    """A 3-vector attribute (0 where absent)."""
    if element.get(key) is None:
        return np.zeros(3)
    return _numbers(element, key, where)


def _numbers(element: ElementTree.Element, key: str, where: str) -> np.ndarray:
    values = []
    for token in element.get(key, "").split():
        quotient = _QUOTIENT.match(token)
        try:
            value = (float(quotient[1]) / float(quotient[2])) if quotient else float(token)
        except (ValueError, ZeroDivisionError):
            raise BodyGraphError(
                f"{where}: <{element.tag} name=\"{element.get('name', '')}\" {key}="
                f"\"{element.get(key)}\">: '{token}' is not a number. Write plain numbers."
            ) from None
        values.append(value)
    return np.asarray(values, np.float64)


def _text(values: np.ndarray) -> str:
    return " ".join(repr(float(v)) for v in values)
