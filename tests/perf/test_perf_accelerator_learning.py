"""benchmarks/accelerator_learning.py: both sides train the tiny body and keep a record per
seed, a second call skips what is recorded, and the report's mean ± 95% CI and wall time to
reach a return match hand-computed figures."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import time
from pathlib import Path

import accelerator_learning as al
import pytest
from tiny_body import tiny_xml

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "accelerator_learning.py"
TINY_OURS = ["--backend", "cpu", "--ppo.n-envs", "4", "--ppo.n-minibatches", "2",
             "--ppo.rollout-length", "4", "--ppo.n-epochs", "1", "--eval.n-envs", "2",
             "--eval.episode-length", "4"]
TINY_BRAX = ["num_envs=4", "batch_size=4", "num_minibatches=2", "unroll_length=5",
             "num_updates_per_batch=1", "num_eval_envs=2"]
FIELDS = {"body", "side", "seed", "settings", "complete", "steps", "program_seeds", "curve",
          "hardware", "date", "commit", "versions", "load_1min", "command"}


def _check(paths: list[Path], side: str) -> None:
    for seed, path in enumerate(paths):
        record = json.loads(path.read_text())
        assert FIELDS <= set(record)
        assert (record["body"], record["side"], record["seed"]) == ("tiny", side, seed)
        assert record["complete"] and record["steps"] >= 48
        assert record["hardware"]["device_kind"] and record["hardware"]["host_cpus"] >= 1
        curve = record["curve"]
        assert len(curve["steps"]) >= 2 and curve["steps"][-1] == record["steps"]
        assert curve["wall_s"] == sorted(curve["wall_s"]) and curve["wall_s"][0] > 0
        assert all(math.isfinite(r) for r in curve["eval_return"])
        assert record["program_seeds"] == ([0, 1] if side == "ours" else [seed])
        if side == "ours":  # 48 steps of 4 envs x 4: 3 training calls, 3 evaluations
            spent = record["seconds"]
            assert (spent["calls"], spent["evals"]) == (3, 3)
            assert 0 < spent["calls_s"] <= spent["clock_s"]
            assert record["ppo"]["n_envs"] == 4 and record["ppo"]["rollout_length"] == 4


def test_ours_records_each_seed_of_its_program_and_a_second_call_skips_them(tmp_path):
    body = tmp_path / "tiny.xml"
    body.write_text(tiny_xml())
    command = [sys.executable, str(SCRIPT), "run", "--body", str(body), "--side", "ours",
               "--seeds", "0", "1", "--steps", "48", "--evals", "3", "--budget-s", "90",
               "--out", str(tmp_path / "out"), "--", *TINY_OURS]

    def run() -> str:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={"JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin",
                                   "HOME": str(tmp_path)})
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout

    run()
    paths = [tmp_path / "out" / "tiny" / "ours" / f"seed{k}.json" for k in (0, 1)]
    _check(paths, "ours")
    written = [p.stat().st_mtime_ns for p in paths]
    assert "seeds none to run ([0, 1] recorded)" in run()
    assert [p.stat().st_mtime_ns for p in paths] == written


def test_brax_records_each_seed_and_a_second_call_skips_them(tmp_path, monkeypatch):
    """Brax's ppo.train stood in for by one that reports evaluations as Brax's does (its
    compile on CPU alone outlasts this test's budget: the real one is the smoke run of the
    module's docstring); the rest is the command's own."""
    from brax.training.agents.ppo import train as brax_train

    calls = []

    def train(environment, num_timesteps, num_evals, progress_fn, **settings):
        calls.append(settings)
        assert environment.observation_size > 0 and settings["episode_length"] == 1000
        for i in range(num_evals):  # Brax's updates of 40 steps overshoot 48: 0, 40, 80
            progress_fn(40 * i, {"eval/episode_reward": float(i + settings["seed"])})

    monkeypatch.setattr(brax_train, "train", train)
    # the command starts here, not when pytest imported the module: its budget counts from
    # the script's start (in the suite, other files' minutes would have spent it)
    monkeypatch.setattr(al, "COMMAND_STARTED", time.perf_counter())
    body = tmp_path / "tiny.xml"
    body.write_text(tiny_xml())
    out = tmp_path / "out"
    al.main(["run", "--body", str(body), "--side", "brax", "--seeds", "0", "1", "--steps",
             "48", "--evals", "4", "--out", str(out), "--brax-set", *TINY_BRAX])
    paths = [out / "tiny" / "brax" / f"seed{k}.json" for k in (0, 1)]
    _check(paths, "brax")
    record = json.loads(paths[1].read_text())
    assert record["curve"]["steps"] == [0, 40, 80]  # stopped at its first evaluation >= 48
    assert record["curve"]["eval_return"] == [1.0, 2.0, 3.0]
    assert record["settings"]["ppo"]["num_envs"] == 4 and [c["seed"] for c in calls] == [0, 1]
    assert record["settings"]["published_for"] == "ant"  # no Brax settings of its own
    al.main(["run", "--body", str(body), "--side", "brax", "--seeds", "0", "1", "--steps",
             "48", "--evals", "4", "--out", str(out), "--brax-set", *TINY_BRAX])
    assert len(calls) == 2  # both recorded: skipped


def _record(side: str, seed: int, steps: list[int], wall: list[float], returns: list[float],
            complete: bool = True) -> dict:
    return {"body": "hopper-modular", "side": side, "seed": seed, "settings": {
        "steps": steps[-1], "seeds_per_program": 3}, "complete": complete, "steps": steps[-1],
        "program_seeds": [seed], "curve": {"steps": steps, "wall_s": wall,
                                           "eval_return": returns},
        "hardware": {"device_kind": "TPU v5 lite", "host_cpus": 13},
        "date": "2026-12-06 12:00 UTC", "commit": "abcdef0", "load_1min": [0.1, 0.5]}


def test_the_ci_is_students_t_over_seeds():
    mean, half = al.mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    # sd = sqrt(2.5); t(0.975, 4) = 2.776445...
    assert mean == 3.0 and half == pytest.approx(2.776445105 * math.sqrt(2.5) / math.sqrt(5))
    assert al.mean_ci([10.0, 20.0]) == (
        15.0, pytest.approx(12.706204736 * math.sqrt(50) / 2 ** 0.5))
    assert math.isnan(al.mean_ci([7.0])[1])


def test_ours_wall_clock_starts_where_the_first_progress_line_came():
    # Seed 0's first row at 10 s, its evaluation 3 s; seed 1's at 13.1 s, 4 s: the line
    # came at 17.1 s of the run's clock, 30 s after the command.
    rows = [[{"time/elapsed_s": 10.0, "time/eval_s": 3.0}], [{"time/elapsed_s": 13.1,
                                                               "time/eval_s": 4.0}]]
    assert al.progress_offset(rows, 30.0) == pytest.approx(12.9)
    assert al.progress_offset([[]], 30.0) is None and al.progress_offset(rows, None) is None


def test_a_record_of_ours_from_another_commit_runs_again(tmp_path):
    settings = al.ours_settings(100, 2, 5, [])
    record = {"body": "tiny", "side": "ours", "seed": 0, "settings": settings,
              "complete": True, "commit": "abc1234"}
    al.write_record(tmp_path, record)
    assert al.is_recorded(tmp_path, "tiny", "ours", 0, settings, "abc1234")
    assert not al.is_recorded(tmp_path, "tiny", "ours", 0, settings, "def5678")
    assert not al.is_recorded(tmp_path, "tiny", "ours", 0, al.ours_settings(200, 2, 5, []))
    assert al.is_recorded(tmp_path, "tiny", "ours", 0, settings)  # Brax's rule: settings


def test_a_seeds_clock_splits_into_compile_calls_and_evaluations():
    rows = [{"time/elapsed_s": 10.0, "time/compile_s": 7.04, "time/call_s": 9.0,
             "time/eval_s": 2.0},
            {"time/elapsed_s": 12.5, "time/call_s": 0.4},
            {"time/elapsed_s": 13.0, "time/call_s": 0.44, "time/eval_s": 1.5}]
    assert al.seconds_spent(rows) == {"compile_s": 7.0, "calls": 3, "calls_s": 9.8,
                                      "evals": 2, "evals_s": 3.5, "clock_s": 13.0}
    assert al.seconds_spent([])["clock_s"] == 0.0


def test_time_to_reach_and_value_at_interpolate_between_evaluations():
    curve = {"steps": [0, 100, 200], "wall_s": [10.0, 20.0, 40.0],
             "eval_return": [0.0, 50.0, 150.0]}
    assert al.time_to_reach(curve, 100.0) == 30.0  # halfway from 50 (20 s) to 150 (40 s)
    assert al.time_to_reach(curve, -5.0) == 10.0
    assert al.time_to_reach(curve, 151.0) is None
    assert al.value_at(curve, 150) == 100.0
    assert al.value_at(curve, 250) is None


def test_the_report_row_from_hand_made_records(tmp_path):
    ours = [_record("ours", k, [0, 100, 200], [60.0, 80.0, 100.0], [0.0, r / 2, r])
            for k, r in enumerate([300.0, 400.0, 500.0])]
    brax = [_record("brax", k, [0, 200, 400], [100.0, 200.0, 300.0], [0.0, r / 2, r])
            for k, r in enumerate([200.0, 200.0, 260.0])]
    for record in ours + brax:
        al.write_record(tmp_path, record)
    row = al.body_row("hopper-modular", ours, brax)
    half = 4.302652730 * 100.0 / math.sqrt(3)  # t(0.975, 2) * sd / sqrt(n)
    assert row[1] == f"400 ± {half:,.0f} (n=3, 0.00M)"
    # Brax's final 200, 200, 260: mean 220, sd sqrt(1200).
    assert row[2] == f"220 ± {4.302652730 * math.sqrt(1200) / math.sqrt(3):,.0f} (n=3, 0.00M)"
    # At 200 steps (ours' last): ours 300 / 400 / 500, Brax halfway: 100, 100, 130.
    assert row[3].startswith(f"0.00M: 400 ± {half:,.0f} vs 110 ± ")
    # Ours to Brax's mean final 220: seed 0 (150 at 80 s -> 300 at 100 s) at 89.3 s,
    # seed 1 (200 -> 400) at 82 s, seed 2 (250 at 80 s already) at 60 + 220/250 * 20 = 77.6.
    ours_times = [80 + 70 / 150 * 20, 80 + 20 / 200 * 20, 60 + 220 / 250 * 20]
    assert row[4] == f"{sum(ours_times) / 3:,.0f} s (3/3)"
    assert row[5] == "not reached (0/3)"  # Brax never reaches ours' 400
    # Brax to its own 220: seeds 0 and 1 never (200); seed 2 (130 at 200 s -> 260 at 300 s).
    brax_time = 200 + 90 / 130 * 100
    assert row[6] == f"{brax_time:,.0f} s (1/3)"
    assert row[7] == f"{sum(ours_times) / 3 / brax_time:.2f}"
    text = al.report(tmp_path)
    assert "| hopper-modular |" in text and "TPU v5 lite (13 host CPUs)" in text
    # An untrained policy that already scores the target is told apart (an ant standing
    # still earns its healthy reward): Brax's seed 2 starts at 260, over ours' seed 0's 250.
    brax[2]["curve"]["eval_return"][0] = 260.0
    assert al.reach_cell(brax, 250.0) == ("100 s (1/3; 1 at the first evaluation)", 100.0)
    # A body one side has not run yet: its final, "not run", and nothing compared.
    alone = al.body_row("walker2d-modular", ours, [])
    assert alone[1] == row[1] and alone[2] == "not run" and alone[3:] == ["-"] * 5


def test_the_table_replaces_its_section_and_only_within_the_size_limit(tmp_path):
    path = tmp_path / "BENCHMARKS.md"
    path.write_text("# B\n\n## One\n\nold\n\n" + al.HEADING + "\n\nold table\n\n## Two\n\nx\n")
    assert al.write_benchmarks(al.HEADING + "\n\nnew table\n", path)
    assert path.read_text() == ("# B\n\n## One\n\nold\n\n" + al.HEADING
                                + "\n\nnew table\n\n## Two\n\nx\n")
    assert not al.write_benchmarks(al.HEADING + "\n\n" + "x" * 25_000 + "\n", path)
    assert "new table" in path.read_text()
