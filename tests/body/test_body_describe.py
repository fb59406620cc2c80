"""The plain-data tables, tree text and PNG behind `cli.py bodies list|show`."""

import matplotlib.image

from modular_ppo.body import bundled_names, load_body
from modular_ppo.body.describe import (
    BODIES_HEADER,
    MODULE_HEADER,
    bodies_table,
    body_sets_table,
    draw_body_graph,
    module_table,
    module_tree_text,
    presets_text,
)


def test_bodies_table_counts_modules_actuators_and_dof():
    rows = bodies_table()
    assert [r[0] for r in rows] == bundled_names()
    assert len(BODIES_HEADER) == len(rows[0])
    assert dict((r[0], r[1:]) for r in rows)["ant-modular"] == (5, 8, 14)
    assert dict((r[0], r[1:]) for r in rows)["humanoid-modular"] == (6, 17, 23)


def test_module_table_lists_each_module_in_order():
    rows = module_table(load_body("hopper-modular"))
    assert len(MODULE_HEADER) == len(rows[0])
    assert rows == [
        ("torso", "torso", "rootx, rootz, rooty", "-", "-"),
        ("thigh", "thigh", "thigh_joint", "thigh_joint", "torso"),
        ("leg", "leg", "leg_joint", "leg_joint", "thigh"),
        ("foot", "foot", "foot_joint", "foot_joint", "leg"),
    ]


def test_module_tree_text_indents_children_under_parents():
    text = module_tree_text(load_body("ant-modular", "2x4"))
    assert text.splitlines() == [
        "torso (0 actuators): torso",
        "  front_legs (4 actuators): front_left_leg, aux_1, foot_1, front_right_leg, aux_2, foot_2",
        "  back_legs (4 actuators): back_leg, aux_3, foot_3, right_back_leg, aux_4, foot_4",
    ]


def test_draw_body_graph_writes_a_png(tmp_path):
    path = draw_body_graph(load_body("centipede-4"), tmp_path / "centipede.png")
    image = matplotlib.image.imread(path)
    assert image.ndim == 3 and image.shape[0] > 100 and image.shape[1] > 100


def test_the_presets_lines_name_every_setting_or_say_there_is_none():
    assert presets_text(load_body("halfcheetah-modular")) == (
        "PPO preset (modular_ppo:ppo_preset): gamma=0.99; n_epochs=10; n_minibatches=16\n"
        "architecture preset (modular_ppo:arch_preset): none, the CLI default"
    )
    assert presets_text(load_body("ant-modular")).splitlines()[0].endswith("none, the CLI defaults")
    assert presets_text(load_body("smp-walker_3_main")).endswith("arch_preset): graph")
    assert presets_text(load_body("hopper-modular")).splitlines()[1] == (
        "on a GPU or TPU (modular_ppo:ppo_preset_accelerator): n_envs=1024; n_minibatches=4")


def test_body_sets_table_counts_each_sets_bodies_by_kind():
    rows = {name: (count, kinds) for name, count, kinds in body_sets_table()}
    assert rows["smp-walker++"] == (12, "walker 12")
    assert rows["amorpheus-walker-humanoids"][0] == 10
    assert rows["amorpheus-nervenet"] == (5, "nervenet 5")
