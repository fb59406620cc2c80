"""EnvConfig validation, task lookup, and models MJX refuses: clear errors that say the fix."""

from pathlib import Path

import pytest

from modular_ppo.body import BodyGraphError, load_body
from modular_ppo.body.library import BODIES_DIR
from modular_ppo.env import (
    TASK_NAMES,
    EnvConfig,
    EnvError,
    UnsupportedModelError,
    make_env,
    make_task,
)


def test_unknown_task_lists_the_known_tasks():
    with pytest.raises(EnvError, match="'fly'.*Known tasks: run_forward, run_direction"):
        EnvConfig(task="fly")
    assert set(TASK_NAMES) >= {"run_forward", "run_direction"}


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("neighbor_hops", -1, "neighbor_hops = -1"),
        ("episode_length", 0, "episode_length = 0"),
        ("team_reward", "half", "team_reward = 'half'.*\"even\".*\"root\""),
        ("reset_noise_scale", -0.1, "reset_noise_scale = -0.1; give a finite number >= 0"),
        ("ctrl_cost_weight", float("nan"), "ctrl_cost_weight = nan"),
        ("direction_deg", float("inf"), "direction_deg = inf"),
    ],
)
def test_invalid_fields_are_named_with_their_fix(field, value, message):
    with pytest.raises(EnvError, match=message):
        EnvConfig(**{field: value})


def test_tasks_carry_the_configured_terms(body):
    ant = body("ant-modular")

    def names(config):
        return [t.name for t in make_task(ant, config).terms]

    assert names(EnvConfig()) == ["forward_velocity", "healthy", "ctrl_cost"]
    assert names(EnvConfig(contact_cost_weight=5e-4, healthy_reward=0.0)) == [
        "forward_velocity", "ctrl_cost", "contact_cost"
    ]
    scopes = {t.name: t.scope for t in make_task(ant, EnvConfig(contact_cost_weight=1)).terms}
    assert scopes == {"forward_velocity": "team", "healthy": "team", "ctrl_cost": "local",
                      "contact_cost": "team"}


def _ant_variant(tmp_path: Path, old: str, new: str) -> Path:
    xml = (BODIES_DIR / "ant-modular.xml").read_text()
    assert old in xml
    path = tmp_path / "ant-variant.xml"
    path.write_text(xml.replace(old, new))
    return path


def test_a_model_mjx_refuses_names_the_file_and_the_fix(tmp_path):
    path = _ant_variant(tmp_path, 'solver="Newton"', 'solver="PGS"')
    with pytest.raises(UnsupportedModelError, match=f"{path}.*PGS.*solver=\"Newton\""):
        make_env(load_body(str(path)))


def test_healthy_angle_needs_one_root_hinge(tmp_path):
    path = _ant_variant(
        tmp_path, '<numeric name="modular_ppo:frame_skip" data="5"/>',
        '<numeric name="modular_ppo:frame_skip" data="5"/>'
        '<numeric name="modular_ppo:healthy_angle" data="-0.2 0.2"/>',
    )
    with pytest.raises(BodyGraphError, match="healthy_angle.*0 hinge joints"):
        load_body(str(path))
