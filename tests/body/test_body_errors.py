"""Bad input: one BodyGraphError whose message names the file, the element and the fix."""

import re

import mujoco
import pytest

from modular_ppo.body import BodyGraph, BodyGraphError, load_body
from modular_ppo.body.library import BODIES_DIR

ANT = str(BODIES_DIR / "ant-modular.xml")
ANNOTATION = '<text name="modular_ppo:partition">'


def error_of(call, *args) -> str:
    with pytest.raises(BodyGraphError) as info:
        call(*args)
    assert info.value.__cause__ is None, "no chained traceback from the library below"
    return str(info.value)


def assert_mentions(message: str, *parts: str) -> None:
    for part in parts:
        assert re.search(part, message), f"{part!r} not in: {message}"


def ant_with_annotation(data: str) -> str:
    """The ant's MJCF with its default partition annotation replaced by `data`."""
    ant = load_body("ant-modular")
    return ant.xml.replace(ant.partition_annotation(), data)


def test_malformed_xml_string():
    message = error_of(
        BodyGraph.from_mjcf, "<mujoco><worldbody><body name='a'></worldbody></mujoco>"
    )
    assert_mentions(message, "<xml string>", "not a valid MJCF", "Line number=1", "Fix the XML")


def test_malformed_xml_file(tmp_path):
    path = tmp_path / "broken.xml"
    path.write_text("<mujoco>\n<worldbody>\n<body name='a'>\n</mujoco>\n")
    assert_mentions(
        error_of(BodyGraph.from_mjcf, path), "broken.xml", "not a valid MJCF", "Fix the XML"
    )


def test_missing_file(tmp_path):
    message = error_of(load_body, str(tmp_path / "nope.xml"))
    assert_mentions(message, "nope.xml", "no such MJCF file", "existing .xml file")


def test_unknown_bundled_name():
    assert_mentions(
        error_of(load_body, "antt-modular"),
        "unknown body 'antt-modular'",
        "Did you mean: ant-modular",
        "path of an MJCF",
    )


def test_model_that_does_not_compile():
    xml = "<mujoco><worldbody/><actuator><motor joint='missing'/></actuator></mujoco>"
    assert_mentions(
        error_of(BodyGraph.from_mjcf, xml), "could not compile", "missing", "Fix that element"
    )


@pytest.mark.parametrize("size", ["centipede-1", "centipede-5", "swimmer-1", "centipede-x"])
def test_unknown_generator_size(size):
    assert_mentions(error_of(load_body, size), size.split("-")[0], r"-N", "Use|Write")


def test_unknown_body_in_mapping():
    message = error_of(load_body, "ant-modular", {"torso": ["torso"], "legs": ["front_leftleg"]})
    assert_mentions(
        message,
        "ant-modular.xml",
        "partition mapping",
        "module 'legs'",
        "'front_leftleg'",
        "Did you mean front_left_leg",
    )


def test_unknown_body_in_annotation():
    message = error_of(BodyGraph.from_mjcf, ant_with_annotation("torso=torso; leg=tentacle"))
    assert_mentions(message, ANNOTATION, "module 'leg'", "'tentacle'", "Bodies of the agent")


def test_body_in_two_modules():
    message = error_of(
        load_body, "ant-modular", {"torso": ["torso"], "a": ["aux_1"], "b": ["aux_1"]}
    )
    assert_mentions(
        message, "body 'aux_1' is listed in two modules, 'a' and 'b'", "remove it from one"
    )
    message = error_of(BodyGraph.from_mjcf, ant_with_annotation("torso=torso, aux_1; leg=aux_1"))
    assert_mentions(message, ANNOTATION, "'aux_1' is listed in two modules")


def test_actuator_in_no_module():
    message = error_of(load_body, "ant-modular", {"front_left": ["front_left_leg"]})
    assert_mentions(
        message,
        "torso",
        "belong to no module",
        r"actuator\(s\) hip_2, ankle_2, hip_3, ankle_3, hip_4, ankle_4 would be in no module",
        "List them, or an ancestor such as the top body 'torso'",
    )


@pytest.mark.parametrize("partition", [{"torso": ["torso"], "legs": []}, {"torso": "torso"}])
def test_empty_module_in_mapping(partition):
    message = error_of(load_body, "ant-modular", partition)
    assert_mentions(message, "partition mapping", "lists no bodies", "at least one body")


def test_empty_module_in_annotation():
    message = error_of(BodyGraph.from_mjcf, ant_with_annotation("torso=torso; legs="))
    assert_mentions(message, ANNOTATION, "module 'legs' lists no bodies", "or remove it")


def test_duplicate_module_names_in_annotation():
    message = error_of(BodyGraph.from_mjcf, ant_with_annotation("torso=torso; torso=aux_1"))
    assert_mentions(message, ANNOTATION, "module 'torso' is listed twice", "rename one")


