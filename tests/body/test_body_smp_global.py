"""`global_to_local` against MuJoCo 2.3.3's own conversion of the files in global
coordinates (the numbers in fixtures/smp_global_reference.json, written by
benchmarks/smp_global_reference.py under mujoco 2.3.3)."""

from __future__ import annotations

import json
from pathlib import Path

import mujoco
import numpy as np
import pytest

from modular_ppo.body import BodyGraphError
from modular_ppo.body.global_to_local import global_to_local, is_global
from modular_ppo.body.smp import smp_xmls

SMP_XMLS = smp_xmls()

FIXTURE = Path(__file__).parent / "fixtures" / "smp_global_reference.json"
REFERENCE = json.loads(FIXTURE.read_text())


def _converted(name: str) -> mujoco.MjModel:
    path = SMP_XMLS / f"{name}.xml"
    return mujoco.MjSpec.from_string(global_to_local(path.read_text(), str(path))).compile()


def test_the_fixture_covers_every_file_in_global_coordinates():
    global_files = {p.stem for p in SMP_XMLS.glob("*.xml") if is_global(p.read_text())}
    assert set(REFERENCE) == global_files and len(global_files) == 20
    assert {r["mujoco"] for r in REFERENCE.values()} == {"2.3.3"}


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_conversion_equals_mujoco_2_3_3(name):
    model, reference = _converted(name), REFERENCE[name]
    for field, expected in reference.items():
        if field == "mujoco":
            continue
        np.testing.assert_allclose(getattr(model, field), np.asarray(expected), rtol=0,
                                   atol=1e-9, err_msg=f"{name}: {field}")


def test_a_rotated_body_and_an_unreadable_number_are_refused():
    rotated = ('<mujoco><compiler coordinate="global"/><worldbody><body name="b" pos="0 0 1" '
               'euler="0 90 0"><geom size="1"/></body></worldbody></mujoco>')
    with pytest.raises(BodyGraphError, match="x.xml: <body name=\"b\"> has euler=.*MuJoCo 2.3.3"):
        global_to_local(rotated, "x.xml")
    bad = ('<mujoco><compiler coordinate="global"/><worldbody><body name="b" pos="0 0 1/0">'
           '<geom size="1"/></body></worldbody></mujoco>')
    with pytest.raises(BodyGraphError, match="'1/0' is not a number"):
        global_to_local(bad, "x.xml")
