"""A catalog of bad inputs across the tool, one case each: every one gets a single clear
error naming the thing at fault, where it is and the fix, a non-zero exit code from the
CLI, and no traceback.

Most cases fail before anything is compiled. The resume cases work on copies of the
session's straight run (conftest); the env cases on one tiny env.
"""

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import jax
import jax.numpy as jnp
import pytest
from reliability_tools import TINY, cli_main, plain, tiny_xml
from rich.console import Console

from modular_ppo.body import load_body
from modular_ppo.env import ActionError, make_env
from modular_ppo.env.toy import TargetReachingEnv
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.errors import EnvRewardError
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.run_dir import new_run_dir
from modular_ppo.runs.train_run import run_training


@dataclass
class Paths:
    tmp: Path
    body: Path
    """The tiny body's MJCF file."""
    runs_root: Path

    def xml(self, text: str, name: str = "body.xml") -> Path:
        path = self.tmp / name
        path.write_text(text)
        return path

    def custom(self, elements: str) -> Path:
        """The tiny body's MJCF file with these elements in its <custom>."""
        return self.xml(tiny_xml(custom=f"<custom>{elements}</custom>"))

    def train(self, body: Path | str, *flags: str) -> list[str]:
        return ["train", "--body", str(body), *TINY, "--runs-root", str(self.tmp / "runs"),
                *flags]


@dataclass
class Case:
    id: str
    argv: Callable[[Paths], list[str]]
    expected: Callable[[Paths], list[str]]
    """Fragments the message must hold: the thing, the place, the fix."""


def _case(id, argv, *expected):
    return Case(id, argv, lambda p: [e(p) if callable(e) else e for e in expected])


def _missing(p: Paths) -> str:
    return str(p.tmp / "missing.xml")


