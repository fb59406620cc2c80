"""Throughput benchmark: raw env stepping, our training and Brax PPO, back to back, one run.

    python benchmarks/throughput.py --record benchmarks/results/throughput/cpu.json  # every case
    python benchmarks/throughput.py --report benchmarks/results/throughput/cpu.json  # its table
    python benchmarks/throughput.py --cases env-step/cpu/2048 train/cpu/brax
    python benchmarks/throughput.py --case train/cpu/brax   # one case, prints its JSON

Each case (see cases.py) runs in a fresh process, so compile caches do not carry over and
the peak RSS is the case's own. The run makes a section with the
command, hardware, versions, date, the machine's load average around each case (other
processes compete for the same cores) and the ratios the performance targets are stated
in: printed, written to --record (JSON, what --report reads back) and, with --out, appended
to that file. Brax needs the `bench` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT_PREFIX = "RESULT "

DEFAULT_CASES = (
    "mujoco-batch/2048",
    "env-step/cpu/2048",
    "env-step/mjx/2048",
    "mjx-step/2048",
    "train/cpu/brax",
    "brax-ppo/brax",
    "mujoco-batch/64",
    "mujoco-batch/64/policy",
    "env-step/cpu/64",
    "env-step/mjx/64",
    "train/cpu/default",
    "train/mjx/default",
)
"""The cases a target compares are run next to each other (noisy, shared machines)."""


def run_child(name: str, body: str) -> None:
    import cases

    cases.BODY = body
    result = cases.run_case(name)
    result["peak_rss_gib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    if "jax" in sys.modules:
        jax = sys.modules["jax"]
        result["jax_backend"] = jax.default_backend()
        result["device"] = jax.devices()[0].device_kind
        result["device_count"] = jax.device_count()
    print(RESULT_PREFIX + json.dumps(result), flush=True)


def run_case_process(name: str, timeout_s: float, body: str = "ant-modular") -> dict:
    """Run one case on `body` in a fresh interpreter; its figures plus load and wall time."""
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(Path(__file__).resolve()), "--case", name, "--body", body],
            capture_output=True, text=True, timeout=timeout_s, cwd=ROOT,
        )
    except subprocess.TimeoutExpired:
        return dict(case=name, body=body, error=f"timed out after {timeout_s:.0f} s")
    lines = [line for line in done.stdout.splitlines() if line.startswith(RESULT_PREFIX)]
    if done.returncode != 0 or not lines:
        return dict(case=name, body=body, error=_error_line(done.stderr))
    result = json.loads(lines[-1].removeprefix(RESULT_PREFIX))
    return dict(case=name, body=body, **result, load_before=load_before,
                load_after=os.getloadavg()[0],
                case_wall_s=time.perf_counter() - started)


def _error_line(stderr: str) -> str:
    """The exception line of a child's traceback (JAX prints a note after it), else its
    last line."""
    lines = stderr.strip().splitlines() or ["no output"]
    raised = [line for line in lines if re.match(r"^[\w.]+(Error|Exception|Exit)\b", line)]
    return (raised or lines)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", help="run this one case and print its figures (JSON)")
    parser.add_argument("--cases", nargs="+", default=list(DEFAULT_CASES))
    parser.add_argument("--body", default="ant-modular", help="the body the cases step")
    parser.add_argument("--out", type=Path, help="also append the section to this file")
    parser.add_argument("--record", type=Path,
                        help="write the figures (command, machine, every case) to this JSON")
    parser.add_argument("--report", type=Path, nargs="+",
                        help="print the table of these records (a --record JSON, or files of "
                             "RESULT lines as --case prints them) instead of running")
    parser.add_argument("--timeout-s", type=float, default=1800.0, help="per case")
    args = parser.parse_args()
    if args.case:
        run_child(args.case, args.body)
        return
    if args.report:
        print(report(args.report))
        return

    from report import environment_facts, markdown_section

    command = "python benchmarks/throughput.py " + " ".join(sys.argv[1:])
    facts = environment_facts()
    print(json.dumps(facts), flush=True)
    results = []
    for name in args.cases:
        results.append(run_case_process(name, args.timeout_s, args.body))
        print(json.dumps(results[-1]), flush=True)
    section = markdown_section(command.strip(), facts, results)
    print(section)
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps({"command": command.strip(), "facts": facts,
                                           "results": results}, indent=1) + "\n")
    if args.out:
        with args.out.open("a") as out:
            out.write("\n" + section)
        print(f"appended to {args.out}")


def report(paths: list[Path]) -> str:
    """A --record JSON's section, or for files of RESULT lines one row per line: the
    training rate against the simulator alone on the same steps (the limit)."""
    from report import markdown_section

    parts, rows = [], []
    for path in paths:
        text = path.read_text()
        if not text.startswith(RESULT_PREFIX) and not text.startswith("=="):
            record = json.loads(text)
            parts.append(markdown_section(record["command"], record["facts"],
                                          record["results"]))
            continue
        label = ""
        for line in text.splitlines():
            if line.startswith("=="):  # a round's heading, e.g. "== base round 1 03:52 load 2.3"
                label = " " + line.strip("= ")
            if line.startswith(RESULT_PREFIX):
                r = json.loads(line.removeprefix(RESULT_PREFIX))
                rows.append(f"| {_shown(path)}{label} | {r['n_envs']} x {r['rollout_length']} "
                            f"| {r['steps_per_s']:,.0f} ({r['steps_per_cpu_s']:,.0f}) "
                            f"| {r['raw_steps_per_s']:,.0f} ({r['raw_steps_per_cpu_s']:,.0f}) "
                            f"| {r['steps_per_cpu_s'] / r['raw_steps_per_cpu_s']:.2f} "
                            f"| {r['compile_s']:.1f} |")
    if rows:
        parts.append("\n".join(["| record | envs x steps | training env-steps/s (per CPU-s) "
                                "| simulator alone, same steps (per CPU-s) | training / "
                                "simulator, per CPU-s | compile s |",
                                "|---|---|---:|---:|---:|---:|", *rows]))
    return "\n\n".join(parts)


def _shown(path: Path) -> str:
    path = path.resolve()
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
