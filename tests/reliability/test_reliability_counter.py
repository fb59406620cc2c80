"""Env-step counts past 2**31 (where an int32 counter wraps): a run resumed from a
checkpoint at 2**31 - 16 steps trains on, and its metrics, checkpoints and progress
report exact step numbers."""

import json

import pytest
from reliability_tools import TINY, cli_main, plain

from modular_ppo.ppo import StepCounter
from modular_ppo.runs.build import checkpointer_for, restore_run

NEAR_LIMIT = 2**31 - 16
"""One iteration (16 steps) before int32's limit."""


@pytest.fixture(scope="module")
def run_past_the_limit(compile_cache, tiny_body, runs_root):
    common = ["--checkpoint-every-steps", 32]
    code, out = cli_main("train", "--body", tiny_body, *TINY, "--backend", "cpu", *common,
                         "--ppo.total-steps", 32, "--runs-root", runs_root,
                         "--run-name", "past-int32")
    assert code == 0, out
    run_dir = runs_root / "tiny" / "past-int32"
    run, _ = restore_run(run_dir)
    checkpointer = checkpointer_for(run_dir, run)
    checkpointer.save(NEAR_LIMIT, run.state.replace(steps=StepCounter.of(NEAR_LIMIT)))
    checkpointer.close()
    code, out = cli_main("train", "--resume", run_dir, *common,
                         "--ppo.total-steps", NEAR_LIMIT + 64)
    assert code == 0, out
    return run_dir, plain(out)


def test_metrics_count_on_past_the_limit(run_past_the_limit):
    run_dir, _ = run_past_the_limit
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    training = [row["step"] for row in rows if "losses/total" in row]
    assert training == [16, 32, *(NEAR_LIMIT + 16 * i for i in range(1, 5))]


def test_checkpoints_and_restore_are_exact_past_the_limit(run_past_the_limit):
    run_dir, _ = run_past_the_limit
    saved = sorted(int(p.name) for p in (run_dir / "checkpoints").iterdir())
    # Due every 32 steps (2**31 is a multiple of 32), then the final step; 3 are kept.
    assert saved == [2**31, 2**31 + 32, NEAR_LIMIT + 64]
    run, step = restore_run(run_dir)
    assert step == int(run.state.steps) == NEAR_LIMIT + 64


def test_progress_and_final_evaluation_report_the_exact_step(run_past_the_limit):
    run_dir, out = run_past_the_limit
    assert f"from its checkpoint at step {NEAR_LIMIT:,}" in out
    assert f"final eval at step {NEAR_LIMIT + 64:,}" in out
    assert json.loads((run_dir / "eval.json").read_text())["step"] == NEAR_LIMIT + 64


def test_the_counter_adds_exactly_across_its_parts():
    counter = StepCounter.of(2**31 - 1).add(2**30 - 1).add(5 * 2**30 + 7)
    assert int(counter) == 2**31 - 1 + 2**30 - 1 + 5 * 2**30 + 7
    assert int(StepCounter.of(10**12).add(123)) == 10**12 + 123
