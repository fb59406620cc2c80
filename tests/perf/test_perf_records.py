"""benchmarks/records.py: a run dir made here (as the CLI writes one) becomes a summary.json
that gives the readers the raw run's figures."""

import gzip
import json
from pathlib import Path

import every_body
import learning_curves
import pytest
import records

MODULES = ("torso", "leg_1")


def _row(step: int, evaluated: bool) -> dict:
    """A metrics row with whole-run keys, per-module keys and, if `evaluated`, eval keys."""
    row = {"step": step, "iteration": step / 100, "time/elapsed_s": step / 10 + 0.123456789,
           "episode/team_return": step * 0.731 + 0.000123, "episode/forward_velocity": 0.5,
           "episode/length": 100.0, "throughput/env_steps_per_s": 1234.56789,
           **{f"losses/critic/{m}": 0.1 for m in MODULES}}
    if evaluated:
        row |= {"eval/team_return": step * 1.000001, "eval/forward_velocity": step / 1e4,
                "eval/length": 1000.0, **{f"eval/return/{m}": 1.0 for m in MODULES}}
    return row


def _run_dir(path: Path, n_rows: int, eval_every: int = 50, finished: bool = True,
             packed: bool = False) -> list[dict]:
    """A run dir with `n_rows` metrics rows (an evaluation every `eval_every`), config.json
    and, if `finished`, eval.json; metrics.jsonl gzipped if `packed`. Its rows."""
    path.mkdir(parents=True)
    rows = [_row(100 * (i + 1), i % eval_every == 0 or i == n_rows - 1) for i in range(n_rows)]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if packed:
        (path / "metrics.jsonl.gz").write_bytes(gzip.compress(text.encode()))
    else:
        (path / "metrics.jsonl").write_text(text)
    (path / "config.json").write_text(json.dumps(
        {"config": {"body": "ant-modular", "ppo": {"total_steps": 100 * n_rows, "n_envs": 64,
                                                   "rollout_length": 16},
                    "network": {"arch": "separate"}}, "versions": {"jax": "0.10.2"}}))
    if finished:
        (path / "eval.json").write_text(json.dumps({"eval/team_return": 4321.0}))
    return rows


def _drop_raw(run_dir: Path) -> None:
    for name in ("metrics.jsonl", "metrics.jsonl.gz", "config.json", "eval.json"):
        (run_dir / name).unlink(missing_ok=True)


@pytest.mark.parametrize("n, most", [(1, 100), (100, 100), (101, 100), (4294, 100), (7, 2)])
def test_subsampling_keeps_the_first_and_last_rows_and_at_most_the_limit(n, most):
    kept = records.subsample(n, most)
    assert kept[0] == 0 and kept[-1] == n - 1
    assert len(kept) == min(n, most) and kept == sorted(set(kept))


def test_a_summary_gives_the_raw_runs_config_final_eval_rows_and_last_row(tmp_path):
    run_dir = tmp_path / "every_body" / "ant-modular" / "seed0"
    rows = _run_dir(run_dir, 430)
    raw = records.load_record(run_dir)
    summary = json.loads(records.write_summary(run_dir).read_text())
    assert summary["n_rows"] == 430
    _drop_raw(run_dir)
    kept = records.load_record(run_dir)

    assert kept.config == raw.config and kept.final_eval == {"eval/team_return": 4321.0}
    assert kept.finished and records.is_finished(run_dir)
    evaluated = [r for r in rows if "eval/team_return" in r]
    assert len(kept.eval_rows) == len(evaluated) == 10
    for got, want in zip(kept.eval_rows, evaluated, strict=True):
        # Full precision; per-module evaluation returns and training keys left out.
        assert got == {k: want[k] for k in ("step", "time/elapsed_s", "eval/team_return",
                                            "eval/forward_velocity", "eval/length")}
    assert kept.last_row == {k: v for k, v in rows[-1].items() if k.count("/") <= 1}
    assert len(kept.training) == records.MAX_TRAINING_ROWS
    assert kept.training[0]["step"] == rows[0]["step"]
    assert kept.training[-1]["step"] == rows[-1]["step"]
    assert kept.training[-1]["episode/team_return"] == pytest.approx(
        rows[-1]["episode/team_return"], rel=1e-4)
    assert set(kept.training[0]) == set(records.TRAINING_KEYS)


