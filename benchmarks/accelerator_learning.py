"""The learning table on the accelerator (issue 43, points 3 and 5): every bundled standard
body, 5 seeds, ours at its defaults against Brax's PPO with Brax's published settings on the
same task (our body through `modular_ppo.interop.brax_env.BraxModularEnv`: our reward and
termination), final return mean ± 95% CI, and the wall time each side takes to reach the
other's final return.

    python benchmarks/accelerator_learning.py run --body ant-modular --side ours \
        --seeds 0 1 2 3 4 --steps 10000000 --budget-s 560 --out DIR
    python benchmarks/accelerator_learning.py run --body ant-modular --side brax \
        --seeds 0 1 2 3 4 --steps 10000000 --budget-s 560 --out DIR
    python benchmarks/accelerator_learning.py report --out DIR [--png FILE] [--write]

`run --side ours`: `cli.py train --body B --seeds S... --ppo.total-steps N` in a process of
its own (benchmarks/cli_runs.py: timed from the command, killed at the budget), nothing else
changed but evaluations every N / --evals steps, no video, checkpoints only at the end and a
fresh compile cache (a cold compile, as Brax's first seed gets). The seeds given train as
one compiled program (`--per-program K`: K at a time; 1: `--seed k` alone, which on a TPU
with 8+ host cores is the pipelined backend). Wall seconds count from the command (imports,
compile and evaluations included): a seed of a 5-seed program shares the chip with 4 others.
`run --side brax`: Brax's `ppo.train` on `BraxModularEnv(B)`, the env's own episode length,
Brax's published settings for the body (benchmarks/brax_ppo.py PUBLISHED: ant, halfcheetah,
humanoid; its ant settings for the other bodies), one seed after another in one process
(Brax has no seeds in one program), `num_evals` = --evals + 1, stopped at its first
evaluation at or past N; wall seconds per seed count the command's start-up (imports, env
build) plus the time since its `ppo.train` call (compile included; the later seeds load the
first's programs from the command's own compile cache, as ours' one program compiles once).

Each (body, side, seed) gets DIR/<body>/<side>/seed<k>.json as soon as it ends (Brax: after
every evaluation too): settings, env steps, curve (env steps, wall seconds, eval return),
whether it reached N ("complete"), the seeds sharing its program, hardware
(jax.devices()[0].device_kind, host CPUs), date, commit, versions and the 1-min load seen.
Both sides stop at --budget-s (counted from the command): ours is killed (a cut program's
seeds are recorded with the steps they reached, "complete": false), Brax raises out of its
`progress_fn` (at its evaluations: a seed can overrun by one interval) and starts no seed
that its previous seed's time says will not fit. A later call skips every seed recorded
complete with the same settings (ours': at the same commit too, its settings being the CLI
defaults of the commit) and runs the others again. Ours' records also hold the PPO
settings the run resolved ("ppo") and where each seed's clock went ("seconds": compile,
training calls, evaluations).

`report` prints one row per body: each side's final eval return, mean ± 95% CI (Student's t
over seeds, n seeds), both at the largest env-step count every seed of both sides reached
(curves interpolated linearly), each side's wall time to reach the other's final return
(mean), Brax's wall time to its own final return, and the ratio; `--png` draws every curve
(return against wall time and against env steps) in one PNG; `--write` puts the table under
its heading in BENCHMARKS.md only where the file stays within 25,000 bytes
(tests/packaging) and else says so.

Plan of device calls (one TPU v5e chip, 13 host cores; each < 9.5 min: --budget-s 560, the
call's limit 600 s). The device tool returns at most 8 files from $OUT (more are dropped,
all of them): run into a folder of the machine and pack the body's records into one file.
Measured there (2026-12-07, f0f9625):
ours' 5 seeds in one program (pipelined, 214k env-steps/s in all) reached 10.03M steps a
seed in 483 s, first progress at 108 s, an evaluation of the 5 seeds ~14 s (one program,
on the host's CPU device); Brax's seed 0 (c513cbb) reached 10.3M steps in 378 s (step 0
evaluated at 96 s, ~86k env-steps/s), so a call holds one Brax seed. Halfcheetah (19:16-19:37
UTC, 5211afe): ours' 5 seeds to 10.03M in 485 s of the call (first progress 106 s); each
Brax seed to 10.49M in 342-360 s (step 0 evaluated at 93-96 s). Hopper (22:08-22:27 UTC,
067b589): ours' 5 seeds to 10.03M in 375-388 s, Brax's seed 0 to 10.32M in 312 s. At
the hopper's and walker2d's accelerator preset (1,024 envs a seed, 4e3dd0b, 2026-12-08):
the hopper's 5 seeds reached 8.01M in a 540 s budget (~49 s a million steps a seed,
progress lines ~300k env-steps/s), the walker's 5.01M (~75 s a million, ~200k): the
records' "seconds" say where the clock goes; Brax's walker2d seed 0 evaluated 1.15M at
204 s. Give each run `timeout` under the call's limit: a call killed at its limit
returns nothing made after the kill (the packing of the records included).

    R=benchmarks/results/accelerator_learning
    S="python benchmarks/accelerator_learning.py run --steps 10000000 --budget-s 560 --out /tmp/al"
    # every call: cp -r $R/. /tmp/al/; timeout 570 $S --body B ...;
    #             tar czf $OUT/records.tgz -C /tmp/al B
    # then here: tar xzf .../records.tgz -C $R, and commit the new seed*.json.
    call 1: $S --body B --side ours --seeds 0 1 2 3 4
    calls 2-6: $S --body B --side brax --seeds K      (K = 0..4, ~380 s each)
    then here: python benchmarks/accelerator_learning.py report --out $R --png \
        $R/curves.png --write

for B in ant-modular, halfcheetah-modular, hopper-modular, walker2d-modular,
humanoid-modular (slower on MJX: give it --steps 5000000 or three calls a side) and
swimmer-3 (Swimmer-v5's three links: no swimmer-modular.xml is bundled). A call cut by
its budget keeps what finished (a cut program's seeds are recorded as far as they got and
run again from the start by the next call).

First trial on the chip (2026-12-06, a6d137c, hopper-modular, --steps 2000000 --evals 5,
budgets 230 / 240 s): ours' 5-seed program printed its first progress at 174 s (imports,
build, compile and the 5 seeds' first evaluations, one after another) and had 459k steps a
seed at 272 s of the command when the budget cut it; Brax's first seed evaluated step 0 at
94 s and reached 983k steps at 266 s (Brax's evaluator compiles three times, on
BraxModularEnv as on Brax's own envs: its inverted_pendulum on CPU likewise, and reset's and
step's states have the same signature).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from brax_ppo import PUBLISHED, _Deadline, brax_ppo_settings  # beside this script
from cli_runs import PROGRESS_PREFIX, run_cli
from report import environment_facts
from tables import markdown_table
from wall_clock import evaluations

COMMAND_STARTED = time.perf_counter()
ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "accelerator_learning"
BODIES = ("ant-modular", "halfcheetah-modular", "hopper-modular", "walker2d-modular",
          "humanoid-modular", "swimmer-3")
"""The bundled standard bodies (swimmer-3: Swimmer-v5's three links)."""
SIDES = ("ours", "brax")
HEADING = "## Learning on the accelerator: ours against Brax PPO"
BENCHMARKS_MAX_BYTES = 25_000
"""tests/packaging/test_packaging_code_edges.py holds BENCHMARKS.md to this."""
MARGIN_S = 20.0
"""Seconds kept back from ours' budget for what comes after the training command (the
hardware query, the records)."""


def brax_task(body: str) -> str:
    """The Brax env whose published PPO settings `body` gets: its own, else the ant's."""
    task = body.removesuffix("-modular")
    return task if task in PUBLISHED else "ant"


def body_name(body: str) -> str:
    """The body as records name it: an MJCF path by its file's stem."""
    return Path(body).stem if body.endswith(".xml") else body


def record_path(out: Path, body: str, side: str, seed: int) -> Path:
    return out / body_name(body) / side / f"seed{seed}.json"


def read_record(path: Path) -> dict | None:
    return json.loads(path.read_text()) if path.exists() else None


def is_recorded(out: Path, body: str, side: str, seed: int, settings: dict,
                commit: str | None = None) -> bool:
    """Whether the seed has a complete record of the same settings (a later call skips it)
    and, given a commit, made at that commit: ours' settings are the CLI defaults of the
    commit (a body's preset may change them), Brax's are all in `settings`."""
    record = read_record(record_path(out, body, side, seed))
    return (record is not None and record["complete"] and record["settings"] == settings
            and commit in (None, record["commit"]))


def write_record(out: Path, record: dict) -> Path:
    """The record as compact JSON, one line per field."""
    path = record_path(out, record["body"], record["side"], record["seed"])
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "{\n" + ",\n".join(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}"
                              for key, value in record.items()) + "\n}\n"
    path.write_text(text)
    return path


