"""Exact resume through the CLI, on both simulator backends and for a run of two bodies
sharing one network: 4 iterations straight (the
session's straight run) against 2 iterations, stop, `--resume` with `--ppo.total-steps`
doubled, 2 more. Same seed, same run: the checkpoints agree leaf for leaf and the training
metrics row for row.

The MJX case is the GPU path (on CPU `--backend auto` picks the C simulator): it trains,
checkpoints and resumes with MJX env state (an `mjx.Data` per environment, ~190 leaves)."""

import json
import warnings

import numpy as np
import orbax.checkpoint as ocp
import pytest
from mujoco import mjx
from reliability_tools import STEPS_PER_ITERATION, TINY, cli_main, plain

from modular_ppo.runs.build import restore_run
from modular_ppo.runs.config_json import load_run_config


@pytest.fixture(scope="module", params=["cpu", "mjx", "two bodies"])
def case(request) -> str:
    return request.param


@pytest.fixture(scope="module")
def straight(straight_runs, case):
    return straight_runs(case)


@pytest.fixture(scope="module")
def resumed_run(compile_cache, case_flags, runs_root, case):
    name = f"halves-{case.replace(' ', '-')}"
    body_flags, folder = case_flags(case)
    common = ["train", *body_flags, *TINY, "--checkpoint-every-steps", 32,
              "--runs-root", runs_root, "--run-name", name]
    code, first_out = cli_main(*common, "--ppo.total-steps", 32)
    assert code == 0, first_out
    run_dir = runs_root / folder / name
    code, second_out = cli_main("train", "--resume", run_dir, "--ppo.total-steps", 64)
    assert code == 0, second_out
    return run_dir, plain(second_out)


def _saved_leaves(run_dir, step):
    """The checkpoint's arrays as saved, by leaf index (no template needed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # orbax: no sharding given, it reads the saved one
        saved = ocp.PyTreeCheckpointer().restore(run_dir / "checkpoints" / str(step) / "state")
    return {key: np.asarray(value) for key, value in saved.items()}


def _training_rows(run_dir):
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    return [
        {k: v for k, v in row.items() if not k.startswith(("time/", "throughput/"))}
        for row in rows if "losses/total" in row
    ]


def test_resume_continues_from_the_checkpoint_on_the_same_backend(resumed_run, case):
    run_dir, out = resumed_run
    assert f"resuming {run_dir} from its checkpoint at step 32" in out
    steps = [row["step"] for row in _training_rows(run_dir)]
    assert steps == [STEPS_PER_ITERATION * i for i in range(1, 5)]
    config = load_run_config(run_dir)
    assert config.ppo.total_steps == 64
    assert config.backend == ("cpu" if case == "two bodies" else case)


@pytest.mark.parametrize("step", [32, 64])
def test_checkpoints_equal_the_straight_runs_leaf_for_leaf(resumed_run, straight, step):
    resumed, straight = _saved_leaves(resumed_run[0], step), _saved_leaves(straight, step)
    assert resumed.keys() == straight.keys() and len(resumed) > 50
    for key in straight:
        np.testing.assert_array_equal(resumed[key], straight[key], err_msg=f"leaf {key}")


def test_metrics_equal_the_straight_runs_row_for_row(resumed_run, straight, case):
    straight_rows = _training_rows(straight)
    critic = "losses/critic/tiny-two/arm" if case == "two bodies" else "losses/critic/arm"
    assert len(straight_rows) == 4 and critic in straight_rows[0]
    assert _training_rows(resumed_run[0]) == straight_rows  # non-finite values are logged as text


def test_the_compared_checkpoints_differ_from_each_other(straight):
    """Guards the comparisons above: training changes the state between checkpoints."""
    at_32, at_64 = _saved_leaves(straight, 32), _saved_leaves(straight, 64)
    assert sum(not np.array_equal(at_32[k], at_64[k]) for k in at_32) > len(at_32) // 2


def test_the_mjx_run_restores_mjx_env_state(straight_runs):
    """What the MJX case compares is MJX state: the restored env states are `mjx.Data`."""
    run, step = restore_run(straight_runs("mjx"))
    assert step == 64 and run.config.backend == "mjx"
    (own,) = run.state.groups.values()
    assert isinstance(own.env_state.data, mjx.Data)
    assert own.env_state.data.qpos.shape[0] == 4  # one per environment
