"""benchmarks/smp_table.py: the protocol command it runs per set, and the table its report
makes from finished runs' summaries (run dirs written here by hand, as the CLI writes them)."""

import json
from pathlib import Path

import records
import smp_table

from modular_ppo.body.smp import BODY_SETS


def test_a_set_with_held_out_bodies_evaluates_them_zero_shot():
    flags = smp_table.Job("amorpheus-walkers", 2).flags(2_000_000)
    assert flags == ["--body", "amorpheus-walkers", "--held-out", "amorpheus-walkers:held-out",
                     "--seed", "2", "--ppo.total-steps", "2000000",
                     "--eval-every-steps", "500000", "--eval.n-envs", "16", "--no-video"]
    assert "--held-out" not in smp_table.Job("smp-walker++", 0).flags(1000)
    assert smp_table.Job("amorpheus-cheetahs", 0).flags(1000, evaluations=1)[-4] == "1000"
    assert smp_table.Job("smp-walker++", 0).flags(1000, 4, ("--ppo.gamma", "0.99"))[-3:] == [
        "--no-video", "--ppo.gamma", "0.99"]


def _summarized_run(run_dir: Path, total_steps: int, final: dict,
                    command: str | None = None, arch: str = "graph") -> None:
    """A finished run's raw files, turned into its summary.json; the raw files then go, as
    they stay out of git."""
    run_dir.mkdir(parents=True)
    (run_dir / "config.json").write_text(json.dumps({"config": {"ppo": {"total_steps":
                                                                         total_steps}},
                                                     "arch": arch}))
    row = {"step": total_steps, "time/elapsed_s": 10.0, **final}
    (run_dir / "metrics.jsonl").write_text(json.dumps(row) + "\n")
    (run_dir / "eval.json").write_text(json.dumps(row))
    records.write_summary(run_dir, command)
    for name in ("config.json", "metrics.jsonl", "eval.json"):
        (run_dir / name).unlink()


def _final(returns: dict[str, float]) -> dict:
    figures = {}
    for body, value in returns.items():
        figures.update({f"eval/team_return/{body}": value,
                        f"eval/forward_velocity/{body}": value / 1000,
                        f"eval/length/{body}": 1000.0})
    return figures


def test_the_report_gives_a_row_per_trained_and_held_out_body(tmp_path):
    bodies = BODY_SETS["amorpheus-walkers"] + BODY_SETS["amorpheus-walkers:held-out"]
    folder = tmp_path / "amorpheus-walkers" / "+".join(BODY_SETS["amorpheus-walkers"])
    _summarized_run(folder / "seed0", 3_000_000,
                    _final({body: 1000.0 + 100 * i for i, body in enumerate(bodies)}))
    _summarized_run(folder / "seed1", 3_000_000,
                    _final({body: 2000.0 + 100 * i for i, body in enumerate(bodies)}))
    unfinished = tmp_path / "amorpheus-cheetahs" / "cheetahs" / "seed0"
    unfinished.mkdir(parents=True)
    (unfinished / "config.json").write_text("{}")

    text = smp_table.report(tmp_path)
    assert ("| amorpheus-walkers | walker_2_main | trained | 2 | 3M | 1,500 (1,000-2,000) "
            "| 1.50 (1.00-2.00) | 1,000 (1,000-1,000) | not found |") in text
    assert ("| amorpheus-walkers | walker_6_main | zero-shot | 2 | 3M | 2,000 (1,500-2,500) "
            "| 2.00 (1.50-2.50) | 1,000 (1,000-1,000) | not found |") in text
    rows = [line for line in text.splitlines() if line.startswith("| amorpheus")]
    assert [row.split(" | ")[2] for row in rows] == ["trained"] * 4 + ["zero-shot"] * 2
    assert "amorpheus-cheetahs" not in text  # no finished run
    assert "--held-out SET:held-out --arch graph`" in text  # the sets' preset, from config
    assert "20e6" in text and "10e6" in text and "not yet on equal terms" in text


def test_the_summary_gives_a_row_per_set_and_the_budgets_against_the_papers(tmp_path):
    """Per set: each body's return averaged over seeds, then over the trained and held-out
    bodies, lowest and highest body beside; our budget as a share of each paper's."""
    trained, held_out = BODY_SETS["amorpheus-walkers"], BODY_SETS["amorpheus-walkers:held-out"]
    folder = tmp_path / "amorpheus-walkers" / "+".join(trained)
    returns = {body: -200.0 + 400 * i for i, body in enumerate(trained + held_out)}
    command = ("cli.py train " + " ".join(smp_table.Job("amorpheus-walkers", 0).flags(
        10_000_000, 4, ("--arch", "shared", "--ppo.gamma", "0.99")))
        + " --runs-root R --run-name seed0")
    _summarized_run(folder / "seed0", 10_000_000, _final(returns), command, "shared")
    _summarized_run(folder / "seed1", 10_000_000,
                    _final({body: value + 100 for body, value in returns.items()}), command,
                    "shared")
    text = smp_table.report(tmp_path, summary=True)
    assert "--arch shared --ppo.gamma 0.99`" in text
    # trained: -150, 250, 650, 1,050 (seed means); held out: 1,450, 1,850
    assert ("| amorpheus-walkers | 4 / 2 | 2 | 10M | 450 (-150 to 1,050) | 1,650 (1,450-1,850) "
            "| 1,000 / 1,000 | not found |") in text
    assert "10M is 0.5x SMP's, 1x AMORPHEUS's." in text
    assert "not yet on equal terms" not in text
    assert "report --results" in text and "--summary" in text