def test_duplicate_module_names_in_mapping():
    message = error_of(load_body, "ant-modular", {"torso": ["torso"], "torso ": ["aux_1"]})
    assert_mentions(message, "partition mapping", "two modules are named 'torso'", "rename one")


def test_module_name_unfit_for_metric_keys():
    message = error_of(load_body, "ant-modular", {"torso": ["torso"], "legs/front": ["aux_1"]})
    assert_mentions(message, "'legs/front' is not allowed", "letters, digits")


def test_annotation_entry_without_equals():
    message = error_of(BodyGraph.from_mjcf, ant_with_annotation("torso=torso; aux_1"))
    assert_mentions(message, ANNOTATION, "'aux_1' has no '='", "module=body")


def test_partition_string_that_does_not_fit_the_body():
    message = error_of(load_body, "hopper-modular", "4x2")
    assert_mentions(
        message,
        "hopper-modular.xml",
        "no partition '4x2'",
        "defines: 3x1",
        "subtrees, per_actuated_body",
        '<text name="modular_ppo:partition:4x2"',
    )


def test_partition_of_the_wrong_type():
    message = error_of(load_body, "ant-modular", ["torso"])
    assert_mentions(message, "partition must be a name", "not list")


def test_scenery_listed_in_a_module(gadget_xml):
    message = error_of(BodyGraph.from_mjcf, gadget_xml, {"base": ["base"], "toy": ["ball"]})
    assert_mentions(message, "module 'toy' names body 'ball'", "scenery", "remove it")


def test_rule_on_a_body_made_of_several_trees(gadget_xml):
    two = gadget_xml.replace(
        '<body name="ball" pos="-2 0 .1">', '<body name="ball" pos="-2 0 .1"><site name="push"/>'
    )
    two = two.replace(
        "</actuator>", '<motor name="roll" site="push" gear="1 0 0 0 0 0"/></actuator>'
    )
    message = error_of(BodyGraph.from_mjcf, two)
    assert_mentions(
        message,
        "'subtrees' partition needs the actuated agent to be one tree",
        "ball, base",
        "Pass a partition mapping",
    )


def test_site_actuator_on_a_static_body():
    xml = """<mujoco><worldbody><site name="anchor"/>
      <body name="b"><freejoint/><geom size=".1"/></body></worldbody>
      <actuator><motor name="push" site="anchor" gear="1 0 0 0 0 0"/></actuator></mujoco>"""
    assert_mentions(
        error_of(BodyGraph.from_mjcf, xml),
        "actuator 'push'",
        "welded to the world",
        "Put its site on a moving body",
    )


def test_tendon_actuator_coupling_separate_bodies():
    xml = """<mujoco><worldbody>
      <body name="a"><freejoint/><geom size=".1"/>
        <body name="a1"><joint name="ja"/><geom size=".1"/></body></body>
      <body name="b"><freejoint/><geom size=".1"/>
        <body name="b1"><joint name="jb"/><geom size=".1"/></body></body></worldbody>
      <tendon><fixed name="link"><joint joint="ja" coef="1"/><joint joint="jb" coef="1"/></fixed>
      </tendon>
      <actuator><motor name="pull" tendon="link"/></actuator></mujoco>"""
    assert_mentions(
        error_of(BodyGraph.from_mjcf, xml),
        "actuator 'pull'",
        "tendon 'link'",
        "'a1', 'b1'",
        "one tendon per body",
    )


def test_model_without_actuators():
    xml = "<mujoco><worldbody><body><freejoint/><geom size='.1'/></body></worldbody></mujoco>"
    assert_mentions(error_of(BodyGraph.from_mjcf, xml), "no actuators", "Add <actuator>")


@pytest.mark.parametrize(
    ("numeric", "need"),
    [
        ('name="init_qpos" data="0 0 1"', "nq = 15"),
        ('name="modular_ppo:healthy_z" data="1.0 0.2"', "min < max"),
        ('name="modular_ppo:frame_skip" data="0"', "positive integer"),
    ],
)
def test_bad_task_numerics(numeric, need):
    name = numeric.split('"')[1]
    ant = load_body("ant-modular").xml
    start = ant.index(f'<numeric name="{name}"')
    xml = ant[:start] + f"<numeric {numeric}/>" + ant[ant.index("/>", start) + 2 :]
    assert_mentions(
        error_of(BodyGraph.from_mjcf, xml), f'<numeric name="{name}"', need, "Fix its data"
    )


def test_named_partition_must_list_modules():
    spec = mujoco.MjSpec.from_file(ANT)
    next(t for t in spec.texts if t.name == "modular_ppo:partition:2x4").data = "4x2"
    message = error_of(BodyGraph.from_mjcf, spec, "2x4")
    assert_mentions(
        message, "<MjSpec>", '<text name="modular_ppo:partition:2x4">', "Write out its modules"
    )
