"""The report modes that print BENCHMARKS.md's tables from committed records: body_cost.py,
every_body.py report --rows, throughput.py --report, compile_cache.py --report, mabrax.py
--report."""

import json
import re
from pathlib import Path

import body_cost
import compile_cache
import every_body
import mabrax
import records
import throughput


def _summary(body: str, rates: list[float], held_out: tuple[str, ...] = (),
             backend: str = "cpu") -> dict:
    """A summary as records.write_summary makes it, with these training rates."""
    return {
        "config": {"config": {"body": body, "held_out": list(held_out), "backend": backend,
                              "network": {"arch": "separate"}, "ppo": {"n_envs": 64}},
                   "modules": ["torso", "leg_1", "leg_2"], "actuated_modules": ["leg_1", "leg_2"],
                   "obs_sizes": {"torso": 10, "leg_1": 5, "leg_2": 5},
                   "action_sizes": {"leg_1": 1, "leg_2": 1}, "parameters": {"total": 1234}},
        "final_eval": None, "last_row": {}, "eval_rows": [], "compile_s": 12.5,
        "load_1min": [0.5, 2.0],
        "training": {"step": list(range(len(rates))),
                     "throughput/env_steps_per_s": rates},
    }


def test_body_cost_takes_the_median_rate_after_the_compiling_row_of_single_body_cpu_runs():
    cost = body_cost.run_cost(_summary("tiny", [10.0, 100.0, 300.0, 200.0]))
    assert cost["rate"] == 200.0  # the first row (compile included) left out
    assert (cost["modules"], cost["actuated"], cost["obs"], cost["actions"]) == (3, 2, 20, 2)
    assert body_cost.run_cost(_summary("tiny", [1.0, 2.0], held_out=("big",))) is None
    assert body_cost.run_cost(_summary("a,b", [1.0, 2.0])) is None
    assert body_cost.run_cost(_summary("tiny", [1.0, 2.0], backend="mjx")) is None


def test_body_cost_groups_runs_of_a_body_over_the_results_folders(tmp_path):
    for i, rates in enumerate(([0.0, 100.0], [0.0, 300.0], [0.0, 200.0])):
        path = tmp_path / f"folder{i}" / "tiny" / "seed0" / records.SUMMARY
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(_summary("tiny", rates)))
    (row,) = body_cost.table(tmp_path).splitlines()[2:]
    assert row == ("| tiny | separate, 64 envs | 3 (2) | 20 / 2 | 1,234 | 3 | 200 (100-300) "
                   "| 12.5 | 0.5-2.0 |")


def _every_body_run(run_dir: Path, eval_return: float) -> None:
    run_dir.mkdir(parents=True)
    rows = [{"step": 1_000_000, "time/elapsed_s": 60.0, "eval/team_return": eval_return}]
    (run_dir / "metrics.jsonl").write_text(json.dumps(rows[0]) + "\n")
    (run_dir / "config.json").write_text("{}")


def test_every_body_rows_take_each_body_from_the_folder_named(tmp_path):
    _every_body_run(tmp_path / "old" / "hopper-modular" / "seed0", 100.0)
    _every_body_run(tmp_path / "new" / "hopper-modular" / "seed0", 900.0)
    _every_body_run(tmp_path / "old" / "ant-modular" / "seed0", 50.0)
    text = every_body.rows_report(["ant-modular:old", "hopper-modular:new"], tmp_path)
    assert "| ant-modular | 1 | 50, nan m/s" in text
    assert "| hopper-modular | 1 | 900, nan m/s" in text
    assert "| 100," not in text


