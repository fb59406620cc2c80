"""benchmarks/transfer_table.py: the runs it schedules for a family, and the figures its
report computes from run directories (written here by hand, as the CLI writes them)."""

import json
from pathlib import Path

import pytest

import records
import transfer_table


def test_a_family_gets_specialists_a_shared_run_and_fine_tuning_from_it():
    jobs = transfer_table.jobs_for("centipede", ["graph"], ["value"], ["index", "none"], [3],
                                   steps=800_000)
    zero_shot = [job for job in jobs if job.statistics is not None]
    assert [(job.kind, job.body, job.statistics) for job in zero_shot[:4]] == [
        ("zeroshot-graph-value", "centipede-8", "warm-up"),
        ("zeroshot-graph-value", "centipede-8", "trained-bodies"),
        ("zeroshot-graph-value", "centipede-10", "warm-up"),
        ("zeroshot-graph-value", "centipede-10", "trained-bodies"),
    ]
    assert all(job.flags == [] for job in zero_shot)
    jobs = [job for job in jobs if job.statistics is None]
    kinds = [(job.kind, job.body) for job in jobs]
    assert kinds == [
        ("specialist", "centipede-8"), ("specialist", "centipede-10"),
        ("family-graph-value", "centipede-3..7"),
        ("finetune-graph-value", "centipede-8"), ("finetune-graph-value", "centipede-10"),
        ("family-graph-value-noindex", "centipede-3..7"),
        ("finetune-graph-value-noindex", "centipede-8"),
        ("finetune-graph-value-noindex", "centipede-10"),
    ]
    shared, shared_noindex = jobs[2], jobs[5]
    assert [job.source for job in zero_shot] == [shared] * 4 + [shared_noindex] * 4
    assert shared.flags[-11:] == ["--arch", "graph", "--morphology", "value", "--module-identity",
                                  "index", "--held-out", "centipede-8", "centipede-10",
                                  "--new-body-statistics", "warm-up"]
    assert shared_noindex.flags[-11:-5] == ["--arch", "graph", "--morphology", "value",
                                            "--module-identity", "none"]
    assert all(job.source is shared for job in jobs[3:5])
    assert all(job.source is shared_noindex for job in jobs[6:])
    assert all(job.source is None and "--arch" not in job.flags for job in jobs[:2])
    for job in jobs:
        assert job.seed == 3
        assert job.flags[:4] == ["--ppo.total-steps", "800000", "--eval-every-steps", "100000"]
    walker = transfer_table.jobs_for("walker2d", ["shared"], ["none"], ["index"], [0],
                                     steps=800_000)
    assert all(" ".join(job.flags).count("--ppo.gamma 0.99") == 1
               for job in walker if job.statistics is None)