CLI_CASES = [
    # MJCF files
    _case("mjcf_missing_file", lambda p: p.train(_missing(p)),
          _missing, "no such MJCF file", "bodies list"),
    _case("mjcf_malformed_xml",
          lambda p: p.train(p.xml("<mujoco><worldbody><body></worldbody></mujoco>")),
          lambda p: str(p.tmp / "body.xml"), "not a valid MJCF file", "Line number=1",
          "Fix the XML at that line"),
    _case("mjcf_unknown_attribute", lambda p: p.train(p.xml(tiny_xml(base='<geom sizee="1"/>'))),
          "unrecognized attribute: 'sizee'", "line 11", "Fix the XML at that line"),
    _case("mjcf_missing_mesh_file",
          lambda p: p.train(p.xml(tiny_xml(
              custom='<asset><mesh name="m" file="nope.stl"/></asset>'
          ))),
          "could not compile", "nope.stl", "Fix that element"),
    _case("mjcf_pgs_solver_refused_by_mjx",
          lambda p: p.train(p.xml(tiny_xml(option='solver="PGS"')), "--backend", "mjx"),
          "MJX cannot simulate", "PGS", 'set <option solver="Newton"/>'),
    _case("mjcf_ellipsoid_box_collision_refused_by_mjx",
          lambda p: p.train(p.xml(tiny_xml(
              world='<geom type="box" size="1 1 0.1" pos="0 0 -1"/>',
              base='<geom type="ellipsoid" size="0.05 0.05 0.08"/>',
          )), "--backend", "mjx"),
          "MJX cannot simulate", "ellipsoid", "another type", "<contact><exclude>"),
    _case("mjcf_body_transmission_refused_by_mjx",
          lambda p: p.train(p.xml(tiny_xml(actuators=(
              '<adhesion name="stick" body="base" ctrlrange="0 1"/>'
              '<motor name="bend" joint="elbow" ctrlrange="-1 1"/>'
          ))), "--backend", "mjx"),
          "MJX cannot simulate", "mjTRN_BODY", "Change or remove that feature"),
    _case("mjcf_task_negative_weight",
          lambda p: p.train(p.custom('<numeric name="modular_ppo:ctrl_cost_weight" data="-1"/>')),
          '<numeric name="modular_ppo:ctrl_cost_weight" data="-1">', "one finite number >= 0",
          "Fix its data"),
    _case("mjcf_task_non_finite_number",
          lambda p: p.train(p.custom('<numeric name="modular_ppo:frame_skip" data="inf"/>')),
          lambda p: str(p.tmp / "body.xml"), '<numeric name="modular_ppo:frame_skip" data="inf">',
          "one positive integer, at most 1000", "Fix its data"),
    _case("mjcf_task_number_out_of_range",
          lambda p: ["bodies", "show",
                     str(p.custom('<numeric name="modular_ppo:ctrl_cost_weight" data="1e300"/>'))],
          '<numeric name="modular_ppo:ctrl_cost_weight" data="1e+300">', "<= 1e+06",
          "Fix its data"),
    _case("mjcf_task_range_with_nan",
          lambda p: p.train(p.custom('<numeric name="modular_ppo:healthy_z" data="nan 1"/>')),
          '<numeric name="modular_ppo:healthy_z" data="nan 1">', "min < max"),
    _case("mjcf_init_qpos_non_finite",
          lambda p: p.train(p.custom('<numeric name="init_qpos" data="0 inf"/>')),
          '<numeric name="init_qpos" data="0 inf">', "nq = 2 finite values"),
    _case("mjcf_ppo_preset_non_finite",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" data="gamma=inf"/>')),
          "modular_ppo:ppo_preset", '"gamma=inf" is not a finite number'),
    _case("mjcf_task_unknown_key",
          lambda p: p.train(p.custom('<numeric name="modular_ppo:healthy_zz" data="0 1"/>')),
          'unknown key "healthy_zz"', "Did you mean modular_ppo:healthy_z?", "Known keys"),
    _case("mjcf_task_velocity_source_names_no_body",
          lambda p: p.train(p.custom('<text name="modular_ppo:velocity_source" data="tail"/>')),
          '"tail" names no body', '"root", "com"', "base, arm"),
    _case("mjcf_no_actuators", lambda p: p.train(p.xml(tiny_xml(actuators=""))),
          "no actuators", "Add <actuator> elements"),
    _case("mjcf_healthy_angle_without_root_hinge",
          lambda p: p.train(p.custom('<numeric name="modular_ppo:healthy_angle" data="-1 1"/>')),
          'modular_ppo:healthy_angle', "root body has 0 hinge joints", "remove the numeric"),
    # partitions
    _case("partition_annotation_names_a_missing_body",
          lambda p: p.train(p.custom('<text name="modular_ppo:partition" '
                                     'data="a=base; b=nosuchbody"/>')),
          '<text name="modular_ppo:partition">', "module 'b'", "'nosuchbody'",
          "Bodies of the agent: arm, base"),
    _case("partition_annotation_lists_a_body_twice",
          lambda p: p.train(p.custom('<text name="modular_ppo:partition" data="a=base; b=base"/>')),
          "body 'base' is listed in two modules, 'a' and 'b'", "remove it from one"),
    _case("partition_unknown_name", lambda p: p.train("hopper-modular", "--partition", "4x2"),
          "hopper-modular.xml", "no partition '4x2'", "Partitions it defines: 3x1",
          "[body, ...]"),
    _case("generated_body_size_not_a_number", lambda p: p.train("centipede-x"),
          "centipede-x", "whole number", "centipede-N"),
    _case("generated_body_too_small", lambda p: p.train("swimmer-1"),
          "swimmer-1", "at least 2 segments", "swimmer-4"),
    # command line
    _case("unknown_body_lists_near_names", lambda p: p.train("ant-modulr"),
          "unknown body 'ant-modulr'", "Did you mean: ant-modular", "path of an MJCF"),
    _case("unknown_subcommand", lambda p: ["trian"],
          "Unrecognized options: trian", "Available subcommands: train"),
    _case("unknown_flag_suggests_the_near_one",
          lambda p: p.train(p.body, "--ppo.n-env", "8"),
          "Unrecognized options: --ppo.n-env", "Perhaps you meant", "--ppo.n-envs"),
    _case("flag_of_wrong_type", lambda p: p.train(p.body, "--ppo.n-envs", "abc"),
          "--ppo.n-envs", "'abc'", "INT"),
    _case("flag_value_not_a_choice", lambda p: p.train(p.body, "--arch", "mlp"),
          "invalid choice 'mlp'", "--arch", "'separate', 'shared', 'graph', 'attention'"),
    _case("distributed_on_the_cpu_backend",
          lambda p: p.train(p.body, "--backend", "cpu", "--distributed.coordinator-address",
                            "localhost:9", "--distributed.num-processes", "2",
                            "--distributed.process-id", "0"),
          "--backend cpu with --distributed.*", "Use --backend mjx"),
    _case("distributed_with_a_bad_coordinator",
          lambda p: p.train(p.body, "--distributed.coordinator-address", "localhost",
                            "--distributed.num-processes", "2", "--distributed.process-id", "0"),
          "coordinator_address = 'localhost'", "'host:port'"),
    _case("run_name_with_a_path", lambda p: p.train(p.body, "--run-name", "../elsewhere"),
          "--run-name '../elsewhere'", "plain folder name", "--runs-root"),
    _case("runs_root_is_a_file",
          lambda p: ["train", "--body", str(p.body), *TINY, "--runs-root",
                     str(p.xml("not a folder", "file.txt"))],
          lambda p: f"--runs-root {p.tmp / 'file.txt'}", "is a file, not a folder",
          "folder you can write to"),
    # output paths: checked before any work
    _case("png_in_a_folder_under_a_file",
          lambda p: ["bodies", "show", str(p.body), "--png",
                     str(p.xml("not a folder", "file.txt") / "graph.png")],
          lambda p: f"--png {p.tmp / 'file.txt' / 'graph.png'}",
          lambda p: f"{p.tmp / 'file.txt'} is a file, not a folder", "folder you can write to"),
    _case("png_is_a_directory",
          lambda p: ["bodies", "show", str(p.body), "--png", str(p.tmp)],
          lambda p: f"--png {p.tmp}: is a directory", "Give a file path"),
    _case("png_of_another_file_type",
          lambda p: ["bodies", "show", str(p.body), "--png", str(p.tmp / "graph.jpeg")],
          "unknown file type '.jpeg'", "ending in .png"),
    _case("render_out_in_a_folder_under_a_file",
          lambda p: ["render", "--run", str(p.tmp / "run"), "--out",
                     str(p.xml("not a folder", "file.txt") / "v.mp4")],
          lambda p: f"{p.tmp / 'file.txt'} is a file, not a folder"),
    _case("render_out_of_another_file_type",
          lambda p: ["render", "--run", str(p.tmp / "run"), "--out", str(p.tmp / "v.avi")],
          "unknown file type '.avi'", ".mp4 or .gif"),
    _case("analyze_png_is_a_directory",
          lambda p: ["analyze", str(p.tmp / "run"), "--png", str(p.tmp)],
          lambda p: f"--png {p.tmp}: is a directory"),
    _case("runs_root_under_a_file",
          lambda p: ["train", "--body", str(p.body), *TINY, "--runs-root",
                     str(p.xml("not a folder", "file.txt") / "runs")],
          lambda p: f"--runs-root {p.tmp / 'file.txt' / 'runs'}",
          lambda p: f"{p.tmp / 'file.txt'} is a file, not a folder"),
    # configs: types, ranges, combinations
    _case("n_envs_not_a_multiple_of_minibatches",
          lambda p: p.train(p.body, "--ppo.n-envs", "6", "--ppo.n-minibatches", "4"),
          "PPOConfig.n_envs = 6", "divisible by n_minibatches = 4", "multiple of n_minibatches"),
    _case("gamma_out_of_range", lambda p: p.train(p.body, "--ppo.gamma", "1.5"),
          "PPOConfig.gamma = 1.5", "must be in [0, 1]"),
    _case("clip_range_zero", lambda p: p.train(p.body, "--ppo.clip-range", "0"),
          "PPOConfig.clip_range = 0.0", "(0, 1), e.g. 0.2"),
    _case("learning_rate_infinite", lambda p: p.train(p.body, "--ppo.learning-rate", "inf"),
          "PPOConfig.learning_rate = inf", "must be a finite number"),
    _case("episode_length_zero", lambda p: p.train(p.body, "--env.episode-length", "0"),
          "EnvConfig.episode_length = 0", "positive number of control steps"),
    _case("unknown_task", lambda p: p.train(p.body, "--env.task", "fly"),
          "EnvConfig.task = 'fly'", "Known tasks: run_forward, run_direction"),
    _case("attention_heads_not_dividing_embedding",
          lambda p: p.train(p.body, "--arch", "attention", "--attention.heads", "3"),
          "NetworkConfig.attention.heads (3)", "must divide embedding_size (64)"),
    _case("shared_network_too_narrow_for_the_body",
          lambda p: p.train(p.body, "--arch", "shared", "--max-modules", "1"),
          "--max-modules 1: body 'tiny' has 2 modules", "Give --max-modules 2 or more"),
    _case("keep_no_checkpoints", lambda p: p.train(p.body, "--keep-checkpoints", "0"),
          "--keep-checkpoints 0", "out of range", "whole number from 1 to 10,000"),
    # numbers beyond their stated range (runs/limits.py), before any work
    _case("seed_past_its_dtype", lambda p: p.train(p.body, "--seed", str(2**70)),
          f"--seed {2**70}", "out of range", "whole number from 0 to 4,294,967,295"),
    _case("episode_length_huge", lambda p: p.train(p.body, "--env.episode-length", "10" * 15),
          "--env.episode-length", "out of range", "from 1 to 1,000,000"),
    _case("initial_log_std_huge", lambda p: p.train(p.body, "--init-log-std", "1e308"),
          "--init-log-std 1e+308", "finite number from -20 to 5"),
    _case("reset_noise_scale_huge",
          lambda p: p.train(p.body, "--env.reset-noise-scale", "1e300"),
          "--env.reset-noise-scale 1e+300", "from 0 to 10"),
    _case("reset_noise_scale_nan", lambda p: p.train(p.body, "--env.reset-noise-scale", "nan"),
          "EnvConfig.reset_noise_scale = nan", "give a finite number >= 0"),
    _case("body_share_huge",
          lambda p: p.train(f"{p.body},centipede-4", "--arch", "shared",
                            "--body-env-shares", "1", "1e300"),
          "--body-env-shares 1.0 1e+300", "finite number in (0, 1e+06]"),
    _case("n_envs_past_the_cap", lambda p: p.train(p.body, "--ppo.n-envs", str(2**20)),
          f"--ppo.n-envs {2**20}", "from 1 to 262,144"),
    _case("total_steps_past_the_cap", lambda p: p.train(p.body, "--ppo.total-steps", "1" + "0" * 20),
          "--ppo.total-steps", "from 1 to 1,000,000,000,000,000"),
    _case("min_std_denormal", lambda p: p.train(p.body, "--min-std", "1e-320"),
          "--min-std 1e-320", "from 1e-08 to 100"),
    # presets and annotations, strict
    _case("ppo_preset_malformed",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" data="gamma"/>')),
          '<text name="modular_ppo:ppo_preset" data="gamma">', '"gamma" is not "field=value"'),
    _case("ppo_preset_duplicate_key",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" '
                                     'data="gamma=0.9; gamma=0.95"/>')),
          "modular_ppo:ppo_preset", '"gamma" is set twice', "Keep one value"),
    _case("ppo_preset_none_where_not_allowed",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" data="gamma=none"/>')),
          lambda p: str(p.tmp / "body.xml"), "gamma=none: needs a number", "Fix its value"),
    _case("ppo_preset_past_the_cap",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" '
                                     'data="n_envs=4000000"/>')),
          lambda p: str(p.tmp / "body.xml"), "modular_ppo:ppo_preset",
          "--ppo.n-envs 4000000: out of range"),
    _case("ppo_preset_not_a_whole_number",
          lambda p: p.train(p.custom('<text name="modular_ppo:ppo_preset" data="n_envs=1e9"/>')),
          "n_envs=1e9: needs a whole number"),
    _case("variant_suffix_repeated",
          lambda p: ["bodies", "show", "walker2d-modular-without-foot_left-without-foot_left"],
          "-without-foot_left is given more than once", "walker2d-modular-without-foot_left."),
    # sizes, capped before any work
    _case("generated_body_too_large", lambda p: ["bodies", "show", "centipede-100000"],
          "centipede-100000", "at most 256"),
    _case("generated_body_size_with_thousands_of_digits",
          lambda p: ["bodies", "show", "swimmer-" + "9" * 5000], "swimmer-", "at most 256"),
    _case("family_range_too_wide", lambda p: p.train("centipede-4..100000000", "--arch", "shared"),
          "centipede-4..100000000", "at most 1024 sizes"),
    _case("too_many_bodies", lambda p: p.train("centipede-4..200", "--arch", "shared"),
          "99 bodies", "at most 64"),
    # several processes: checked before JAX's runtime starts
    _case("distributed_rank_without_coordinator",
          lambda p: p.train(p.body, "--distributed.num-processes", "2",
                            "--distributed.process-id", "5"),
          "--distributed.num-processes 2 and --distributed.process-id 5 without "
          "--distributed.coordinator-address", "Give all three"),
    _case("distributed_rank_outside_the_count",
          lambda p: p.train(p.body, "--distributed.coordinator-address", "127.0.0.1:1234",
                            "--distributed.num-processes", "2", "--distributed.process-id", "2"),
          "process_id = 2", "from 0 to num_processes - 1 = 1"),
    _case("distributed_port_out_of_range",
          lambda p: p.train(p.body, "--distributed.coordinator-address", "127.0.0.1:70000",
                            "--distributed.num-processes", "2", "--distributed.process-id", "0"),
          "'127.0.0.1:70000'", "a whole number from 1 to 65535"),
    _case("distributed_host_that_does_not_resolve",
          lambda p: p.train(p.body, "--distributed.coordinator-address",
                            "no-such-host.invalid:1234", "--distributed.num-processes", "2",
                            "--distributed.process-id", "1", "--distributed.timeout-s", "5"),
          "'no-such-host.invalid' cannot be resolved", "name or IP address"),
    _case("distributed_timeout_not_positive",
          lambda p: p.train(p.body, "--distributed.coordinator-address", "127.0.0.1:1234",
                            "--distributed.num-processes", "2", "--distributed.process-id", "1",
                            "--distributed.timeout-s", "0"),
          "--distributed.timeout-s 0.0", "a number > 0"),
]


