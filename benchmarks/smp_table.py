"""The SMP / AMORPHEUS benchmark sets (issue 46): one shared policy trained on a set, its final
evaluation on each training body and zero-shot on the set's held-out bodies, beside what the
papers publish for the same set.

    python benchmarks/smp_table.py run --sets amorpheus-walkers --steps 2000000 --cores 0
    python benchmarks/smp_table.py report                 # Markdown to stdout

`run`: per set and seed, the papers' protocol as one command (docs/smp.md),
`nice -n NICE taskset -c CORE cli.py train --body SET [--held-out SET:held-out] --seed S
--ppo.total-steps N --eval-every-steps N/K --eval.n-envs 16 --no-video --runs-root
<results>/<set> --run-name seed<S>` (K: --evaluations, 4 unless given; each evaluates every
training and held-out body; the architecture and discount the sets' presets give, graph
and 0.99, unless flags after `--` say otherwise), one run per core as cores free up; a set
without a held-out set in `BODY_SETS` (smp-walker++: every walker file) gets no `--held-out`.
A run whose directory already holds its final evaluation is skipped. A finished run keeps
its summary.json (benchmarks/records.py: what the report reads, committed); its checkpoints
and events are dropped, its raw metrics stay out of git. The load average is sampled into
<results>/load.jsonl.

`report`: per set, a row per body: our final deterministic evaluation (eval.json's
"eval/team_return/<body>", 16 episodes of up to 1,000 steps; mean over seeds, min-max), its
forward velocity and episode length, "trained" or "zero-shot" (a held-out body: the current
parameters, its normalizer warmed up by the policy acting on it, no training on it), beside
the papers' figure for that set and body where one was found (PUBLISHED; "not found" says so
rather than a number), with both budgets (and ours as a share of each) and the differences
in task definition. `--summary`: one row per set, each body's figures averaged over the
seeds, then over the set's trained and its held-out bodies (lowest and highest beside).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import shutil
import subprocess
import sys
from pathlib import Path

from every_body import host_and_load, keep_records_only, shown  # beside this script
from pinned_runs import run_pinned
from records import RunRecord, is_finished, load_record
from tables import markdown_table

from modular_ppo.body.smp import BODY_SETS

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "smp"
HELD_OUT = ":held-out"
EVAL_ENVS = 16

BUDGETS = {
    "SMP": "TD3, `--max_timesteps` 20e6 env steps summed over the set's bodies "
           "(huangwl18/modular-rl src/arguments.py; src/main.py counts one per body's step)",
    "AMORPHEUS": "TD3, `--max_timesteps` 10e6 env steps summed over the set's bodies "
                 "(yobibyte/amorpheus modular-rl/src/arguments.py; its scripts keep the "
                 "default), 3 seeds (scripts/amorpheus/<set>_amorpheus.sh)",
}
"""The papers' training budgets, from their code's defaults."""
BUDGET_STEPS = {"SMP": 20_000_000, "AMORPHEUS": 10_000_000}
"""The same budgets as numbers: env steps summed over a set's bodies."""

PUBLISHED: dict[str, dict[str, str]] = {}
"""Set -> body -> the papers' published return for it ("SMP: 1,234 +- 56"). Empty: neither
figure was found in the sources searched (the repositories' READMEs and code, the papers'
pages: arXiv 2007.04976, OpenReview N3zUDGN5lO); a cell says "not found" rather than guess."""

TASK_DIFFERENCES = (
    "Task: the same XMLs, frame skip 4, reward (x after - x before) / dt + alive bonus 1 "
    "(not cheetahs) - w sum(a^2) (w 1e-3; cheetahs 0.1), each file's own height / pitch "
    "termination and reset noise, checked against SMP's step (docs/smp.md). Differences: the "
    "NerveNet ostrich's and cheetahs' extra termination on site heights is left out; our "
    "modules (the torso and one per actuated limb) observe the blocks of docs/observations.md "
    "under MuJoCo 3 / MJX, where SMP's limbs observe their body's position (x relative to the "
    "torso), linear (clipped to +-10) and angular velocity, orientation (exponential map), "
    "normalized joint angle and range (src/environments/ModularEnv.py, MuJoCo 2.0); PPO "
    "(on-policy, 64 envs) instead of TD3 with a replay buffer; our figure is the "
    "deterministic evaluation of 16 episodes at the end of training, where their code logs "
    "each training episode's return, exploration noise included (main.py: "
    "<env>_episode_reward).")