def _run_dir(root: Path, total_steps: int, curve: list[tuple[int, dict]]) -> None:
    root.mkdir(parents=True)
    (root / "config.json").write_text(json.dumps({"config": {"ppo": {"total_steps": total_steps}}}))
    rows = [{"step": step, "time/elapsed_s": float(step), **values} for step, values in curve]
    (root / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    (root / "eval.json").write_text(json.dumps(rows[-1]))


def test_the_report_divides_by_the_specialists_final_return(tmp_path):
    family = tmp_path / "centipede"
    for body, final in (("centipede-8", 1000.0), ("centipede-10", 400.0)):
        _run_dir(family / "specialist" / body / body / "seed0", 1000,
                 [(500, {"eval/team_return": final / 2}), (1000, {"eval/team_return": final})])
    shared = family / "family-shared-none" / "train" / "centipede-4+centipede-6" / "seed0"
    _run_dir(shared, 1000,
             [(500, {"eval/team_return/centipede-8": 500.0,
                     "eval/team_return/centipede-10": 50.0}),
              (1000, {"eval/team_return/centipede-8": 800.0,
                      "eval/team_return/centipede-10": 100.0})])
    _run_dir(family / "finetune-shared-none" / "centipede-8" / "centipede-8" / "seed0", 1000,
             [(250, {"eval/team_return": 900.0}), (500, {"eval/team_return": 1000.0}),
              (750, {"eval/team_return": 1200.0})])
    _run_dir(family / "finetune-shared-none" / "centipede-10" / "centipede-10" / "seed0", 1000,
             [(500, {"eval/team_return": 300.0}), (1000, {"eval/team_return": 399.0})])

    # centipede-8 evaluated zero-shot both ways by `cli.py eval --output`; centipede-10 not.
    for statistics, value in (("warm-up", 700.0), ("trained-bodies", 900.0)):
        path = family / "zeroshot-shared-none" / "centipede-8" / f"seed0-{statistics}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"results": {"centipede-8": {
            "deterministic": {"episode/team_return": value},
            "stochastic": {"episode/team_return": 0.0}}}}))

    text = transfer_table.report(tmp_path, write=False)
    assert "| shared-none | centipede-8 | 1 | 1,000 | 80% | 50% | 70% / 90% | 0.50 |" in text
    assert ("| shared-none | centipede-10 | 1 | 400 | 25% | 12% | not measured "
            "| not within N (1 of 1 seeds) |" in text)


@pytest.mark.parametrize("values, percent, shown", [
    ([0.5, 0.7, 0.9], True, "70% (50%-90%)"),
    ([0.25, None], False, "not within N (1 of 2 seeds)"),
    ([0.2, 0.4], False, "0.30 (0.20-0.40)"),
])
def test_cells_give_the_mean_and_spread_over_seeds(values, percent, shown):
    assert transfer_table._summary(values, percent) == shown


def test_zero_shot_counts_every_seed_whose_shared_run_and_specialist_finished(tmp_path):
    family = tmp_path / "centipede"
    for seed, final in ((0, 1000.0), (1, 500.0)):
        _run_dir(family / "specialist" / "centipede-8" / "centipede-8" / f"seed{seed}", 1000,
                 [(1000, {"eval/team_return": final})])
        for setting in ("shared-none", "graph-none"):
            _run_dir(family / f"family-{setting}" / "train" / "centipede-4+centipede-6"
                     / f"seed{seed}", 1000,
                     [(500, {"eval/team_return/centipede-8": 100.0}),
                      (1000, {"eval/team_return/centipede-8": 400.0})])
    # Only seed 0 of the shared setting is fine-tuned; seed 1's fine-tuned run is unfinished.
    _run_dir(family / "finetune-shared-none" / "centipede-8" / "centipede-8" / "seed0", 1000,
             [(250, {"eval/team_return": 1000.0})])
    unfinished = family / "finetune-shared-none" / "centipede-8" / "centipede-8" / "seed1"
    unfinished.mkdir(parents=True)
    (unfinished / "config.json").write_text("{}")

    text = transfer_table.report(tmp_path, write=False)
    # 400 of 1,000 and 400 of 500.
    assert ("| shared-none | centipede-8 | 2 | 750 | 60% (40%-80%) | 15% (10%-20%) "
            "| not measured | 0.25 (1 of 2 seeds finished) |") in text
    assert ("| graph-none | centipede-8 | 2 | 750 | 60% (40%-80%) | 15% (10%-20%) "
            "| not measured | none finished |") in text


def test_trained_body_statistics_reach_the_shared_and_fine_tuned_runs_only():
    jobs = transfer_table.jobs_for("centipede", ["shared"], ["none"], ["index"], [0],
                                   steps=800_000, new_body_statistics="trained-bodies")
    flagged = {job.kind for job in jobs
               if "--new-body-statistics trained-bodies" in " ".join(job.flags)}
    assert flagged == {"family-shared-none", "finetune-shared-none"}
    default = transfer_table.jobs_for("centipede", ["shared"], ["none"], ["index"], [0],
                                      steps=800_000)
    assert {job.kind for job in default
            if "--new-body-statistics warm-up" in " ".join(job.flags)} == flagged


