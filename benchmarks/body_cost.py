"""What a body costs as it grows: per body and network, from the committed run summaries
(benchmarks/records.py), its modules, observation and parameter counts, and the training rate
and compile time its runs measured.

    python benchmarks/body_cost.py                       # every summary under benchmarks/results
    python benchmarks/body_cost.py --results benchmarks/results/every_body_quiet

Single-body runs on the CPU backend only (a multi-body run's rate mixes its bodies). The rate
is the median of a run's training rows' env-steps/s (its first row, which includes the
compile, left out), then the median over runs with the range; the runs shared the machine's
cores with one other run each, so the figures carry the load of their folders (shown).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from records import SUMMARY, record_of_summary

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


def run_cost(summary: dict) -> dict | None:
    """One single-body CPU run's figures, None for other runs."""
    config = summary["config"]
    run = config.get("config", {})
    if run.get("backend") != "cpu" or run.get("held_out") or "," in run.get("body", ","):
        return None
    rates = [r["throughput/env_steps_per_s"] for r in record_of_summary(summary).training[1:]
             if r.get("throughput/env_steps_per_s")]
    if not rates:
        return None
    return {"body": run["body"], "arch": run["network"]["arch"], "n_envs": run["ppo"]["n_envs"],
            "modules": len(config["modules"]), "actuated": len(config["actuated_modules"]),
            "obs": sum(config["obs_sizes"].values()),
            "actions": sum(config["action_sizes"].values()),
            "parameters": config["parameters"]["total"], "rate": statistics.median(rates),
            "compile_s": summary.get("compile_s"), "load": summary.get("load_1min")}


def table(results: Path) -> str:
    groups = defaultdict(list)
    for path in sorted(results.rglob(SUMMARY)):
        cost = run_cost(json.loads(path.read_text()))
        if cost is not None:
            groups[(cost["modules"], cost["body"], cost["arch"], cost["n_envs"])].append(cost)
    lines = ["| body | network | modules (actuated) | obs floats / actions per env step "
             "| parameters | runs | env-steps/s, median (min-max) | compile s, median "
             "| load during the runs |",
             "|---|---|---|---|---:|---:|---|---:|---|"]
    for (_, body, arch, n_envs), runs in sorted(groups.items()):
        first = runs[0]
        rates = [r["rate"] for r in runs]
        compiles = [r["compile_s"] for r in runs if r["compile_s"] is not None]
        loads = [x for r in runs if r["load"] for x in r["load"]]
        lines.append(
            f"| {body} | {arch}, {n_envs} envs | {first['modules']} ({first['actuated']}) "
            f"| {first['obs']} / {first['actions']} | {first['parameters']:,} | {len(runs)} "
            f"| {statistics.median(rates):,.0f} ({min(rates):,.0f}-{max(rates):,.0f}) "
            f"| {statistics.median(compiles):.1f} | "
            + (f"{min(loads):.1f}-{max(loads):.1f}" if loads else "not sampled") + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    print(table(args.results.resolve()))


if __name__ == "__main__":
    main()
