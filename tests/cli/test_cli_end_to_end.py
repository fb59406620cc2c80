"""`cli.py train` on a small body, then eval, analyze and render on its run dir."""

import json

import matplotlib.pyplot as plt
import pytest
from output_checks import (
    assert_gif_shows_the_videos_pictures,
    assert_png_shows_every_panels_curve,
    assert_video_shows_the_body,
    video_frames,
)

from modular_ppo import cli
from modular_ppo.body import load_body

TINY = [
    "--body", "hopper-modular",
    "--ppo.n-envs", "8", "--ppo.n-minibatches", "2", "--ppo.rollout-length", "8",
    "--ppo.n-epochs", "2", "--ppo.total-steps", "192",
    "--eval.n-envs", "2", "--eval.episode-length", "16",
    "--eval-every-steps", "64", "--checkpoint-every-steps", "128",
    "--video-length", "6",
]


@pytest.fixture(scope="module")
def run_dir(cli_train):
    return cli_train(TINY, "hopper-modular", "tiny")


def test_train_writes_a_complete_run_dir(run_dir):
    record = json.loads((run_dir / "config.json").read_text())
    assert record["body"] == "hopper-modular"
    assert record["config"]["ppo"]["total_steps"] == 192
    modules = record["modules"]
    rows = [json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if "losses/total" in r]
    assert [r["step"] for r in train_rows] == [64, 128, 192]
    for module in modules:
        assert all(f"losses/critic/{module}" in r for r in train_rows)
    assert "time/compile_s" in train_rows[0]
    assert any("eval/team_return" in r for r in rows)
    assert list((run_dir / "tensorboard").iterdir())
    assert sorted(int(p.name) for p in (run_dir / "checkpoints").iterdir()) == [128, 192]
    final = json.loads((run_dir / "eval.json").read_text())
    assert final["step"] == 192 and "eval/team_return" in final
    frames = video_frames(run_dir / "videos" / "final.mp4")
    assert len(frames) == 7  # the first state and 6 steps (--video-length 6)
    assert_video_shows_the_body(frames, load_body("hopper-modular"))


def test_eval_analyze_render_on_the_run(run_dir, tmp_path, capsys, monkeypatch):
    assert cli.main(["eval", "--run", str(run_dir), "--episodes", "2"]) == 0
    out = capsys.readouterr().out
    assert "deterministic" in out and "stochastic" in out and "team_return" in out

    png = tmp_path / "analysis.png"
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure the PNG was saved from
    assert cli.main(["analyze", str(run_dir), "--png", str(png)]) == 0
    out = capsys.readouterr().out
    assert "start → middle → end" in out and "critic loss" in out and "lagging critic" in out
    modules = json.loads((run_dir / "config.json").read_text())["modules"]
    assert {ax.get_title() for ax in figures[-1].axes} == {
        f"{m}: {metric}" for m in modules for metric in ("critic loss", "explained var")}
    assert_png_shows_every_panels_curve(png, figures[-1])

    gif = tmp_path / "policy.gif"
    assert cli.main(["render", "--run", str(run_dir), "--out", str(gif), "--steps", "4"]) == 0
    frames = video_frames(gif)
    assert len(frames) == 5
    # The run's final video shows the same episode: the same policy, key and body.
    assert_gif_shows_the_videos_pictures(frames, video_frames(run_dir / "videos" / "final.mp4"),
                                         load_body("hopper-modular"))


def test_eval_says_how_the_episodes_ended(run_dir, tmp_path, capsys):
    output = tmp_path / "eval.json"
    assert cli.main(["eval", "--run", str(run_dir), "--episodes", "4", "--episode-ends",
                     "--output", str(output)]) == 0
    assert "ended/healthy_angle below" in capsys.readouterr().out
    for mode, metrics in json.loads(output.read_text())["results"]["hopper-modular"].items():
        ends = {k.removeprefix("ended/"): v for k, v in metrics.items() if k.startswith("ended/")}
        assert ends["time_limit"] + ends["terminated"] == 1.0, mode
        assert ends["still_running"] == 0.0  # evaluated for the env's whole episode length
        # the same episodes as the returns': shorter than 1,000 steps where one terminated
        assert (ends["terminated"] > 0) == (metrics["episode/length"] < 1000), mode
        assert sum(v for k, v in ends.items() if k.startswith("healthy_")) >= ends["terminated"]


def test_a_second_run_never_reuses_the_first_run_dir(run_dir, capsys):
    code = cli.main(["train", *TINY, "--runs-root", str(run_dir.parents[1]), "--run-name", "tiny"])
    assert code == 2
    assert "runs never overwrite each other" in capsys.readouterr().out


def test_unknown_body_names_the_nearest_bundled_ones(capsys):
    assert cli.main(["train", "--body", "ant-modulr"]) == 2
    out = capsys.readouterr().out
    assert "unknown body 'ant-modulr'" in out and "ant-modular" in out