def test_init_optimizer_reaches_the_fine_tuned_runs_only():
    jobs = transfer_table.jobs_for("walker2d", ["graph"], ["none"], ["index"], [0],
                                   steps=800_000, init_optimizer="source")
    flagged = {job.kind for job in jobs if "--init-optimizer source" in " ".join(job.flags)}
    assert flagged == {"finetune-graph-none"}
    default = transfer_table.jobs_for("walker2d", ["graph"], ["none"], ["index"], [0],
                                      steps=800_000)
    assert not any("--init-optimizer" in job.flags for job in default)


def test_a_shared_run_keeps_its_checkpoints_until_every_run_from_it_in_the_grid_finished(tmp_path):
    grid = transfer_table.jobs_for("centipede", ["graph"], ["none"], ["index"], [0],
                                   steps=800_000)
    shared = next(job for job in grid if job.kind == "family-graph-none")
    run_dir = shared.root(tmp_path, "centipede") / "centipede-4+centipede-6" / "seed0"
    _run_dir(run_dir, 800_000, [(800_000, {"eval/team_return/centipede-8": 1.0})])
    (run_dir / "checkpoints" / "800000").mkdir(parents=True)
    # As after `run --skip finetune`: the zero-shot evaluations are done, the fine-tunes not.
    for job in grid:
        if job.statistics is not None:
            job.output(tmp_path, "centipede").parent.mkdir(parents=True, exist_ok=True)
            job.output(tmp_path, "centipede").write_text("{}")
    transfer_table._drop_shared_checkpoints(grid, [], "centipede", tmp_path)
    assert (run_dir / "checkpoints" / "800000").is_dir()

    finetunes = [job for job in grid if job.kind == "finetune-graph-none"]
    for job in finetunes:
        _run_dir(job.root(tmp_path, "centipede") / job.body / "seed0", 800_000,
                 [(800_000, {"eval/team_return": 1.0})])
    transfer_table._drop_shared_checkpoints(grid, [finetunes[0]], "centipede", tmp_path)
    assert (run_dir / "checkpoints" / "800000").is_dir()  # one still counted as running
    transfer_table._drop_shared_checkpoints(grid, [], "centipede", tmp_path)
    assert not (run_dir / "checkpoints").exists()
    assert records.load_record(run_dir).final_eval == {
        "step": 800_000, "time/elapsed_s": 800_000.0, "eval/team_return/centipede-8": 1.0}
    assert (run_dir / "summary.json").exists()


def test_a_run_from_a_shared_run_without_checkpoints_is_dropped_with_a_message(
        tmp_path, monkeypatch, capsys):
    grid = transfer_table.jobs_for("centipede", ["graph"], ["none"], ["index"], [0],
                                   steps=800_000)
    shared = next(job for job in grid if job.kind == "family-graph-none")
    _run_dir(shared.root(tmp_path, "centipede") / "centipede-4+centipede-6" / "seed0", 800_000,
             [(800_000, {"eval/team_return/centipede-8": 1.0})])
    verdicts = {}

    def run_pinned(jobs, cores, results, start, *, ready, ended):
        verdicts.update({(job.kind, job.body, job.statistics): ready(job, []) for job in jobs})

    monkeypatch.setattr(transfer_table, "run_pinned", run_pinned)
    finetunes = [job for job in grid if job.kind.startswith("finetune")]
    transfer_table.run("centipede", finetunes, [0], tmp_path, grid)
    assert verdicts == {("finetune-graph-none", "centipede-8", None): None,
                        ("finetune-graph-none", "centipede-10", None): None}
    out = capsys.readouterr().out
    assert "cannot fine-tune on centipede-8 from seed 0 of family-graph-none" in out


