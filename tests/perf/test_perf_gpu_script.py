"""benchmarks/gpu.sh's script on CPU with a tiny shape: every part it promises (raw MJX and
training env-steps/s at two env counts, the time to a team return) gives its row and
figures, and `--backend warp` where MuJoCo Warp cannot run stops at once, saying what is
missing. The GPU run itself is benchmarks/gpu.sh on a GPU machine."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mujoco.mjx import warp as mjx_warp

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--n-envs", "8", "16", "--target", "-1000", "--",
        "--ppo.n-minibatches", "2", "--ppo.rollout-length", "4", "--ppo.n-epochs", "1",
        "--env.episode-length", "8"]
"""A target any finished episode reaches (episodes of 8 steps); each part ends as soon as it
has its figures, well within its budget. The runs use `--backend cpu`, MuJoCo's C
simulator, where no MJX program needs compiling."""


def _gpu_script(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks/gpu.py"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "200"})


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu")
    done = _gpu_script("--backend", "cpu", "--out", str(out / "rows.md"),
                       "--json", str(out / "figures.json"), *TINY)
    assert done.returncode == 0, done.stdout + done.stderr
    return done, (out / "rows.md").read_text(), json.loads((out / "figures.json").read_text())


def test_every_part_writes_its_row(tiny_run):
    done, rows, _ = tiny_run
    assert "note: JAX runs on cpu here, not a GPU" in done.stdout
    assert re.search(r"- Hardware: cpu x 1 \(JAX backend cpu\); host .+, \d+ cores", rows), rows
    for part in ("raw/8", "raw/16", "train/8", "train/16"):
        assert re.search(rf"^\| {part} \| .+ \| {part.split('/')[1]} \| [\d,]+ \| [\d.]+ \|",
                         rows, re.MULTILINE), (part, rows)
    assert re.search(r"^\| return \| .+ team return -1,000 reached \d+ s after the command "
                     r"started, at [\d,]+ env steps \|$", rows, re.MULTILINE), rows


def test_the_figures_are_measured(tiny_run):
    _, _, figures = tiny_run
    parts = {part["part"]: part for part in figures["parts"]}
    assert set(parts) == {"raw/8", "raw/16", "return", "train/8", "train/16"}
    for part in parts.values():
        assert part["steps_per_s"] > 0, part
    for name in ("return", "train/8", "train/16"):  # the raw C simulator compiles nothing
        assert parts[name]["compile_s"] > 0, parts[name]
    assert parts["return"]["reached"] and 0 < parts["return"]["target_s"] < 240
    assert parts["train/16"]["calls"] >= 2 and parts["raw/16"]["n_envs"] == 16


def test_warp_where_it_cannot_run_stops_at_once_saying_what_is_missing(tmp_path):
    done = _gpu_script("--backend", "warp", "--out", str(tmp_path / "rows.md"), *TINY)
    assert done.returncode == 2, done.stdout + done.stderr
    missing = ("MuJoCo Warp is not installed" if not mjx_warp.WARP_INSTALLED
               else "MuJoCo Warp runs on NVIDIA GPUs and JAX sees none here")
    assert f"error: --backend warp: {missing}" in done.stderr
    assert not (tmp_path / "rows.md").exists()
