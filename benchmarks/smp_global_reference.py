"""MuJoCo 2.3.3's own conversion of the SMP / AMORPHEUS files in global coordinates, as
numbers: the fixture tests/body/fixtures/smp_global_reference.json that
tests/body/test_body_smp_global.py checks `modular_ppo.body.global_to_local` against.

MuJoCo >= 2.3.4 cannot read these files, so this script runs in a venv of its own:

    python3 -m venv /tmp/mj233 && /tmp/mj233/bin/pip install mujoco==2.3.3
    /tmp/mj233/bin/python benchmarks/smp_global_reference.py

It needs only mujoco 2.3.3 and numpy (no modular_ppo). Quotients such as pos="0.13/2 ..."
(which MuJoCo 2.3.3 refuses too) are replaced by their value before compiling, as the
converter reads them. Per file it stores, with MuJoCo's compiled model: the position and
orientation of every body, joint axis and position, geom position / orientation / size,
body mass, center of mass and inertia, each rounded to 1e-12.
"""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import mujoco
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
XMLS = ROOT / "bodies" / "smp" / "environments" / "xmls"
OUT = ROOT / "tests" / "body" / "fixtures" / "smp_global_reference.json"
FIELDS = ("body_pos", "body_quat", "body_ipos", "body_iquat", "body_mass", "body_inertia",
          "jnt_pos", "jnt_axis", "geom_pos", "geom_quat", "geom_size")
_QUOTIENT = re.compile(r"(?<![\w./])(-?[0-9]+(?:\.[0-9]*)?)/([0-9]+(?:\.[0-9]*)?)")


def reference(path: Path) -> dict[str, list]:
    text = _QUOTIENT.sub(lambda m: repr(float(m[1]) / float(m[2])), path.read_text())
    with tempfile.NamedTemporaryFile("w", suffix=".xml", dir=path.parent) as file:
        file.write(text)
        file.flush()
        model = mujoco.MjModel.from_xml_path(file.name)
    return {"mujoco": mujoco.__version__,
            **{f: np.round(getattr(model, f), 12).tolist() for f in FIELDS}}


def main() -> None:
    files = sorted(p for p in XMLS.glob("*.xml") if 'coordinate="global"' in p.read_text())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({p.stem: reference(p) for p in files}, separators=(",", ":")))
    print(f"{len(files)} files -> {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