@pytest.fixture
def paths(tmp_path, tiny_body, runs_root) -> Paths:
    return Paths(tmp_path, tiny_body, runs_root)


def _assert_clear_error(code: int, out: str, expected: list[str]) -> None:
    text = plain(out)
    assert code == 2, out
    assert "Traceback" not in out, out
    assert text.count("error:") + text.count("For full helptext") == 1, out  # ours, or tyro's
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from: {text}"


def _tree(folder: Path) -> dict[Path, bytes | None]:
    """Every path under `folder`: a file's bytes, None for a folder."""
    return {p: (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


@pytest.mark.parametrize("case", CLI_CASES, ids=lambda c: c.id)
def test_cli_case(case: Case, paths: Paths):
    """One clear line, exit 2, and the filesystem as it was (no run directory made)."""
    argv = case.argv(paths)
    before = _tree(paths.tmp)
    code, out = cli_main(*argv)
    _assert_clear_error(code, out, case.expected(paths))
    assert _tree(paths.tmp) == before


# Resume: copies of the session's straight run (checkpoints at steps 32 and 64).


@pytest.fixture
def run_copy(straight_run, tmp_path) -> Path:
    copy = tmp_path / "runs" / "tiny" / "copy"
    shutil.copytree(straight_run, copy)
    return copy


def _edit_config(run_dir: Path, **changes) -> None:
    record = json.loads((run_dir / "config.json").read_text())
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = record["config"]
        for key in parents:
            target = target[key]
        target[last] = value
    (run_dir / "config.json").write_text(json.dumps(record))


def _damage(checkpoint: Path) -> None:
    for item in checkpoint.rglob("*"):
        if item.is_file():
            item.write_bytes(b"garbage")


def test_resume_missing_run_dir_lists_the_runs_there(run_copy):
    code, out = cli_main("train", "--resume", run_copy.parent / "copi")
    _assert_clear_error(code, out, [str(run_copy.parent / "copi"), "not a run directory",
                                    "no config.json", "Runs in", "copy"])


def test_eval_of_a_missing_run_dir(tmp_path):
    code, out = cli_main("eval", "--run", tmp_path / "nothing")
    _assert_clear_error(code, out, [str(tmp_path / "nothing"), "not a run directory",
                                    "runs/ant-modular/<timestamp>"])


def test_resume_run_without_checkpoints(run_copy):
    shutil.rmtree(run_copy / "checkpoints")
    code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, [str(run_copy / "checkpoints"), "no checkpoint to resume from",
                                    "start a new run"])


def test_resume_with_a_different_training_setting(run_copy):
    code, out = cli_main("train", "--resume", run_copy, "--arch", "shared", "--ppo.n-envs", "8")
    _assert_clear_error(code, out, [
        f"--resume {run_copy}", "--arch 'shared' (the run has 'separate')",
        "--ppo.n-envs 8 (the run has 4)", "Drop them", "start a new run",
    ])


def test_resume_checkpoint_of_another_architecture(run_copy):
    _edit_config(run_copy, network__arch="shared")
    code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, [str(run_copy / "checkpoints" / "64"),
                                    "saved by a run with arch 'separate'", "built with 'shared'",
                                    "resume the run directory that saved these checkpoints"])