class LoadSampler:
    """The 1-min load average every `every_s` seconds while the command runs: [min, max]."""

    def __init__(self, every_s: float = 10.0) -> None:
        self.samples = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, args=(every_s,), daemon=True)
        self._thread.start()

    def _loop(self, every_s: float) -> None:
        while not self._stop.wait(every_s):
            self.samples.append(os.getloadavg()[0])

    def range(self) -> list[float]:
        loads = [*self.samples, os.getloadavg()[0]]
        return [round(min(loads), 2), round(max(loads), 2)]

    def stop(self) -> None:
        self._stop.set()


def hardware() -> dict:
    """The accelerator JAX sees and the host's CPUs (imports JAX: on a TPU, only once no
    other process holds the chip)."""
    import jax

    device = jax.devices()[0]
    return {"device_kind": device.device_kind, "platform": device.platform,
            "devices": jax.device_count(), "host_cpus": os.cpu_count()}


def new_record(body: str, side: str, seed: int, settings: dict, curve: list[dict],
               complete: bool, program_seeds: list[int], facts: dict, load: LoadSampler,
               **more) -> dict:
    """A (body, side, seed) record: `curve` rows of steps, wall_s, eval_return."""
    return {
        "body": body_name(body), "side": side, "seed": seed, "settings": settings,
        "complete": complete,
        "steps": curve[-1]["steps"] if curve else 0, "program_seeds": program_seeds,
        "curve": {key: [row[key] for row in curve] for key in ("steps", "wall_s", "eval_return")},
        "hardware": facts["hardware"], "date": facts["date"], "commit": facts["git"],
        "versions": facts["versions"], "host_cpu": facts["cpu"], "load_1min": load.range(),
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]), **more,
    }