@dataclasses.dataclass(frozen=True)
class Job:
    set_name: str
    seed: int

    @property
    def held_out(self) -> str | None:
        """The set's held-out set, None where BODY_SETS has none."""
        name = self.set_name + HELD_OUT
        return name if name in BODY_SETS else None

    def root(self, results: Path) -> Path:
        return results / self.set_name

    def run_dir(self, results: Path) -> Path | None:
        """<root>/<body folder>/seed<S>, None before the run made it."""
        found = list(self.root(results).glob(f"*/seed{self.seed}"))
        return found[0] if found else None

    def flags(self, steps: int, evaluations: int = 4, extra: tuple[str, ...] = ()) -> list[str]:
        """Its `cli.py train` flags, less --runs-root and --run-name: `evaluations`
        evaluations, evenly spaced, the last at the end; then `extra` (flags after `--`)."""
        held_out = [] if self.held_out is None else ["--held-out", self.held_out]
        return ["--body", self.set_name, *held_out, "--seed", str(self.seed),
                "--ppo.total-steps", str(steps),
                "--eval-every-steps", str(max(steps // evaluations, 1)),
                "--eval.n-envs", str(EVAL_ENVS), "--no-video", *extra]


def run(jobs: list[Job], steps: int, evaluations: int, cores: list[int], nice: int,
        results: Path, extra: tuple[str, ...] = ()) -> None:
    pending = [job for job in jobs if not is_finished(job.run_dir(results))]
    print(f"{len(jobs) - len(pending)} of {len(jobs)} runs already done", flush=True)

    def ended(job: Job, returncode: int, busy: list[Job]) -> None:
        if returncode != 0:
            print(f"failed ({returncode}): {job.set_name} seed {job.seed}", flush=True)
        run_dir = job.run_dir(results)
        if run_dir is not None and is_finished(run_dir):
            keep_records_only(run_dir)

    run_pinned(pending, cores, results,
               start=lambda job, core: _start(job, job.flags(steps, evaluations, extra), core,
                                            nice, results),
               ended=ended)


def _start(job: Job, flags: list[str], core: int, nice: int,
           results: Path) -> subprocess.Popen:
    root = job.root(results)
    old = job.run_dir(results)
    if old is not None:  # an unfinished earlier attempt: start again
        shutil.rmtree(old)
    root.mkdir(parents=True, exist_ok=True)
    command = ["nice", "-n", str(nice), "taskset", "-c", str(core), sys.executable,
               str(ROOT / "cli.py"), "train", *flags, "--runs-root", str(root),
               "--run-name", f"seed{job.seed}"]
    print(" ".join(command), flush=True)
    log_path = root / f"seed{job.seed}.log"
    with open(log_path, "w") as log:  # the child keeps its own copy of the handle
        log.write(" ".join(command) + "\n")  # the run's summary takes its command from here
        log.flush()
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def _cell(values: list[float], digits: int = 0) -> str:
    """Mean over seeds, with the min-max where there are several."""
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:,.{digits}f}"
    dash = " to " if min(values) < 0 else "-"
    return f"{mean:,.{digits}f} ({min(values):,.{digits}f}{dash}{max(values):,.{digits}f})"


COLUMNS = ("set", "body", "ours", "seeds", "our budget (env steps, all bodies)",
           "our final return", "forward velocity (m/s)", "episode length",
           "papers' published return")


def _steps(records: list[RunRecord]) -> set[int]:
    """The runs' total env steps (--ppo.total-steps), each once."""
    return {record.config["config"]["ppo"]["total_steps"] for record in records}


def _budget(records: list[RunRecord]) -> str:
    """Our budget cell: the runs' total env steps in millions ("10M", "3M / 10M")."""
    return " / ".join(f"{total / 1e6:g}M" for total in sorted(_steps(records)))


def body_rows(set_name: str, records: list[RunRecord]) -> list[list[object]]:
    """The table rows of one set: a row per training body, then per held-out body, from the
    finished runs' final evaluations."""
    held_out = BODY_SETS.get(set_name + HELD_OUT, ())
    published = PUBLISHED.get(set_name, {})
    budget = _budget(records)
    rows = []
    for kind, bodies in (("trained", BODY_SETS[set_name]), ("zero-shot", held_out)):
        for body in bodies:
            finals = [record.final_eval for record in records]
            returns = [final[f"eval/team_return/{body}"] for final in finals]
            speeds = [final[f"eval/forward_velocity/{body}"] for final in finals]
            lengths = [final[f"eval/length/{body}"] for final in finals]
            rows.append([set_name, body.removeprefix("smp-"), kind, len(records), budget,
                         _cell(returns), _cell(speeds, 2), _cell(lengths),
                         published.get(body, "not found")])
    return rows


SUMMARY_COLUMNS = ("set", "bodies trained / held out", "seeds", "our budget",
                   "trained: final return, mean over bodies (lowest-highest body)",
                   "zero-shot: the same", "episode length, trained / zero-shot",
                   "papers' published return")


def summary_row(set_name: str, records: list[RunRecord]) -> list[object]:
    """One set in one row: each body's final return and episode length averaged over the
    seeds, then over the trained and over the held-out bodies (the lowest and highest body
    beside the mean)."""
    finals = [record.final_eval for record in records]

    def per_body(metric: str, bodies) -> list[float]:
        return [sum(final[f"eval/{metric}/{body}"] for final in finals) / len(finals)
                for body in bodies]

    held_out = BODY_SETS.get(set_name + HELD_OUT, ())
    trained = BODY_SETS[set_name]
    lengths = [per_body("length", bodies) for bodies in (trained, held_out)]
    return [set_name, f"{len(trained)} / {len(held_out)}", len(records), _budget(records),
            _cell(per_body("team_return", trained)),
            _cell(per_body("team_return", held_out)) if held_out else "-",
            " / ".join(f"{sum(v) / len(v):,.0f}" for v in lengths if v),
            "not found" if not PUBLISHED.get(set_name) else "per body: report"]


def extra_flags(record: RunRecord) -> str:
    """The flags `run` was given after `--` for this run (between --no-video and
    --runs-root in its command) less any --arch, "" for none or an unknown command."""
    words = (record.command or "").split()
    if "--no-video" not in words or "--runs-root" not in words:
        return ""
    extra = words[words.index("--no-video") + 1:words.index("--runs-root")]
    return " ".join(w for i, w in enumerate(extra)
                    if w != "--arch" and (i == 0 or extra[i - 1] != "--arch"))


def arch_flag(record: RunRecord) -> str:
    """`--arch NAME` of the architecture the run trained with (its config.json), "" where
    the record does not say."""
    arch = record.config.get("arch")
    return f"--arch {arch}" if arch else ""


def budget_note(steps: set[int]) -> str:
    """Our runs' budgets against the papers' (BUDGET_STEPS)."""
    parts = [f"{total / 1e6:g}M is " + ", ".join(
        f"{total / paper_steps:.2g}x {paper}'s" for paper, paper_steps in BUDGET_STEPS.items())
        for total in sorted(steps)]
    below = all(total < min(BUDGET_STEPS.values()) for total in steps)
    return ("Our budgets: " + "; ".join(parts) + "."
            + (" Ours is below both papers', so the comparison is not yet on equal terms."
               if below else ""))


def report(results: Path, summary: bool = False) -> str:
    """The Markdown table of every set with a finished run in `results`: a row per body, or
    with `summary` a row per set (`summary_row`)."""
    rows, steps, extras, archs = [], set(), set(), set()
    for set_dir in sorted(p for p in results.iterdir() if p.is_dir()) if results.is_dir() else []:
        runs = sorted(set_dir.glob("*/seed*"))
        records = [load_record(d) for d in runs if d.is_dir() and is_finished(d)]
        if records and set_dir.name in BODY_SETS:
            rows += ([summary_row(set_dir.name, records)] if summary
                     else body_rows(set_dir.name, records))
            steps |= _steps(records)
            extras |= {extra_flags(record) for record in records}
            archs |= {arch_flag(record) for record in records}
    budgets = "; ".join(f"{paper}: {text}" for paper, text in BUDGETS.items())
    flag = " --summary" if summary else ""
    return (f"### SMP / AMORPHEUS sets: report of {dt.date.today()} ({host_and_load(results)})"
            f"\n\n`python benchmarks/smp_table.py report --results {shown(results)}{flag}` "
            "(runs: `python benchmarks/smp_table.py run ...`, one core per run). Ours: `cli.py "
            "train --body SET --held-out SET:held-out"
            + "".join(f" {given}" for given in sorted(archs | extras) if given)
            + "`, PPO, the final "
            f"deterministic evaluation ({EVAL_ENVS} episodes of up to 1,000 steps); "
            "\"zero-shot\": a held-out body, never trained on. The papers' budgets: "
            + budgets + ". " + budget_note(steps) + "\n\n"
            + markdown_table(SUMMARY_COLUMNS if summary else COLUMNS, rows)
            + "\n\n" + TASK_DIFFERENCES + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--sets", nargs="+", required=True,
                            choices=[name for name in BODY_SETS if HELD_OUT not in name])
    run_parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    run_parser.add_argument("--steps", type=int, default=2_000_000,
                            help="--ppo.total-steps of every run (summed over the set's bodies)")
    run_parser.add_argument("--evaluations", type=int, default=4,
                            help="evaluations per run (every body each time; on a CPU "
                                 "those of a set of many bodies take a large share)")
    run_parser.add_argument("--cores", nargs="+", type=int, default=[0, 1])
    run_parser.add_argument("--nice", type=int, default=10, help="nice -n of every run")
    run_parser.add_argument("train_flags", nargs="*",
                            help="more cli.py train flags for every run, after -- (e.g. -- "
                                 "--ppo.gamma 0.97); keep each setting's runs in its own "
                                 "--results folder")
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--summary", action="store_true",
                               help="one row per set instead of one per body")
    for sub_parser in (run_parser, report_parser):
        sub_parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = args.results.resolve()
    if args.command == "run":
        jobs = [Job(name, seed) for name in args.sets for seed in args.seeds]
        run(jobs, args.steps, args.evaluations, args.cores, args.nice, results,
            tuple(args.train_flags))
    print(report(results, summary=getattr(args, "summary", False)))


if __name__ == "__main__":
    main()