def test_every_body_rows_of_one_body_from_several_folders_at_chosen_step_marks(tmp_path):
    """accelerator_shape's table: the same body at several settings, one folder each, with
    env-step columns only (no wall minutes, no Brax or 1M anchors)."""
    for folder, value in (("e4", 100.0), ("e10", 900.0)):
        run_dir = tmp_path / "shape" / folder / "hopper-modular" / "seed0"
        run_dir.mkdir(parents=True)
        rows = [{"step": s, "time/elapsed_s": s / 1e4, "eval/team_return": value * s / 6e6}
                for s in (3_014_656, 6_029_312)]
        (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        (run_dir / "config.json").write_text("{}")
    text = every_body.rows_report(["hopper-modular:shape/e4", "hopper-modular:shape/e10"],
                                  tmp_path, steps=(3_000_000, 6_000_000), minutes=())
    assert "report --rows hopper-modular:shape/e4 hopper-modular:shape/e10 --steps 3000000 " \
           "6000000 --minutes`" in text
    lines = text.splitlines()
    assert "| body | seeds | 3M steps | 6M steps |" in lines
    assert any(line.startswith("| hopper-modular (e4) | 1 | 50, nan m/s") and "| 100, nan m/s"
               in line for line in lines)
    assert any(line.startswith("| hopper-modular (e10) | 1 | 452,") for line in lines)
    assert "published" not in text and "Brax PPO beside it" not in text


def test_throughput_report_gives_training_against_the_simulator_per_cpu_second(tmp_path):
    figures = {"n_envs": 64, "rollout_length": 32, "steps_per_s": 6000.0,
               "steps_per_cpu_s": 12000.0, "raw_steps_per_s": 10000.0,
               "raw_steps_per_cpu_s": 24000.0, "compile_s": 19.55}
    path = tmp_path / "rounds.txt"
    path.write_text(f"== base round 1 03:52:47 load 2.30\n{throughput.RESULT_PREFIX}"
                    f"{json.dumps(figures)}\n")
    row = throughput.report([path]).splitlines()[-1]
    assert row == (f"| {path} base round 1 03:52:47 load 2.30 | 64 x 32 | 6,000 (12,000) "
                   "| 10,000 (24,000) | 0.50 | 19.6 |")


def test_compile_cache_report_names_the_records_command_machine_and_verdict(tmp_path):
    run = {"first_progress_s": 20.0, "first_progress_cpu_s": 19.0, "started_s": 3.0,
           "compile_s": 14.0, "first_call_elapsed_s": 18.0, "eval_s": 4.0,
           "cache_entries": 9, "cache_mib": 1.0}
    record = {"command": "python benchmarks/compile_cache.py --pairs 1",
              "facts": {"date": "2026-12-02 17:32 UTC", "cpu": "AMD EPYC", "cores": 1,
                        "git": "83ca011", "load_average": [1.1, 1.0, 1.0]},
              "pairs": [{"first": run, "second": {**run, "first_progress_s": 12.0}}]}
    path = tmp_path / "cpu.json"
    path.write_text(json.dumps(record))
    text = compile_cache.report([path])
    assert text.startswith(f"`{path}`: `python benchmarks/compile_cache.py --pairs 1`, "
                           "2026-12-02 17:32 UTC, AMD EPYC, 1 core(s), git 83ca011, load 1.1")
    assert "| 1 | second | 12.0 (19.0) |" in text
    assert text.endswith("at most 12.0 s (target <= 10 s): missed.")


def test_compile_cache_start_breakdown_reads_the_cli_lines_and_jax_compile_log():
    log = [
        (1.4, "UserWarning: Transparent hugepages are not enabled."),
        (17.6, "building ant-modular with the separate network ..."),
        (18.8, "WARNING:jax._src.dispatch:Finished tracing _start for jit in 1.144833803 sec"),
        (23.0, "WARNING:jax._src.dispatch:Finished tracing _step for jit in 4.188600302 sec"),
        (30.3, "WARNING:jax._src.dispatch:Finished XLA compilation of jit(reset_envs) in "
               "3.382466555 sec"),
        (30.4, "WARNING:jax._src.dispatch:Finished XLA compilation of jit(squeeze) in 0.05 sec"),
        (31.8, "run dir: /tmp/runs/ant-modular/20261206-165719"),
        (31.8, "compiling the training step for TPU v5 lite (--backend cpu-pipelined) ..."),
        (36.5, "WARNING:jax._src.dispatch:Finished XLA compilation of jit(step) in 10.0 sec"),
        (61.9, "WARNING:jax._src.dispatch:Finished XLA compilation of jit(step) in "
               "26.269920111 sec"),
        (62.6, "step 65,536/300,000 | 98,514 env-steps/s"),
    ]
    run = compile_cache.CliRun([line for _, line in log], [s for s, _ in log], [], 1.4,
                               None, None, 62.6, None, False, 0)
    found = compile_cache.start_breakdown(run)
    assert (found["building_s"], found["run_dir_s"], found["compiling_s"]) == (17.6, 31.8, 31.8)
    assert found["trace_s"] == {"_step": 4.188600302, "_start": 1.144833803}
    # the longest of each name, longest first; what took under 0.5 s left out
    assert found["compile_s_by_program"] == {"step": 26.269920111, "reset_envs": 3.382466555}


def test_the_mabrax_table_keeps_one_column_per_method_for_humanoid_9_8():
    record = {"task": "MABrax humanoid_9|8", "marks": [5_000_000, 10_000_000], "results": {
        "ours (PPO, per-module GAE, team advantage)": {
            "returns": {"5000000": 652.4, "10000000": 4775.0}, "wall_s": 190.3,
            "cpu": "unknown", "device": "TPU v5 lite", "date": "2026-12-06", "load_1min": 0.0}}}
    header, _, row = mabrax.summary([record]).splitlines()
    # the task's own "|" is escaped: as many cell separators as the header's
    assert len(re.findall(r"(?<!\\)\|", row)) == header.count("|")
    assert row.startswith(r"| humanoid_9\|8 (5M / 10M) | 652 / 4,775 (3 min) | - | - |")


def test_the_mabrax_table_names_each_cpu_once_with_its_dates():
    def run(date: str) -> dict:
        return {"returns": {"5000000": 1.0, "10000000": 2.0}, "wall_s": 60.0,
                "cpu": "Intel(R) Xeon(R) Processor", "date": date, "load_1min": 1.0}

    record = {"task": "MABrax hopper_3x1", "marks": [5_000_000, 10_000_000], "results": {
        "ours (PPO, per-module GAE, team advantage)": run("2026-12-06"),
        "IPPO on MABrax itself": run("2026-12-07")}}
    row = mabrax.summary([record]).splitlines()[-1]
    assert row.endswith("| 1 / 2 (1 min) | Intel Xeon, 2026-12-06, 2026-12-07, 1.0-1.0 |")
