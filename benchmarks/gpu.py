"""GPU in one command: raw MJX, training env-steps/s at 4,096 and 8,192 envs, and the time
to a training team return of 3,000, on ant-modular; Markdown rows with the hardware.

    bash benchmarks/gpu.sh                      # MJX (JAX implementation); appends to BENCHMARKS.md
    bash benchmarks/gpu.sh --backend warp       # MJX's MuJoCo Warp (pip install -e '.[warp]')
    python benchmarks/gpu.py --backend cpu --n-envs 8 16 --target 0 --budget-scale 0.2 \\
        --out rows.md --json rows.json -- --ppo.n-minibatches 2 --env.episode-length 8
                                                # a tiny check without a GPU (CI's)

Parts, each in a process of its own, each cut at its wall-time budget (`BUDGETS_S`, 7.5
minutes together, times --budget-scale), in this order:
- raw/<n>, for each --n-envs: vmap(mjx.step) x frame skip with random controls on the
  backend's MJX implementation (cases.py `mjx-step`; `mujoco-batch` for --backend cpu);
- return: `cli.py train --body ant-modular --backend B --ppo.n-envs <first n>` (the CLI's
  PPO settings otherwise: on a GPU its GPU defaults) until an iteration's training team
  return (`episode/team_return`) reaches --target: the time from starting the command
  (compile included) and the env steps by then. Its calls after the first also give the
  training env-steps/s at that count (median);
- train/<n>, for the other counts: the same command for `TIMED_CALLS` calls after the
  first, or its budget; env-steps/s the same way.
Flags after `--` go to every `cli.py train`. Appends the section to --out, writes the
figures as JSON (--json); exits 0 when every part gave its figures (a target not
reached in the budget is a figure), 1 when one failed, 2 when the backend cannot run here.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from cli_runs import PROGRESS_PREFIX, ROOT, metrics_rows, run_cli
from report import environment_facts
from throughput import run_case_process

from modular_ppo.errors import OutputPathError
from modular_ppo.output_paths import make_parent, output_file

BODY = "ant-modular"
BUDGETS_S = {"raw": 70.0, "train": 90.0, "return": 210.0}
"""Wall seconds per part, start-up and compiling included: two raw, one train and the
return part make 440 s."""
RAW_CASE = {"mjx": "mjx-step/{n}", "warp": "mjx-step/{n}/warp", "cpu": "mujoco-batch/{n}"}
"""The raw-simulator case (cases.py) of each backend. "cpu" (MuJoCo's C simulator) is
there to check the script quickly where no GPU is: no MJX program to compile."""
RAW_WHAT = {"mjx": "vmap(mjx.step) x frame skip, random ctrl (MJX, JAX implementation)",
            "warp": "vmap(mjx.step) x frame skip, random ctrl (MJX, MuJoCo Warp)",
            "cpu": "MuJoCo's C simulator from numpy (mujoco.batch), random ctrl"}
TIMED_CALLS = 10
"""Training calls after the first (the one that compiles) that a train part times."""
THROUGHPUT = ("budget_s", "wall_s", "compile_s", "steps_per_s", "calls")
"""The figures of a training part that are its throughput (the rest: the target's)."""

PREFLIGHT = """
import json, sys, jax
from modular_ppo.env.warp_physics import warp_unavailable_reason
print(json.dumps(dict(device=jax.devices()[0].device_kind, device_count=jax.device_count(),
                      jax_backend=jax.default_backend(),
                      unavailable=warp_unavailable_reason() if sys.argv[1] == "warp" else None)))
"""
"""Printed by a fresh process: the devices JAX sees, and what the backend lacks here."""


def preflight(backend: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PREFLIGHT, backend], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"error: JAX does not start here:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def raw_part(backend: str, n_envs: int, budget_s: float) -> dict:
    result = run_case_process(RAW_CASE[backend].format(n=n_envs), budget_s)
    return {"n_envs": n_envs, **result, "part": f"raw/{n_envs}", "budget_s": budget_s}


def training_part(name: str, flags: list[str], budget_s: float, target: float | None) -> dict:
    """`cli.py train` with `flags` until a training team return >= target (target None:
    until `TIMED_CALLS` calls after the first) or `budget_s` seconds: its env-steps/s and
    compile, and when the target was reached."""

    def done(line: str, root: Path) -> bool:
        if not line.startswith(PROGRESS_PREFIX):
            return False
        rows = [row for row in metrics_rows(root) if "throughput/env_steps_per_s" in row]
        if target is None:
            return len(rows) > TIMED_CALLS
        return len(rows) >= 2 and any(
            row.get("episode/team_return", float("-inf")) >= target for row in rows)

    with tempfile.TemporaryDirectory(prefix="gpu_bench_") as scratch:
        run = run_cli(flags, Path(scratch), budget_s, done)
    rows = [row for row in run.rows if "throughput/env_steps_per_s" in row]
    result = dict(part=name, budget_s=budget_s, wall_s=run.stopped_s or budget_s,
                  returncode=run.returncode)
    if len(rows) < 2:
        tail = " / ".join(line for line in run.lines[-3:] if line.strip())
        return dict(result, error=f"fewer than two training calls in {budget_s:.0f} s "
                                  f"(exit {run.returncode}): {tail or 'no output'}")
    returns = [r["episode/team_return"] for r in rows
               if math.isfinite(r.get("episode/team_return", math.nan))]
    result.update(compile_s=rows[0]["time/compile_s"],
                  steps_per_s=statistics.median(r["throughput/env_steps_per_s"]
                                                for r in rows[1:]),
                  calls=len(rows), best_team_return=max(returns, default=None))
    if target is not None:
        first = next((r for r in rows if r.get("episode/team_return", float("-inf")) >= target),
                     None)
        result.update(target=target, reached=first is not None)
        if first is not None:
            result.update(target_s=(run.first_line_s or 0.0) + first["time/elapsed_s"],
                          target_steps=first["step"])
    return result


def markdown(command: str, facts: dict, devices: dict, backend: str, parts: list[dict]) -> str:
    versions = ", ".join(f"{k} {v}" for k, v in facts["versions"].items())
    lines = [
        f"## GPU run of {facts['date']} ({BODY}, {backend} backend)",
        "",
        f"- Command: `{command}`",
        f"- Hardware: {devices['device']} x {devices['device_count']} (JAX backend "
        f"{devices['jax_backend']}); host {facts['cpu']}, {facts['cores']} cores, "
        f"{facts['memory_gib']} GiB.",
        f"- Versions: Python {facts['python']}, {versions}; git {facts['git']}.",
        "",
        "| part | what | envs | env steps/s | compile s | wall s (budget) | result |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    what = {"raw": RAW_WHAT[backend],
            "train": "cli.py train, training env steps/s (median of the calls after the first)",
            "return": "cli.py train until a training team return >= target"}
    for p in parts:
        kind = p["part"].split("/")[0]
        if "error" in p:
            lines.append(f"| {p['part']} | {what[kind]} | {p.get('n_envs', '')} | | | "
                         f"({p['budget_s']:.0f}) | failed: {p['error']} |")
            continue
        wall = p.get("case_wall_s", p.get("wall_s"))
        lines.append(f"| {p['part']} | {what[kind]} | {p['n_envs']} | {p['steps_per_s']:,.0f} "
                     f"| {p['compile_s']:.1f} | {wall:.0f} ({p['budget_s']:.0f}) "
                     f"| {_result(p)} |")
    return "\n".join(lines) + "\n"


def _result(part: dict) -> str:
    if "target" not in part:
        return ""
    if part["reached"]:
        return (f"team return {part['target']:,.0f} reached {part['target_s']:.0f} s after "
                f"the command started, at {part['target_steps']:,} env steps")
    best = part["best_team_return"]
    return (f"team return {part['target']:,.0f} not reached in {part['budget_s']:.0f} s "
            f"(best {best:,.0f})" if best is not None else "no episode finished")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(RAW_CASE), default="mjx")
    parser.add_argument("--n-envs", type=int, nargs="+", default=[4096, 8192])
    parser.add_argument("--target", type=float, default=3000.0,
                        help="training team return to reach")
    parser.add_argument("--budget-scale", type=float, default=1.0,
                        help="multiplies every part's wall-time budget")
    parser.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md",
                        help="the Markdown section is appended here")
    parser.add_argument("--json", type=Path, help="the figures (default: "
                        "benchmarks/results/gpu/<backend>.json)")
    parser.add_argument("train_flags", nargs="*", help="flags for cli.py train (after --)")
    args = parser.parse_args()
    command = "bash benchmarks/gpu.sh " + " ".join(sys.argv[1:])
    figures = args.json or ROOT / "benchmarks/results/gpu" / f"{args.backend}.json"
    try:  # before minutes of measuring
        output_file(args.out, "--out")
        output_file(figures, "--json")
    except OutputPathError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    devices = preflight(args.backend)
    if devices["unavailable"]:
        print(f"error: --backend {args.backend}: {devices['unavailable']}.", file=sys.stderr)
        return 2
    if devices["jax_backend"] != "gpu":
        print(f"note: JAX runs on {devices['jax_backend']} here, not a GPU: these are "
              f"{devices['jax_backend']} figures.", flush=True)
    budget = {part: seconds * args.budget_scale for part, seconds in BUDGETS_S.items()}
    parts = []

    def report(part: dict) -> None:
        parts.append(part)
        print(json.dumps(part), flush=True)

    for n in args.n_envs:
        report(raw_part(args.backend, n, budget["raw"]))
    flags = ["--body", BODY, "--backend", args.backend, "--eval-every-steps", "0",
             "--checkpoint-every-steps", "0", "--no-video", *args.train_flags]
    first, *others = args.n_envs
    returned = training_part("return", [*flags, "--ppo.n-envs", str(first)], budget["return"],
                             args.target)
    report(dict(returned, n_envs=first))
    if "error" not in returned:  # the same run's training throughput
        report({key: returned[key] for key in THROUGHPUT} | dict(part=f"train/{first}",
                                                                  n_envs=first))
    for n in others:
        report(dict(training_part(f"train/{n}", [*flags, "--ppo.n-envs", str(n)],
                                  budget["train"], None), n_envs=n))
    facts = environment_facts()
    section = markdown(command.strip(), facts, devices, args.backend, parts)
    print(section)
    with make_parent(args.out).open("a") as out:
        out.write("\n" + section)
    record = {"command": command, "facts": facts, "devices": devices, "parts": parts}
    make_parent(figures).write_text(json.dumps(record, indent=1) + "\n")
    print(f"appended to {args.out}; figures in {figures}")
    return 1 if any("error" in part for part in parts) else 0


if __name__ == "__main__":
    sys.exit(main())