def test_an_unfinished_packed_run_is_summarized_but_readers_never_open_the_gzip(tmp_path):
    run_dir = tmp_path / "run"
    _run_dir(run_dir, 30, finished=False, packed=True)
    assert not records.is_finished(run_dir)
    assert records.load_record(run_dir).eval_rows == []  # the raw reader skips .gz
    records.write_summary(run_dir)
    (run_dir / "metrics.jsonl.gz").unlink()
    record = records.load_record(run_dir)
    assert not record.finished and record.last_row["step"] == 3000
    assert [r["step"] for r in record.eval_rows] == [100, 3000]


def test_the_command_is_taken_from_a_log_that_names_the_runs_root_and_run_name(tmp_path):
    results = tmp_path / "results" / "every_body"
    run_dir = results / "hopper-modular" / "seed1"
    _run_dir(run_dir, 5)
    other = ("taskset -c 0 python /elsewhere/cli.py train --body hopper-modular --runs-root "
             "/elsewhere/results/every_body --run-name seed0")
    mine = other.replace("seed0", "seed1")
    (results / "run_hopper.log").write_text(f"{other}\nstep 1\n{mine}\n")
    assert records.summarize(run_dir)["command"] == mine
    assert records.summarize(run_dir, "given")["command"] == "given"


def test_the_load_summary_gives_the_range_of_the_folders_samples(tmp_path):
    (tmp_path / "load.jsonl").write_text(
        "".join(json.dumps({"time": t, "load1": v}) + "\n"
                for t, v in ((1.0, 2.5), (2.0, 0.5), (3.0, 1.5))))
    records.write_load_summary(tmp_path)
    (tmp_path / "load.jsonl").unlink()
    assert records.load_summary(tmp_path) == {"samples": 3, "min": 0.5, "max": 2.5,
                                              "first_time": 1.0, "last_time": 3.0}
    _run_dir(tmp_path / "body" / "seed0", 3)
    assert records.summarize(tmp_path / "body" / "seed0")["load_1min"] == [0.5, 2.5]


def test_every_body_report_and_learning_curves_read_a_summary_as_the_raw_run(tmp_path):
    results = tmp_path / "every_body"
    dirs = [results / "ant-modular" / f"seed{seed}" for seed in (0, 1)]
    for run_dir, n in zip(dirs, (10_050, 12_000), strict=True):
        _run_dir(run_dir, n, eval_every=2_500)
    before = every_body.report(False, results)
    curve = learning_curves.our_curve(dirs[0])
    label = learning_curves._label(dirs[0])
    assert "| ant-modular | 2 | 1,002,551 (1,000,101-1,005,001), 100.25 m/s" in before
    for run_dir in dirs:
        records.write_summary(run_dir)
        _drop_raw(run_dir)
    assert every_body.report(False, results) == before
    assert learning_curves.our_curve(dirs[0]) == curve
    assert learning_curves._label(dirs[0]) == label


def test_a_finished_benchmark_run_keeps_its_summary_and_drops_its_checkpoints(tmp_path):
    run_dir = tmp_path / "walker2d-modular" / "seed0"
    _run_dir(run_dir, 20)
    (run_dir / "checkpoints" / "2000").mkdir(parents=True)
    (tmp_path / "walker2d-modular" / "seed0.log").write_text(
        f"python cli.py train --runs-root {tmp_path} --run-name seed0\n")
    every_body.keep_records_only(run_dir)
    assert not (run_dir / "checkpoints").exists()
    summary = json.loads((run_dir / records.SUMMARY).read_text())
    assert summary["command"].startswith("python cli.py train")
    assert summary["final_eval"] == {"eval/team_return": 4321.0}
