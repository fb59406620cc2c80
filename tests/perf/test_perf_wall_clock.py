"""benchmarks/wall_clock.py's reading of a run's metrics: evaluations placed on the wall
clock from the command (the run's own clock starts after the imports), only those within
the budget counted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _wall_clock(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("wall_clock", ROOT / "benchmarks/wall_clock.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "wall_clock", module)
    spec.loader.exec_module(module)
    return module


def test_evaluations_are_timed_from_the_command_and_cut_at_the_budget(monkeypatch):
    wall_clock = _wall_clock(monkeypatch)
    rows = [
        {"step": 100, "time/elapsed_s": 10.0, "throughput/env_steps_per_s": 50.0,
         "eval/team_return": 5.0, "time/eval_s": 2.0},
        {"step": 200, "time/elapsed_s": 20.0, "throughput/env_steps_per_s": 70.0},
        {"step": 300, "time/elapsed_s": 30.0, "throughput/env_steps_per_s": 60.0,
         "eval/team_return": 9.0, "time/eval_s": 3.0},
        {"step": 400, "time/elapsed_s": 45.0, "throughput/env_steps_per_s": 65.0,
         "eval/team_return": 12.0, "time/eval_s": 3.0},
    ]
    # The first progress line came 25 s after the command, at the run's 10 s: offset 15 s.
    summary = wall_clock.summary(rows, first_progress_s=25.0, budget_s=50.0)
    assert summary["evaluations"] == [
        {"step": 100, "eval_team_return": 5.0, "wall_s": 25.0},
        {"step": 300, "eval_team_return": 9.0, "wall_s": 45.0},
    ]  # the third came at 60 s, past the budget
    assert (summary["best_eval_team_return"], summary["last_eval_team_return"]) == (9.0, 9.0)
    assert summary["steps_within_budget"] == 300
    assert summary["training_env_steps_per_s_median"] == 60
    assert summary["evaluation_s_total"] == 5.0
    assert wall_clock.summary([], None, 50.0) == {"error": "no progress line within the budget"}