def test_resume_checkpoint_of_another_body(run_copy, tmp_path):
    other = tmp_path / "other.xml"
    other.write_text(tiny_xml(name="tiny-other"))
    _edit_config(run_copy, body=str(other))
    code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, ["saved by a run with body 'tiny'", "built with 'tiny-other'",
                                    "resume the run directory that saved these checkpoints"])


def test_resume_with_every_checkpoint_corrupted(run_copy):
    for checkpoint in (run_copy / "checkpoints").iterdir():
        _damage(checkpoint)
    with pytest.warns(UserWarning, match="unreadable"):
        code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, [str(run_copy / "checkpoints"),
                                    "none of the checkpoints [32, 64] could be read",
                                    "start a new run"])


def test_corrupted_latest_checkpoint_falls_back_and_training_saves_that_step_again(run_copy):
    _damage(run_copy / "checkpoints" / "64")
    with pytest.warns(UserWarning) as warned:
        code, out = cli_main("train", "--resume", run_copy)
    assert code == 0, out
    messages = " ".join(str(w.message) for w in warned)
    assert f"{run_copy / 'checkpoints' / '64'}: checkpoint unreadable" in messages
    assert f"moved the unreadable checkpoints [64] to {run_copy / 'unreadable-checkpoints'}" in (
        messages)
    assert "from its checkpoint at step 32 (metrics logged after it, up to step 64" in plain(out)
    assert (run_copy / "unreadable-checkpoints" / "64").is_dir()
    run, step = restore_run(run_copy)
    assert step == 64 == int(run.state.steps)


