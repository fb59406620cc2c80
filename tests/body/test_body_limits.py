"""Body inputs refused before any work: generated sizes past their caps, family ranges too
wide, a removed module named twice, presets with a repeated key; and an MJCF without
model= named after its file."""

from __future__ import annotations

import pytest
from tiny_body import tiny_xml

from modular_ppo.body import BodyGraph, BodyGraphError, family_members, load_body
from modular_ppo.body.centipede import MAX_LEGS
from modular_ppo.body.graph import MUJOCO_DEFAULT_NAME
from modular_ppo.body.swimmer import MAX_SEGMENTS


@pytest.mark.parametrize("name, cap", [
    (f"centipede-{MAX_LEGS + 2}", f"at most {MAX_LEGS}"),
    ("centipede-" + "9" * 5000, f"at most {MAX_LEGS}"),
    (f"swimmer-{MAX_SEGMENTS + 1}", f"at most {MAX_SEGMENTS}"),
])
def test_generated_bodies_past_their_cap(name, cap):
    with pytest.raises(BodyGraphError, match=cap):
        load_body(name)


def test_the_largest_generated_sizes_are_families_members():
    assert family_members("centipede", MAX_LEGS - 2, MAX_LEGS + 100) == (
        f"centipede-{MAX_LEGS - 2}", f"centipede-{MAX_LEGS}")
    with pytest.raises(BodyGraphError, match="at most 1024 sizes"):
        family_members("centipede", 4, 10**8)


def test_a_name_too_long_for_the_os_is_an_unknown_body():
    with pytest.raises(BodyGraphError, match="unknown body"):
        load_body("x" * 5000)
    with pytest.raises(BodyGraphError, match="no such MJCF file"):
        load_body("x" * 5000 + ".xml")


def test_a_removed_module_named_twice():
    with pytest.raises(BodyGraphError, match="-without-foot_left is given more than once.*"
                                             "walker2d-modular-without-foot_left"):
        load_body("walker2d-modular-without-foot_left-without-foot_left")


def test_a_preset_key_given_twice():
    xml = tiny_xml(custom='<custom><text name="modular_ppo:ppo_preset" '
                          'data="gamma=0.9; n_envs=8; gamma=0.95"/></custom>')
    with pytest.raises(BodyGraphError, match='"gamma" is set twice'):
        BodyGraph.from_mjcf(xml)


def test_files_without_model_are_named_after_the_file(tmp_path):
    xml = tiny_xml().replace('model="tiny"', "")
    assert 'model=' not in xml
    first, second = tmp_path / "first.xml", tmp_path / "second.xml"
    first.write_text(xml)
    second.write_text(xml)
    assert (load_body(str(first)).name, load_body(str(second)).name) == ("first", "second")
    assert BodyGraph.from_mjcf(xml).name == MUJOCO_DEFAULT_NAME  # a string has no file name
    assert load_body(str(tmp_path / "first.xml")).name != MUJOCO_DEFAULT_NAME