def test_a_written_report_replaces_the_same_folders_report_in_the_tables_section():
    section = transfer_table.TABLES_SECTION
    document = "# Benchmarks\n\n## Earlier\n\ntext\n"
    first = transfer_table.with_report(document, "\n### report A1\n", Path("results/a"))
    assert first.startswith(document.rstrip() + f"\n\n{section}\n\n")
    both = transfer_table.with_report(first + "\n## Later\n\nmore\n", "\n### report B1\n",
                                      Path("results/b"))
    again = transfer_table.with_report(both, "\n### report A2\n", Path("results/a"))
    assert again.count(section) == 1
    assert "report A1" not in again and "report B1" in again
    assert again.index("report A2") < again.index("report B1") < again.index("## Later")
    assert again.endswith("## Later\n\nmore\n")
    assert again.count("<!-- report --results results/a -->") == 1
    assert transfer_table.with_report(again, "\n### report A2\n", Path("results/a")) == again


def _summarize_and_drop_raw(results: Path) -> None:
    """Every run dir under `results` as its summary.json alone, as committed records are."""
    for run_dir in records.run_dirs(results):
        records.write_summary(run_dir)
        for name in ("config.json", "metrics.jsonl", "eval.json"):
            (run_dir / name).unlink()


def test_the_reports_on_summaries_equal_the_reports_on_the_raw_runs(tmp_path):
    test_the_report_divides_by_the_specialists_final_return(tmp_path / "a")
    test_the_seeds_table_gives_each_seeds_eval_figures_against_its_specialist(tmp_path / "b")
    before = [transfer_table.report(tmp_path / "a", write=False),
              transfer_table.seeds_report(tmp_path / "b", "trained-bodies")]
    _summarize_and_drop_raw(tmp_path)
    assert not list(tmp_path.rglob("metrics.jsonl"))
    assert [transfer_table.report(tmp_path / "a", write=False),
            transfer_table.seeds_report(tmp_path / "b", "trained-bodies")] == before


def test_the_seeds_table_gives_each_seeds_eval_figures_against_its_specialist(tmp_path):
    family = tmp_path / "centipede"
    for seed, final in ((0, 1000.0), (1, 500.0)):
        _run_dir(family / "specialist" / "centipede-8" / "centipede-8" / f"seed{seed}", 1000,
                 [(1000, {"eval/team_return": final})])
        _run_dir(family / "family-graph-none" / "train" / "centipede-4+centipede-6"
                 / f"seed{seed}", 1000, [(1000, {"eval/team_return/centipede-8": 1.0})])
    path = family / "zeroshot-graph-none" / "centipede-8" / "seed1-trained-bodies.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"results": {"centipede-8": {"deterministic": {
        "episode/team_return": 1250.0, "episode/forward_velocity": 2.345,
        "episode/length": 812.0}}}}))
    # Seed 0's fine-tuned run never reaches its specialist's 1,000; seed 1's reaches 500 at
    # a quarter of its steps.
    for seed, rows in ((0, [(500, {"eval/team_return": 900.0}),
                            (1000, {"eval/team_return": 800.0})]),
                       (1, [(250, {"eval/team_return": 500.0}),
                            (1000, {"eval/team_return": 600.0})])):
        _run_dir(family / "finetune-graph-none" / "centipede-8" / "centipede-8" / f"seed{seed}",
                 1000, rows)

    text = transfer_table.seeds_report(tmp_path, "trained-bodies")
    assert "| specialist | centipede-8 | 1,000 | 500 |" in text
    # Seed 0's shared run finished without an `eval` record; seed 1's: 1,250 of 500.
    assert ("| graph-none | centipede-8 | no `eval` record | 1,250 (250%; 2.35 m/s, "
            "812 steps) |") in text
    assert "| specialist | centipede-10 | not run | not run |" in text
    assert "| graph-none | centipede-10 | no `eval` record | no `eval` record |" in text
    assert ("| graph-none | centipede-8 | not within N (800 at N) | 0.25 (600 at N) |"
            in text)
    assert "| graph-none | centipede-10 | not run | not run |" in text
