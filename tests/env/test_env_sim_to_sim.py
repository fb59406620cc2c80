"""Sim-to-sim: a policy trained on one simulator backend gets the same mean return on the
other (`cli.py eval --backend`), over 32 episodes: within 10%.

Benchmark-marked (a training run per direction): `pytest -m benchmark tests/env/test_env_sim_to_sim.py`.
The planar bodies are used because their gaits depend on contacts, where MJX and MuJoCo's
C solver differ most with one Newton iteration.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from modular_ppo.commands import EvalCommand, evaluate_run

ROOT = Path(__file__).resolve().parents[2]
EPISODES = 32


def _train(tmp_path: Path, body: str, backend: str, steps: int) -> Path:
    runs = tmp_path / "runs"
    subprocess.run(
        [sys.executable, str(ROOT / "cli.py"), "train", "--body", body, "--backend", backend,
         "--ppo.total-steps", str(steps), "--eval-every-steps", "0", "--no-video",
         "--runs-root", str(runs), "--run-name", "run"],
        check=True, timeout=3600,
    )
    return runs / body / "run"


@pytest.mark.benchmark
@pytest.mark.parametrize(
    ("body", "trained_on", "other", "steps"),
    [("hopper-modular", "cpu", "mjx", 600_000), ("halfcheetah-modular", "mjx", "cpu", 200_000)],
)
def test_a_policy_keeps_its_return_on_the_other_backend(tmp_path, body, trained_on, other, steps):
    run_dir = _train(tmp_path, body, trained_on, steps)
    own = evaluate_run(EvalCommand(run_dir, EPISODES, backend=trained_on))[body]["deterministic"]
    moved = evaluate_run(EvalCommand(run_dir, EPISODES, backend=other))[body]["deterministic"]
    print(f"{body} trained on {trained_on}: return {own['episode/team_return']:.1f} "
          f"(length {own['episode/length']:.0f}) there, {moved['episode/team_return']:.1f} "
          f"(length {moved['episode/length']:.0f}) on {other}")
    assert abs(own["episode/team_return"]) > 100, "the policy should have learned something"
    assert moved["episode/team_return"] == pytest.approx(own["episode/team_return"], rel=0.10)