def test_resume_with_config_json_corrupted(run_copy):
    (run_copy / "config.json").write_text('{"config": {"body": "tiny", "ppo": ')
    code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, [str(run_copy / "config.json"), "unreadable",
                                    "restore the file from a backup"])


@pytest.mark.parametrize("changes, expected", [
    ({"seed": "abc"}, ["--seed 'abc'", "not a number (str)", "whole number from 0"]),
    ({"seed": 2**70}, [f"--seed {2**70}", "out of range"]),
    ({"env__episode_length": 1e30}, ["--env.episode-length 1e+30", "not a whole number"]),
    ({"video_length": True}, ["--video-length True", "not a number (bool)"]),
    ({"ppo__n_envs": 4.5}, ["--ppo.n-envs 4.5", "not a whole number"]),
    ({"body_env_shares": 5}, ["its config cannot be read", "Restore the file"]),
    ({"network__init_log_std": "-0.5"}, ["--init-log-std '-0.5'", "not a number (str)"]),
], ids=["seed_text", "seed_past_dtype", "episode_length_float", "video_length_bool",
        "n_envs_fraction", "shares_not_a_list", "log_std_text"])
def test_resume_config_of_wrong_types(run_copy, changes, expected):
    """A config.json edited by hand: one line naming the file and the field, the run as
    it was."""
    _edit_config(run_copy, **changes)
    before = _tree(run_copy)
    code, out = cli_main("train", "--resume", run_copy)
    _assert_clear_error(code, out, [str(run_copy / "config.json"), *expected])
    assert _tree(run_copy) == before


