"""`cli.py train --body B`: the body's `modular_ppo:ppo_preset` and `modular_ppo:arch_preset`
become the defaults, which flags still override."""

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest
import tyro

from modular_ppo.body import BodyGraphError, load_body
from modular_ppo.ppo import PPOConfig, PPOConfigError, default_ppo_config, with_preset
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.errors import RunConfigError
from modular_ppo.runs.resolve import train_defaults

ROOT = Path(__file__).resolve().parents[2]


def test_a_bodys_preset_sets_the_defaults_of_its_runs():
    assert train_defaults("halfcheetah-modular").ppo == with_preset(
        default_ppo_config(), {"gamma": "0.99", "n_epochs": "10", "n_minibatches": "16"},
        "halfcheetah")
    ppo = train_defaults("halfcheetah-modular").ppo
    assert (ppo.gamma, ppo.n_epochs, ppo.n_minibatches) == (0.99, 10, 16)
    assert train_defaults("ant-modular") == TrainRunConfig()
    assert train_defaults("halfcheetah-modular,hopper-modular") == TrainRunConfig()  # differ


def test_an_accelerator_preset_applies_on_a_gpu_or_tpu_only(tmp_path, monkeypatch):
    """`modular_ppo:ppo_preset_accelerator` goes over the accelerator's batch shape and
    the body's ppo_preset there, and is ignored on CPU; a bad value names its element."""
    from tiny_body import tiny_xml

    from modular_ppo.runs import resolve

    xml = tmp_path / "body.xml"
    xml.write_text(tiny_xml(custom=(
        '<custom><text name="modular_ppo:ppo_preset" data="gamma=0.99; n_epochs=8"/>'
        '<text name="modular_ppo:ppo_preset_accelerator" data="n_envs=2048; n_epochs=6"/>'
        "</custom>")))
    cpu = train_defaults(str(xml)).ppo
    assert cpu == with_preset(default_ppo_config("cpu"), {"gamma": "0.99", "n_epochs": "8"}, "")
    monkeypatch.setattr(resolve, "_platform", lambda: "tpu")
    tpu = train_defaults(str(xml)).ppo
    assert tpu == dataclasses.replace(default_ppo_config("tpu"), gamma=0.99, n_envs=2048,
                                      n_epochs=6)
    assert train_defaults("ant-modular").ppo == default_ppo_config("tpu")
    xml.write_text(tiny_xml(custom=(
        '<custom><text name="modular_ppo:ppo_preset_accelerator" data="n_env=2048"/></custom>')))
    with pytest.raises(PPOConfigError, match='ppo_preset_accelerator">: "n_env" is no PPO '
                                             "setting. Did you mean n_envs"):
        train_defaults(str(xml))


def test_more_bodies_than_a_run_takes_load_none_for_their_defaults():
    """The run refuses them (runs/validate.py) at once: reading presets first loaded 99
    generated centipedes, 28 s before that message."""
    from modular_ppo.runs.limits import MAX_BODIES
    from modular_ppo.runs.resolve import LoadedBodies

    class Counted(LoadedBodies):
        loads = 0

        def get(self, name, partition=None):
            Counted.loads += 1
            return super().get(name, partition)

    assert train_defaults(f"centipede-4..{4 + 2 * MAX_BODIES}", loaded=Counted()) == (
        TrainRunConfig())
    assert Counted.loads == 0


def test_several_bodies_take_the_preset_they_all_give():
    """hopper and walker2d both give gamma 0.99; so does every SMP body (the papers'
    discount), so a named set's run trains with it."""
    assert train_defaults("hopper-modular,walker2d-modular").ppo.gamma == 0.99
    config = train_defaults("amorpheus-walkers")
    assert config.ppo == with_preset(default_ppo_config(), {"gamma": "0.99"}, "smp")
    assert train_defaults("amorpheus-walkers,ant-modular") == TrainRunConfig()
    assert train_defaults("no-such-body") == TrainRunConfig()  # the run reports it


def test_a_sets_architecture_preset_is_its_default_arch_which_the_flag_overrides():
    """Every SMP body gives graph (2.0x the shared MLP on amorpheus-walkers, docs/smp.md),
    so `train --body amorpheus-walkers` needs no --arch; bodies that differ keep the
    default."""
    assert train_defaults("amorpheus-walkers").arch == "graph"
    assert train_defaults("smp-walker_3_main").arch == "graph"
    assert train_defaults("amorpheus-walkers,ant-modular").arch == TrainRunConfig().arch
    assert train_defaults("ant-modular").arch == TrainRunConfig().arch
    given = tyro.cli(TrainRunConfig, default=train_defaults("amorpheus-walkers"),
                     args=["--body", "amorpheus-walkers", "--arch", "shared"])
    assert (given.arch, given.ppo.gamma) == ("shared", 0.99)
    kept = tyro.cli(TrainRunConfig, default=train_defaults("amorpheus-walkers"),
                    args=["--body", "amorpheus-walkers"])
    assert kept.arch == "graph" and kept.multi_body