def deadline_left(budget_s: float) -> float:
    return budget_s - (time.perf_counter() - COMMAND_STARTED)


# --- ours --------------------------------------------------------------------------------

def ours_settings(steps: int, evals: int, per_program: int, train_flags: list[str]) -> dict:
    return {"steps": steps, "evals": evals, "seeds_per_program": per_program,
            "train_flags": train_flags}


def ours_flags(body: str, seeds: list[int], steps: int, evals: int, train_flags: list[str],
               cache: Path) -> list[str]:
    """`cli.py train` flags of one program of `seeds` (one seed: `--seed`, no `--seeds`)."""
    seed_flags = ["--seed", str(seeds[0])] if len(seeds) == 1 else [
        "--seeds", *map(str, seeds)]
    return ["--body", body, *seed_flags, "--ppo.total-steps", str(steps),
            "--eval-every-steps", str(max(1, steps // evals)), "--no-video",
            "--checkpoint-every-steps", str(steps), "--keep-checkpoints", "1",
            "--compile-cache-dir", str(cache), "--run-name", "al", *train_flags]


def run_ours(body: str, seeds: list[int], steps: int, budget_s: float, out: Path, evals: int,
             per_program: int, train_flags: list[str]) -> None:
    settings = ours_settings(steps, evals, per_program, train_flags)
    commit = environment_facts()["git"]
    missing = [s for s in seeds if not is_recorded(out, body, "ours", s, settings, commit)]
    print(f"ours, {body}: seeds {missing or 'none'} to run "
          f"({[s for s in seeds if s not in missing]} recorded)", flush=True)
    for start in range(0, len(missing), per_program):
        group = missing[start:start + per_program]
        left = deadline_left(budget_s) - MARGIN_S
        if left < 30:
            print(f"ours, {body}: no budget left for seeds {group}", flush=True)
            return
        run_ours_program(body, group, steps, left, out, evals, settings, train_flags)


def run_ours_program(body: str, seeds: list[int], steps: int, budget_s: float, out: Path,
                     evals: int, settings: dict, train_flags: list[str]) -> None:
    load = LoadSampler()
    with tempfile.TemporaryDirectory() as tmp:
        runs_root = Path(tmp) / "runs"
        flags = ours_flags(body, seeds, steps, evals, train_flags, Path(tmp) / "cache")
        print("cli.py train " + " ".join(flags), flush=True)
        run = run_cli(flags, runs_root, budget_s,
                      mark=lambda line: line.startswith(PROGRESS_PREFIX))
        print("\n".join(run.lines[-5:]), flush=True)
        run_dirs = {seed: _ours_run_dir(runs_root, seeds, seed) for seed in seeds}
        rows = {seed: [r for r in _rows(path) if "time/elapsed_s" in r]
                for seed, path in run_dirs.items()}
        ppo = {seed: _resolved_ppo(path) for seed, path in run_dirs.items()}
    load.stop()
    facts = {**environment_facts(), "hardware": hardware()}
    complete = run.returncode == 0 and not run.cut
    offset_s = progress_offset(list(rows.values()), run.marked_s)
    for seed in seeds:
        curve = []
        if rows[seed] and offset_s is not None:
            curve = [{"steps": e["step"], "wall_s": e["wall_s"],
                      "eval_return": e["eval_team_return"]}
                     for e in evaluations(rows[seed], offset_s)]
        record = new_record(body, "ours", seed, settings, curve,
                            complete and bool(curve) and curve[-1]["steps"] >= steps, seeds,
                            facts, load, train_command="cli.py train " + " ".join(flags),
                            first_progress_s=run.marked_s, cut_at_budget=run.cut,
                            returncode=run.returncode, seconds=seconds_spent(rows[seed]),
                            ppo=ppo[seed])
        if not curve:
            record["tail"] = run.lines[-20:]
        print(f"wrote {write_record(out, record)} ({record['steps']:,} steps, "
              f"complete {record['complete']})", flush=True)


def progress_offset(rows: list[list[dict]], first_progress_s: float | None) -> float | None:
    """Seconds from the command to the seeds' shared training clock (`time/elapsed_s`):
    the first progress line comes after every seed's first row and its evaluation (each
    seed's elapsed time is taken before its evaluation, the seeds one after another), so at
    the clock's max(elapsed + eval_s) of those rows. Rows: each seed's timed rows (the final
    evaluation's row has no time/elapsed_s: with --eval-every-steps N / evals the last
    iteration's evaluation is the end of the curve)."""
    firsts = [seed_rows[0] for seed_rows in rows if seed_rows]
    if not firsts or first_progress_s is None:
        return None
    return first_progress_s - max(r["time/elapsed_s"] + r.get("time/eval_s", 0.0)
                                  for r in firsts)


def seconds_spent(rows: list[dict]) -> dict:
    """Where a seed's training clock went, from its timed rows: the first training call's
    compile, the training calls (iterations and their seconds), the evaluations (count and
    seconds) and the clock at the last row; the rest of the clock is the per-call work
    between them (metrics, logs, checkpoints)."""
    calls = [r["time/call_s"] for r in rows if "time/call_s" in r]
    evals = [r["time/eval_s"] for r in rows if "time/eval_s" in r]
    return {"compile_s": round(next((r["time/compile_s"] for r in rows
                                     if "time/compile_s" in r), 0.0), 1),
            "calls": len(calls), "calls_s": round(sum(calls), 1),
            "evals": len(evals), "evals_s": round(sum(evals), 1),
            "clock_s": round(rows[-1]["time/elapsed_s"], 1) if rows else 0.0}


def _ours_run_dir(runs_root: Path, seeds: list[int], seed: int) -> Path | None:
    name = "al" if len(seeds) == 1 else f"al-seed{seed}"
    found = sorted(runs_root.glob(f"*/{name}"))
    return found[0] if found else None


def _resolved_ppo(run_dir: Path | None) -> dict | None:
    """The PPO settings the run resolved (its config.json): the CLI defaults it ran at."""
    path = None if run_dir is None else run_dir / "config.json"
    return json.loads(path.read_text())["config"]["ppo"] if path and path.exists() else None


def _rows(run_dir: Path | None) -> list[dict]:
    path = None if run_dir is None else run_dir / "metrics.jsonl"
    if path is None or not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# --- Brax --------------------------------------------------------------------------------

def brax_settings(body: str, steps: int, evals: int, overrides: dict,
                  episode_length: int | None = None) -> dict:
    """What a Brax record's settings hold: the published settings (without the seed) and
    any --brax-set overrides, N, the evaluations."""
    ppo = brax_ppo_settings(brax_task(body), 0, **overrides)
    ppo.pop("seed")
    return {"steps": steps, "evals": evals, "published_for": brax_task(body),
            "overrides": overrides, "ppo": ppo, "episode_length": episode_length}


def run_brax(body: str, seeds: list[int], steps: int, budget_s: float, out: Path, evals: int,
             overrides: dict, episode_length: int | None = None) -> None:
    settings = brax_settings(body, steps, evals, overrides, episode_length)
    missing = [s for s in seeds if not is_recorded(out, body, "brax", s, settings)]
    print(f"brax, {body}: seeds {missing or 'none'} to run "
          f"({[s for s in seeds if s not in missing]} recorded)", flush=True)
    if not missing:
        return
    import jax
    from brax.training.agents.ppo import train as ppo

    from modular_ppo.env import EnvConfig
    from modular_ppo.interop.brax_env import BraxModularEnv, install_jax_compatibility

    install_jax_compatibility()
    cache = {"jax_compilation_cache_dir": tempfile.mkdtemp(),  # cold for the first seed
             "jax_persistent_cache_min_compile_time_secs": 0.1}
    before = {name: getattr(jax.config, name) for name in cache}
    for name, value in cache.items():
        jax.config.update(name, value)
    try:
        config = EnvConfig() if episode_length is None else EnvConfig(
            episode_length=episode_length)
        env = BraxModularEnv(body, config=config)
        _brax_seeds(ppo.train, env, body, missing, steps, budget_s, out, evals, overrides,
                    settings)
    finally:
        for name, value in before.items():
            jax.config.update(name, value)
        shutil.rmtree(cache["jax_compilation_cache_dir"], ignore_errors=True)


def _brax_seeds(train, env, body: str, seeds: list[int], steps: int, budget_s: float,
                out: Path, evals: int, overrides: dict, settings: dict) -> None:
    """`train` (Brax's ppo.train) on `env` for each seed, one after another, each recorded."""
    startup_s = time.perf_counter() - COMMAND_STARTED
    facts = {**environment_facts(), "hardware": hardware()}
    last_seed_s = None
    for seed in seeds:
        left = deadline_left(budget_s)
        if left < 30 or (last_seed_s is not None and left < last_seed_s):
            print(f"brax, {body}: {left:.0f} s left, the last seed took {last_seed_s} s: "
                  f"seeds from {seed} on are left for a later call", flush=True)
            break
        load = LoadSampler()
        curve: list[dict] = []
        started = time.perf_counter()
        ppo_kwargs = brax_ppo_settings(brax_task(body), seed, **overrides)
        ppo_kwargs["episode_length"] = env.env.episode_length  # the env's own

        def record(complete: bool) -> dict:
            return new_record(body, "brax", seed, settings, curve, complete, [seed], facts,
                              load, startup_s=round(startup_s, 1))

        def progress(num_steps: int, metrics: dict) -> None:
            curve.append({"steps": int(num_steps),
                          "wall_s": round(startup_s + time.perf_counter() - started, 1),
                          "eval_return": round(float(metrics["eval/episode_reward"]), 1)})
            print(f"brax seed {seed}: {curve[-1]}", flush=True)
            write_record(out, record(num_steps >= steps))
            if num_steps >= steps or deadline_left(budget_s) <= 0:
                raise _Deadline

        try:
            train(environment=env, num_timesteps=steps, num_evals=evals + 1,
                  progress_fn=progress, **ppo_kwargs)
        except _Deadline:
            pass
        load.stop()
        done = record(bool(curve) and curve[-1]["steps"] >= steps)
        print(f"wrote {write_record(out, done)} ({done['steps']:,} steps, "
              f"complete {done['complete']})", flush=True)
        last_seed_s = round(time.perf_counter() - started)


# --- report ------------------------------------------------------------------------------

def mean_ci(values: list[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% confidence interval (Student's t, n - 1
    degrees of freedom; nan for one value)."""
    from scipy import stats

    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, float(stats.t.ppf(0.975, n - 1)) * sd / math.sqrt(n)


def value_at(curve: dict, steps: float) -> float | None:
    """The eval return at `steps`, linear between the evaluations around it (None past the
    last)."""
    xs, ys = curve["steps"], curve["eval_return"]
    if not xs or steps > xs[-1] or steps < xs[0]:
        return None
    for i in range(1, len(xs)):
        if xs[i] >= steps:
            share = (steps - xs[i - 1]) / (xs[i] - xs[i - 1]) if xs[i] > xs[i - 1] else 1.0
            return ys[i - 1] + share * (ys[i] - ys[i - 1])
    return ys[0]


def time_to_reach(curve: dict, target: float) -> float | None:
    """The wall seconds at which the curve first reaches `target` (linear between the
    evaluations around the crossing), None if it never does."""
    ts, ys = curve["wall_s"], curve["eval_return"]
    for i, y in enumerate(ys):
        if y >= target:
            if i == 0:
                return ts[0]
            return ts[i - 1] + (target - ys[i - 1]) / (y - ys[i - 1]) * (ts[i] - ts[i - 1])
    return None


def load_records(out: Path) -> dict[tuple[str, str], list[dict]]:
    """(body, side) -> its records, those of the newest record's settings only."""
    found: dict[tuple[str, str], list[dict]] = {}
    for path in sorted(out.glob("*/*/seed*.json")):
        record = json.loads(path.read_text())
        found.setdefault((record["body"], record["side"]), []).append(record)
    for key, records in found.items():
        newest = max(records, key=lambda r: r["date"])["settings"]
        found[key] = [r for r in records if r["settings"] == newest and r["curve"]["steps"]]
    return {key: records for key, records in found.items() if records}


def finals(records: list[dict]) -> list[float]:
    return [r["curve"]["eval_return"][-1] for r in records]


def _fmt(mean: float, half: float) -> str:
    return f"{mean:,.0f} ± {half:,.0f}" if math.isfinite(half) else f"{mean:,.0f} ± -"


def final_cell(records: list[dict]) -> str:
    steps = sum(r["steps"] for r in records) / len(records)
    partial = sum(not r["complete"] for r in records)
    return (f"{_fmt(*mean_ci(finals(records)))} (n={len(records)}, {steps / 1e6:.2f}M"
            + (f", {partial} cut" if partial else "") + ")")


def reach_cell(records: list[dict], target: float) -> tuple[str, float | None]:
    """'mean s (k/n)' of the seeds that reached `target`, and that mean (None: none did);
    '; j at the first evaluation' where the untrained policy already scored `target`."""
    times = [t for t in (time_to_reach(r["curve"], target) for r in records) if t is not None]
    if not times:
        return f"not reached (0/{len(records)})", None
    mean = sum(times) / len(times)
    first = sum(r["curve"]["eval_return"][0] >= target for r in records)
    at_first = f"; {first} at the first evaluation" if first else ""
    return f"{mean:,.0f} s ({len(times)}/{len(records)}{at_first})", mean


def body_row(body: str, ours: list[dict], brax: list[dict]) -> list[str]:
    """The report's row of one body ("not run" where a side has no records, and "-" in the
    cells that compare the sides)."""
    cells = [body, final_cell(ours) if ours else "not run",
             final_cell(brax) if brax else "not run"]
    if not (ours and brax):
        return cells + ["-"] * 5
    equal = min(r["curve"]["steps"][-1] for r in ours + brax)
    at_equal = [mean_ci([value_at(r["curve"], equal) for r in side]) for side in (ours, brax)]
    ours_final, brax_final = mean_ci(finals(ours))[0], mean_ci(finals(brax))[0]
    ours_to_brax, ours_s = reach_cell(ours, brax_final)
    brax_to_ours, _ = reach_cell(brax, ours_final)
    brax_to_own, brax_s = reach_cell(brax, brax_final)
    ratio = f"{ours_s / brax_s:.2f}" if ours_s is not None and brax_s else "-"
    return cells + [f"{equal / 1e6:.2f}M: {_fmt(*at_equal[0])} vs {_fmt(*at_equal[1])}",
                    ours_to_brax, brax_to_ours, brax_to_own, ratio]


COLUMNS = ("body", "ours: final return (n seeds, mean env steps)", "Brax PPO: final return",
           "at equal env steps: ours vs Brax", "ours' time to Brax's final",
           "Brax's time to ours' final", "Brax's time to its own final", "ratio ours / Brax")


def report(out: Path) -> str:
    """The heading, the table and what it was measured on."""
    found = load_records(out)
    bodies = [b for b in BODIES if any((b, s) in found for s in SIDES)]
    bodies += sorted({b for b, _ in found} - set(bodies))
    rows = [body_row(b, found.get((b, "ours"), []), found.get((b, "brax"), []))
            for b in bodies]
    records = [r for rs in found.values() for r in rs]
    if not records:
        return f"no records under {out}"
    kinds = sorted({f"{r['hardware']['device_kind']} ({r['hardware']['host_cpus']} host CPUs)"
                    for r in records})
    dates = sorted(r["date"] for r in records)
    span = (dates[0] if dates[0] == dates[-1] else f"{dates[0][:-4]}-{dates[-1][-9:]}"
            if dates[0][:10] == dates[-1][:10] else f"{dates[0]} to {dates[-1]}")
    commits = sorted({r["commit"].split(" ")[0] for r in records})
    loads = [x for r in records for x in r["load_1min"]]
    per_program = sorted({r["settings"]["seeds_per_program"] for r in records
                          if r["side"] == "ours"})
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    return "\n".join([
        HEADING, "",
        f"`python benchmarks/accelerator_learning.py report --out {shown}` (runs: its "
        f"docstring's plan). {', '.join(kinds)}; {span}, {', '.join(commits)}, load "
        f"{min(loads):.1f}-{max(loads):.1f}. Ours: the CLI defaults of its commit, "
        f"{'/'.join(map(str, per_program))} seed(s) per program; Brax 0.14 PPO, its "
        "published settings (ant's where none), on our body (`BraxModularEnv`), a seed at a "
        "time. Last evaluation, mean ± 95% CI over seeds; wall times from the command, "
        "compile included, mean over the seeds that got there (k/n; j at the first "
        "evaluation: the untrained policy scored it).", "",
        markdown_table(COLUMNS, rows), ""])


def plot(out: Path, png: Path) -> Path:
    """Every record's curve, return against wall time and against env steps, a row per
    body, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    found = load_records(out)
    bodies = sorted({b for b, _ in found}, key=lambda b: (b not in BODIES, b))
    fig, axes = plt.subplots(len(bodies), 2, figsize=(10, 2.4 * len(bodies)), squeeze=False)
    colors = {"ours": "tab:blue", "brax": "tab:orange"}
    for row, body in enumerate(bodies):
        for side in SIDES:
            for i, record in enumerate(found.get((body, side), [])):
                curve = record["curve"]
                label = f"{side} ({len(found[body, side])} seeds)" if i == 0 else None
                for col, (xs, scale) in enumerate(((curve["wall_s"], 60), (curve["steps"], 1e6))):
                    axes[row][col].plot([x / scale for x in xs], curve["eval_return"],
                                        color=colors[side], lw=0.9, alpha=0.8, label=label)
        axes[row][0].set_ylabel(f"{body}\neval return", fontsize=8)
        axes[row][0].legend(fontsize=7)
    axes[-1][0].set_xlabel("wall time from the command, compile included (min)")
    axes[-1][1].set_xlabel("env steps (M)")
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=64, pil_kwargs={"optimize": True})
    plt.close(fig)
    return png


def with_section(text: str, section: str, heading: str = HEADING) -> str:
    """`text` with the section under `heading` (to the next heading of its level) replaced by
    `section`, or `section` appended where there is none."""
    lines = text.splitlines(keepends=True)
    level = heading.split(" ", 1)[0] + " "
    starts = [i for i, line in enumerate(lines) if line.rstrip("\n") == heading]
    if not starts:
        return text.rstrip("\n") + "\n\n" + section
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(level)),
               len(lines))
    return "".join(lines[:start]) + section + ("\n" if end < len(lines) else "") + "".join(
        lines[end:])


def write_benchmarks(section: str, path: Path = ROOT / "BENCHMARKS.md") -> bool:
    """Put `section` into BENCHMARKS.md if that keeps it within BENCHMARKS_MAX_BYTES."""
    new = with_section(path.read_text(), section)
    size = len(new.encode())
    if size > BENCHMARKS_MAX_BYTES:
        print(f"not written: BENCHMARKS.md would be {size:,} bytes, over "
              f"{BENCHMARKS_MAX_BYTES:,} (tests/packaging); make room first.")
        return False
    path.write_text(new)
    print(f"wrote the table into {path} ({size:,} bytes)")
    return True


# --- command line ------------------------------------------------------------------------

def _override(text: str) -> tuple[str, int | float]:
    key, value = text.split("=", 1)
    return key, float(value) if "." in value or "e" in value else int(value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run", help="train one side on one body, its seeds")
    run_parser.add_argument("--body", required=True)
    run_parser.add_argument("--side", choices=SIDES, required=True)
    run_parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    run_parser.add_argument("--steps", type=int, default=10_000_000, help="env steps a seed")
    run_parser.add_argument("--budget-s", type=float, default=560.0,
                            help="stop by this many seconds from the command's start")
    run_parser.add_argument("--evals", type=int, default=10,
                            help="evaluations over the run (plus the first, at the start)")
    run_parser.add_argument("--episode-length", type=int,
                            help="both sides' episodes (default: the env's own, 1000)")
    run_parser.add_argument("--per-program", type=int, default=0,
                            help="ours: seeds per compiled program (0: all given)")
    run_parser.add_argument("--brax-set", nargs="*", default=[], metavar="KEY=VALUE",
                            help="brax: override a published setting (the tests' tiny shape)")
    run_parser.add_argument("train_flags", nargs="*",
                            help="ours: more cli.py train flags, after --")
    report_parser = sub.add_parser("report", help="the table (and curves) of the records")
    report_parser.add_argument("--png", type=Path, help="draw every curve into this PNG")
    report_parser.add_argument("--write", action="store_true",
                               help="also put the table into BENCHMARKS.md (if it fits)")
    for sub_parser in (run_parser, report_parser):
        sub_parser.add_argument("--out", type=Path, default=RESULTS, help="records folder")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    if args.command == "run":
        if args.side == "ours":
            length = ["--env.episode-length", str(args.episode_length)] if (
                args.episode_length) else []
            run_ours(args.body, args.seeds, args.steps, args.budget_s, out, args.evals,
                     args.per_program or len(args.seeds), [*length, *args.train_flags])
        else:
            run_brax(args.body, args.seeds, args.steps, args.budget_s, out, args.evals,
                     dict(map(_override, args.brax_set)), args.episode_length)
        return
    text = report(out)
    print(text)
    if args.png:
        print(f"curves: {plot(out, args.png)}")
    if args.write:
        write_benchmarks(text)


if __name__ == "__main__":
    main()