@pytest.mark.parametrize("step", [1.5, "64", None, -1])
def test_analyze_a_metrics_row_with_a_bad_step(run_copy, tmp_path, step):
    lines = (run_copy / "metrics.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    first = next(i for i, row in enumerate(rows) if "losses/total" in row)
    rows[first]["step"] = step
    (run_copy / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out = cli_main("analyze", run_copy, "--png", tmp_path / "a.png")
    _assert_clear_error(code, out, [str(run_copy / "metrics.jsonl"), f"step {step!r}",
                                    "whole number of env steps"])
    assert not (tmp_path / "a.png").exists()


def test_second_run_never_overwrites_an_existing_run_dir(straight_run, tiny_body, runs_root):
    before = {p: p.read_bytes() for p in straight_run.rglob("*") if p.is_file()}
    code, out = cli_main("train", "--body", tiny_body, *TINY, "--runs-root", runs_root,
                         "--run-name", "straight")
    _assert_clear_error(code, out, [str(straight_run), "exists already",
                                    "runs never overwrite each other", "--resume"])
    assert {p: p.read_bytes() for p in straight_run.rglob("*") if p.is_file()} == before


def test_runs_started_in_the_same_second_get_their_own_dirs(tmp_path):
    first, second = new_run_dir(tmp_path, "tiny"), new_run_dir(tmp_path, "tiny")
    assert first != second and first.is_dir() and second.is_dir()


# Env inputs and custom environments, through the library.


@pytest.fixture(scope="module")
def tiny_env(tiny_body):
    env = make_env(load_body(str(tiny_body)))
    return env, jax.jit(env.reset)(jax.random.key(0))


@pytest.mark.parametrize(
    "action, expected",
    [
        ({"base": jnp.zeros(1)}, ["missing actuated module(s) ['arm']",
                                  "give exactly {'base': shape (1,), 'arm': shape (1,)}"]),
        ({"base": jnp.zeros(1), "arm": jnp.zeros(1), "tail": jnp.zeros(1)},
         ["unknown actuated module(s) ['tail']"]),
        ({"base": jnp.zeros(1), "arm": jnp.zeros((4, 1))},
         ["the action of actuated module 'arm' has shape (4, 1)", "give shape (1,)",
          "vmap over a batch"]),
        (jnp.zeros(2), ["action must be a dict keyed by actuated module (base, arm)",
                        "got ArrayImpl"]),
    ],
    ids=["missing_module", "unknown_module", "batched_shape", "not_a_dict"],
)
def test_env_action_case(tiny_env, action, expected):
    env, state = tiny_env
    with pytest.raises(ActionError) as error:
        env.step(state, action)
    for fragment in expected:
        assert fragment in str(error.value)


class _UnrewardedModule:
    """The toy env with one module's reward left out of State.reward."""

    def __init__(self, env, module):
        self.env, self.module = env, module
        self.body, self.obs_sizes = env.body, env.obs_sizes
        self.action_sizes, self.episode_length = env.action_sizes, env.episode_length

    def _drop(self, state):
        return state.replace(reward={k: v for k, v in state.reward.items() if k != self.module})

    def reset(self, key):
        return self._drop(self.env.reset(key))

    def step(self, state, action):
        return self._drop(self.env.step(state, action))


def test_custom_env_that_does_not_reward_a_module(tmp_path):
    env = _UnrewardedModule(TargetReachingEnv(), "left")
    config = TrainRunConfig(runs_root=tmp_path, video=False)
    with pytest.raises(EnvRewardError) as error:
        run_training(config, Console(quiet=True), env=env)
    message = str(error.value)
    for fragment in ("_UnrewardedModule", "missing: ['left']", "Per-module advantages",
                     "give each one a reward (0.0 where it earns none)"):
        assert fragment in message
    assert not list(tmp_path.iterdir())


def test_two_files_without_model_train_together(compile_cache, tmp_path):
    """README: an MJCF without model= is named after its file, so two such files are two
    bodies of one run (MuJoCo names both "MuJoCo Model")."""
    bodies = []
    for name in ("left", "right"):
        bodies.append(tmp_path / f"{name}.xml")
        bodies[-1].write_text(tiny_xml().replace('model="tiny"', ""))
    code, out = cli_main("train", "--body", ",".join(map(str, bodies)), "--arch", "shared",
                         "--backend", "cpu", *TINY, "--ppo.total-steps", 16,
                         "--runs-root", tmp_path / "runs", "--run-name", "pair")
    assert code == 0, out
    config = json.loads((tmp_path / "runs" / "left+right" / "pair" / "config.json").read_text())
    assert config["bodies"] == ["left", "right"]