def _hopper_with_arch_preset(tmp_path: Path, data: str) -> Path:
    xml = tmp_path / "hopper.xml"
    xml.write_text(load_body("hopper-modular").xml.replace(
        '<text name="modular_ppo:ppo_preset" data="gamma=0.99"/>',
        '<text name="modular_ppo:ppo_preset" data="gamma=0.99"/>'
        f'<text name="modular_ppo:arch_preset" data="{data}"/>'))
    return xml


def test_a_bad_architecture_preset_names_the_file_and_the_fix(tmp_path):
    with pytest.raises(RunConfigError, match=(
            r'hopper.xml: <text name="modular_ppo:arch_preset" data="grpah">: '
            r"NetworkConfig.arch is 'grpah'; choose one of separate, .*graph.*\. Fix its "
            r"value, or remove it.")):
        train_defaults(str(_hopper_with_arch_preset(tmp_path, "grpah")))
    with pytest.raises(BodyGraphError, match=(
            r'hopper.xml: <text name="modular_ppo:arch_preset" data="graph shared">: give '
            r'one architecture name, e.g. "graph"')):
        load_body(str(_hopper_with_arch_preset(tmp_path, "graph shared")))
    assert load_body(str(_hopper_with_arch_preset(tmp_path, "graph"))).arch_preset == "graph"


def test_preset_values_take_each_fields_type():
    preset = {"n_epochs": "8", "gamma": "0.995", "normalize_advantages": "false",
              "gradient_clipping": "none"}
    config = with_preset(PPOConfig(), preset, "x.xml")
    assert (config.n_epochs, config.gamma, config.normalize_advantages,
            config.gradient_clipping) == (8, 0.995, False, None)


@pytest.mark.parametrize(
    ("preset", "message"),
    [
        ({"gama": "0.99"}, r'x.xml: <text name="modular_ppo:ppo_preset">: "gama" is no PPO '
                           r"setting. Did you mean gamma\?"),
        ({"n_epochs": "many"}, r"n_epochs=many: needs a whole number"),
        ({"gamma": "1.5"}, r"PPOConfig.gamma = 1.5"),
    ],
)
def test_bad_presets_name_the_file_and_the_fix(preset, message):
    with pytest.raises(PPOConfigError, match=message):
        with_preset(PPOConfig(), preset, "x.xml")


def test_the_cli_refuses_a_bad_preset_before_parsing(tmp_path):
    xml = tmp_path / "hopper.xml"
    xml.write_text(load_body("hopper-modular").xml.replace('data="gamma=0.99"', 'data="gama=0.99"'))
    runs = tmp_path / "runs"
    result = subprocess.run([sys.executable, str(ROOT / "cli.py"), "train", "--body", str(xml),
                             "--runs-root", str(runs)], capture_output=True, text=True, timeout=300)
    output = result.stdout + result.stderr
    assert result.returncode == 2, output
    assert '"gama" is no PPO setting' in output and "Traceback" not in output
    assert not runs.exists()


def test_config_json_records_the_task_in_force():
    from modular_ppo.env import EnvConfig, make_env
    from modular_ppo.runs.config_json import task_record

    body = load_body("hopper-modular")
    record = task_record(make_env(body, EnvConfig(ctrl_cost_weight=0.5), "cpu"))
    assert record["task_reference"] == "Gymnasium Hopper-v5"
    assert record["ctrl_cost_weight"] == 0.5 and record["healthy_z"] == [0.7, "inf"]
    assert task_record(object()) is None


@pytest.mark.parametrize("platform", ["cpu", "gpu", "tpu"])
def test_a_default_run_evaluates_ten_to_twenty_times_on_any_platform(platform):
    """The accelerator's default run is 20x longer (100M steps) and its steps 10x faster:
    evaluating every 500,000 steps there would take half the wall time (one TPU v5e chip,
    --backend cpu-pipelined: 136 of 300 s)."""
    from modular_ppo.runs.config import default_eval_every_steps

    evaluations = default_ppo_config(platform).total_steps // default_eval_every_steps(platform)
    assert 10 <= evaluations <= 20
    if platform == "cpu":
        assert TrainRunConfig().eval_every_steps == default_eval_every_steps(platform)
