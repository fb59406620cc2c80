"""The MABrax scenarios side by side: this project's PPO against JaxMARL-style IPPO and
MAPPO, the same number of env steps on the same machine (issue 46, point 2).

    python benchmarks/mabrax.py --task hopper_3x1     # 10M steps each, marks at 5M and 10M
    python benchmarks/mabrax.py --task hopper_3x1 --methods ippo   # one method; others kept
    python benchmarks/mabrax.py --task hopper_3x1 --steps 60000 --marks 30000 60000 --out /tmp/t
    python benchmarks/mabrax.py --report              # one table of every task in --out

- ours: `cli.py train --body BODY --partition PARTITION` (the task's, `MABRAX_TASKS`) with
  its defaults, the body's PPO preset included (per-module GAE summed into one team
  advantage, the default backend), `--ppo.total-steps STEPS`; the return at a mark is
  the mean team return of the episodes that ended in the 96,000 env steps before it (the
  ant_4x2 rows of 2026-12-01: of the last iteration's episodes).
- IPPO: `benchmarks/ippo.py` (JaxMARL's ippo_ff_mabrax.yaml settings) on `mabrax_env(task)`
  (MABrax's agents, observations and shared team reward, this project's body and task;
  `--backend`: MJX, or the C simulator); the return at a mark is
  the mean team return of the episodes that ended in the last five updates at or before
  it. MAPPO: the same with the centralized critic of benchmarks/ippo.py. The ant_4x2 rows of
  2026-12-01 trained IPPO / MAPPO on `JaxMARLEnv("ant_4x2")` (each agent its modules'
  reward, not the team's; the row's "env" says so). IPPO on MABrax itself (`--methods
  ippo-mabrax`): the same on `jaxmarl.make(task)`, JaxMARL's env on Brax's own MJCF,
  physics pipeline and task (Brax's rewards: its returns compare with the others' only
  roughly), beside ours' speed.

Each method runs alone, from seed `--seed`, one after the other. Its row (returns at the
marks, wall time, CPU, date, 1-min load at its end, the IPPO / MAPPO settings) is written
to `--out`/<task>.json ("|" written "_") as soon as it ends, beside the rows already there
for the same steps and seed; the task's table is printed at the end.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import io
import json
import math
import os
import re
import tempfile
import time
from pathlib import Path

import jax
import numpy as np
from ippo import IPPO_FF_MABRAX, ippo_config, train_ippo  # benchmarks/ippo.py, beside this script
from report import cpu_model  # benchmarks/report.py, beside this script
from rich.console import Console
from tables import markdown_table  # benchmarks/tables.py, beside this script

from modular_ppo.interop import MABRAX_TASKS, mabrax_env
from modular_ppo.runs.resolve import train_defaults
from modular_ppo.runs.run_dir import read_metrics
from modular_ppo.runs.train_run import run_training

ROOT = Path(__file__).resolve().parents[1]


LAST_UPDATES = 5
"""A return at a mark: the mean over the episodes that ended in IPPO's last LAST_UPDATES
updates before it (5 x 64 envs x 300 steps = 96,000 env steps), and for ours in the same
env steps before it."""


def ours(task: str, steps: int, marks: list[int], seed: int, root: Path, window: int) -> dict:
    body, partition = MABRAX_TASKS[task]
    defaults = train_defaults(body, partition)  # the body's own PPO preset, as the CLI's
    config = dataclasses.replace(
        defaults, body=body, partition=partition, seed=seed,
        ppo=dataclasses.replace(defaults.ppo, total_steps=steps),
        eval_every_steps=0, checkpoint_every_steps=0, video=False,
        runs_root=root, run_name="ours",
    )
    start = time.perf_counter()
    rows = [r for r in read_metrics(run_training(config, Console(file=io.StringIO())))
            if r.get("episode/count", 0) > 0]
    at = {}
    for mark in marks:
        near = [r for r in rows if mark - window < r["step"] <= mark]
        count = sum(r["episode/count"] for r in near)
        at[mark] = (sum(r["episode/team_return"] * r["episode/count"] for r in near) / count
                    if count else math.nan)
    return {"returns": at, "wall_s": time.perf_counter() - start}


def ippo(env, steps: int, marks: list[int], seed: int, config: dict) -> dict:
    start = time.perf_counter()
    _, curve = train_ippo(env, {**config, "TOTAL_TIMESTEPS": steps},
                          jax.random.PRNGKey(seed))
    at = {}
    for mark in marks:
        before = [r["team_return"] for r in curve if r["steps"] <= mark][-LAST_UPDATES:]
        finite = [x for x in before if not math.isnan(x)]
        at[mark] = float(np.mean(finite)) if finite else math.nan
    return {"returns": at, "wall_s": time.perf_counter() - start}


METHODS = {
    "ours": "ours (PPO, per-module GAE, team advantage)",
    "ippo": "IPPO through JaxMARLEnv",
    "mappo": "MAPPO through JaxMARLEnv",
    "ippo-mabrax": "IPPO on MABrax itself",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", choices=list(MABRAX_TASKS), default="ant_4x2")
    parser.add_argument("--steps", type=int, default=10_000_000)
    parser.add_argument("--marks", type=int, nargs="+", default=[5_000_000, 10_000_000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", choices=list(METHODS), default=list(METHODS),
                        help="run these; rows in --out for the same steps and seed are kept")
    parser.add_argument("--backend", choices=["mjx", "cpu"], default="mjx",
                        help="the simulator of IPPO's and MAPPO's env")
    parser.add_argument("--ippo-envs", type=int, default=IPPO_FF_MABRAX["NUM_ENVS"])
    parser.add_argument("--ippo-rollout", type=int, default=IPPO_FF_MABRAX["NUM_STEPS"])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/mabrax",
                        help="folder of the <task>.json files")
    parser.add_argument("--report", action="store_true",
                        help="print one table of every task in --out instead of running")
    args = parser.parse_args()
    if args.report:
        print(summary([json.loads(path.read_text()) for path in sorted(args.out.glob("*.json"))]))
        return
    # humanoid_9|8: "|" is refused in file names by some tools (the device tool's copy)
    out = args.out / f"{args.task.replace('|', '_')}.json"
    ippo_settings = ippo_config(NUM_ENVS=args.ippo_envs, NUM_STEPS=args.ippo_rollout)
    previous = json.loads(out.read_text()) if out.exists() else {}
    same_run = previous.get("steps") == args.steps and previous.get("seed") == args.seed
    results = previous.get("results", {}) if same_run else {}
    for method in args.methods:
        results[METHODS[method]] = row(method, args, ippo_settings)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({
            "task": f"MABrax {args.task}", "steps": args.steps, "marks": args.marks,
            "seed": args.seed, "jax_backend": jax.default_backend(),
            "results": results,
        }, indent=2))
    print(table(json.loads(out.read_text())))
    print(f"wrote {out}")


def row(method: str, args: argparse.Namespace, ippo_settings: dict) -> dict:
    """One method's run on `args.task` and its row: returns at the marks, wall time, CPU,
    date, load at its end, and IPPO's / MAPPO's config and env."""
    settings = {}
    if method == "ours":
        with tempfile.TemporaryDirectory() as root:
            window = LAST_UPDATES * ippo_settings["NUM_ENVS"] * ippo_settings["NUM_STEPS"]
            result = ours(args.task, args.steps, args.marks, args.seed, Path(root), window)
    else:
        config = {**ippo_settings, "TOTAL_TIMESTEPS": args.steps,
                  "CENTRALIZED_CRITIC": method == "mappo"}
        if method == "ippo-mabrax":
            import jaxmarl  # MABrax needs Brax: the [interop] extra

            env, name = jaxmarl.make(args.task), f"jaxmarl.make({args.task!r})"
        else:
            env = mabrax_env(args.task, backend=args.backend)
            name = f"mabrax_env({args.task!r}, backend={args.backend!r})"
        result = ippo(env, args.steps, args.marks, args.seed, config)
        settings = {"config": config, "env": name}
    return {**settings, "returns": {str(m): v for m, v in result["returns"].items()},
            "wall_s": result["wall_s"], "cpu": cpu_model(),
            "device": jax.devices()[0].device_kind, "date": str(dt.date.today()),
            "load_1min": os.getloadavg()[0]}


def machine(row: dict) -> str:
    """The CPU a row ran on ("Intel(R) Xeon(R) Processor" as "Intel Xeon"), and the
    accelerator where it had one."""
    cpu = " ".join(re.sub(r"\((R|TM)\)|\bProcessor\b|\bCPU\b", "", row["cpu"]).split())
    device = row.get("device", "cpu")
    return cpu if device == "cpu" else f"{device}, host {cpu}"


def summary(records: list[dict]) -> str:
    """One Markdown table of every task's rows: a line per task, a column per method
    (returns at the marks, wall time), then the CPUs, dates and loads of its runs."""
    methods = list(METHODS.values())
    rows = []
    for record in records:
        results = record["results"]
        cells = ["-" if method not in results else
                 " / ".join(f"{results[method]['returns'][str(m)]:,.0f}" for m in record["marks"])
                 + f" ({results[method]['wall_s'] / 60:.0f} min)" for method in methods]
        loads = [r["load_1min"] for r in results.values()]
        dates: dict[str, set[str]] = {}
        for r in results.values():
            dates.setdefault(machine(r), set()).add(r["date"])
        machines = [f"{m}, {', '.join(sorted(d))}" for m, d in sorted(dates.items())]
        marks = " / ".join(f"{m / 1e6:g}M" for m in record["marks"])
        rows.append([f"{record['task'].removeprefix('MABrax ')} ({marks})", *cells,
                     f"{'; '.join(machines)}, {min(loads):.1f}-{max(loads):.1f}"])
    return markdown_table(["task (steps)", *methods, "CPU, date, 1-min load"], rows)


def table(record: dict) -> str:
    """The Markdown table of every method's row in a task's results file."""
    marks = record["marks"]
    rows = [[name, *(f"{result['returns'][str(m)]:,.0f}" for m in marks),
             f"{result['wall_s'] / 60:.1f} min",
             f"{machine(result)}, {result['date']}, {result['load_1min']:.1f}"]
            for name, result in record["results"].items()]
    columns = ["method", *(f"return at {m:,} steps" for m in marks), "wall time",
               "CPU, date, 1-min load at the end"]
    return (f"{record['task']}, seed {record['seed']}\n"
            + markdown_table(columns, rows, numeric=range(1, len(marks) + 2)))


if __name__ == "__main__":
    main()
