"""Transfer within a body family (issue 16): a shared policy trained on a family, zero-shot on
held-out members and fine-tuned on them, against a specialist trained on each held-out body.

    python benchmarks/transfer_table.py run --family centipede --arch shared graph attention \
        --morphology none policy_and_value --seeds 0 1 2 --cores 0 1
    python benchmarks/transfer_table.py report      # stdout; --write puts it in BENCHMARKS.md
    python benchmarks/transfer_table.py seeds       # each seed's zero-shot return by `eval`

For each family, seed and network setting (architecture x morphology features x module
identity, `--identity index none`: whether tokens carry the module's index one-hot):
- shared: `cli.py train --body TRAIN --held-out H1 H2 --arch A --morphology M
  --module-identity I --seed S --ppo.total-steps N`, evaluated every N/8 steps on its bodies
  and zero-shot on each held-out body (`--held-out`: the current parameters, the normalizer
  warmed up by the policy acting on the body, no training on it);
- zero-shot, both ways: for each held-out body H, `cli.py eval --run <the shared run> --body H
  --episodes 16 --new-body-statistics X` with X "warm-up" (the normalizer warmed up as above) and
  "trained-bodies" (its statistics pooled from the training bodies' modules that observe the
  same blocks), side by side on the same final checkpoint;
- fine-tuned: for each held-out body H, `cli.py train --body H --init-from <the shared run>
  --seed S --ppo.total-steps N` (with `run --init-optimizer source`, also `--init-optimizer
  source`: Adam's state from the shared run's checkpoint instead of a fresh one).
Both kinds get `--new-body-statistics warm-up` (the table's default, which its rows so far
were run with; the CLI's default is trained-bodies) or the value given to `run` (the
held-out figures' and the fine-tuned runs' starting normalizer statistics).
For each family, seed and held-out body, once:
- specialist: `cli.py train --body H --seed S --ppo.total-steps N` with the CLI's defaults for
  H (separate networks, the body's preset): what a user would train on H alone.
Every run also gets the family's own flags (FAMILIES) and `--eval.n-envs 16 --no-video`.

`run` starts each run pinned to one of --cores (`taskset`) as soon as a core is free and
the shared run it fine-tunes from has finished; a run whose directory already holds its
final evaluation (in its summary.json or eval.json) is skipped, so the table fills over
several sessions. Run
directories go under benchmarks/results/transfer/<family>/<kind>/<body>/seed<S> (kind:
family-<setting>, finetune-<setting> or specialist; setting: <arch>-<morphology>, with
"-noindex" for --identity none); a finished run writes its summary.json there
(benchmarks/records.py, what the reports read; the raw files stay out of git) and its
checkpoints are dropped, a shared run's once every fine-tuned run and zero-shot
evaluation of it in the grid has finished (runs left out by `--skip` included, so that a later
`run` without `--skip` can start them from its checkpoint).
The zero-shot evaluations write <family>/zeroshot-<setting>/<H>/seed<S>-<X>.json. The
load average is sampled every 30 s into <results>/load.jsonl.

`report` prints, per family and setting, for each held-out body (mean over the seeds whose
shared run and specialist have finished, min-max): the zero-shot team return at the end of
shared training as a fraction of the specialist's final return, beside the same fraction at
the shared run's first evaluation (after one iteration: what a network that has learned
nothing yet gets on the held-out body, mostly by standing), the two zero-shot evaluations'
deterministic team returns as the same fraction (over the seeds that have both), and, over
those of the seeds
whose fine-tuned run has finished too ("none finished" where none has), the env steps the
fine-tuned run took to first reach the specialist's final return as a fraction of N ("not
within N" where a seed's did not). Targets (issue 16): zero-shot >= 75% on centipede-8 and
>= 60% on the second family's held-out bodies; fine-tuning within 1/3 of the specialist's
steps.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import itertools
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import get_args

from every_body import host_and_load, keep_records_only, shown  # beside this script
from pinned_runs import run_pinned
from records import RunRecord, is_finished, load_record

from modular_ppo.networks.config import Architecture, ModuleIdentity, Morphology
from modular_ppo.runs.config import OptimizerSource, StatisticsSource

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "transfer"
ZERO_SHOT_STATISTICS: tuple[str, ...] = get_args(StatisticsSource)
"""`cli.py eval --new-body-statistics` of the zero-shot evaluations, in the report's order."""
ZERO_SHOT_EPISODES = 16
TABLES_SECTION = "## Transfer within a family"
"""BENCHMARKS.md's section that `report --write` keeps each results folder's report in."""


@dataclasses.dataclass(frozen=True)
class Family:
    train: str
    """--body of the shared run (a family range or comma-separated names)."""
    held_out: tuple[str, ...]
    flags: tuple[str, ...] = ()
    """Flags of every run of the family."""


FAMILIES = {
    # Centipedes have an even number of legs: centipede-3..7 is centipede-4 and centipede-6.
    "centipede": Family("centipede-3..7", ("centipede-8", "centipede-10")),
    # The walker with a foot or a whole leg removed; held out: a shin removed (between the
    # two) and the left leg removed (the mirror image of a training body: the walker's legs
    # are alike, the module order is not). Of the walker's limbs only the feet touch the
    # floor, so every variant keeps one. gamma 0.99 is the walker's preset (BENCHMARKS.md),
    # which a multi-body run does not take by itself.
    "walker2d": Family(
        "walker2d-modular,walker2d-modular-without-foot,walker2d-modular-without-foot_left,"
        "walker2d-modular-without-thigh",
        ("walker2d-modular-without-leg", "walker2d-modular-without-thigh_left"),
        ("--ppo.gamma", "0.99"),
    ),
}


@dataclasses.dataclass(eq=False)
class Job:
    kind: str
    """"family-<arch>-<morphology>" (trained on the family), "finetune-<arch>-<morphology>"
    or "specialist"."""
    body: str
    seed: int
    flags: list[str]
    source: Job | None = None
    """The shared run a fine-tuned run starts from, or a zero-shot evaluation evaluates."""
    statistics: str | None = None
    """A zero-shot evaluation's `cli.py eval --new-body-statistics`; None for training runs."""

    def root(self, results: Path, family: str) -> Path:
        """Its runs root: <results>/<family>/<kind>/<held-out body, or "train">."""
        return results / family / self.kind / ("train" if self.kind.startswith("family")
                                               else self.body)

    def output(self, results: Path, family: str) -> Path:
        """A zero-shot evaluation's JSON file (`cli.py eval --output`)."""
        return self.root(results, family) / f"seed{self.seed}-{self.statistics}.json"

    def run_dir(self, results: Path, family: str) -> Path | None:
        """The run directory (<root>/<body, or bodies joined by +>/seed<S>), None before
        the run made it."""
        found = list(self.root(results, family).glob(f"*/seed{self.seed}"))
        return found[0] if found else None

    def finished(self, results: Path, family: str) -> bool:
        if self.statistics is not None:
            return self.output(results, family).exists()
        return _finished(self.run_dir(results, family))


def setting_flags(arch: str, morphology: str, identity: str) -> tuple[str, list[str]]:
    """A network setting's name, "<arch>-<morphology>" ("-noindex" added where modules get
    no index one-hot), and its cli.py flags."""
    name = f"{arch}-{morphology}" + ("" if identity == "index" else "-noindex")
    return name, ["--arch", arch, "--morphology", morphology, "--module-identity", identity]


def jobs_for(family: str, archs: list[str], morphologies: list[str], identities: list[str],
             seeds: list[int], steps: int, new_body_statistics: str = "warm-up",
             init_optimizer: str = "fresh") -> list[Job]:
    spec = FAMILIES[family]
    common = ["--ppo.total-steps", str(steps), "--eval-every-steps", str(steps // 8),
              "--eval.n-envs", "16", "--no-video", *spec.flags]
    transfer = ["--new-body-statistics", new_body_statistics]
    optimizer = [] if init_optimizer == "fresh" else ["--init-optimizer", init_optimizer]
    jobs = []
    for seed in seeds:
        jobs += [Job("specialist", body, seed, common) for body in spec.held_out]
        for arch, morphology, identity in itertools.product(archs, morphologies, identities):
            setting, network = setting_flags(arch, morphology, identity)
            shared = Job(f"family-{setting}", spec.train, seed,
                         [*common, *network, "--held-out", *spec.held_out, *transfer])
            jobs.append(shared)
            jobs += [Job(f"zeroshot-{setting}", body, seed, [], source=shared,
                         statistics=statistics)
                     for body in spec.held_out for statistics in ZERO_SHOT_STATISTICS]
            jobs += [Job(f"finetune-{setting}", body, seed, [*common, *transfer, *optimizer],
                         source=shared)
                     for body in spec.held_out]
    return jobs


def run(family: str, jobs: list[Job], cores: list[int], results: Path,
        grid: list[Job]) -> None:
    """Run `jobs` (a subset of `grid`); a shared run's checkpoints are dropped once every
    run of `grid` that starts from it has finished."""
    pending = [job for job in jobs if not job.finished(results, family)]
    print(f"{len(jobs) - len(pending)} of {len(jobs)} runs already done", flush=True)

    def ready(job: Job, busy: list[Job]) -> bool | None:
        if job.source is None or job.source in busy:
            return job.source is None
        if not job.source.finished(results, family):
            return None  # it failed
        if not _has_checkpoint(job.source.run_dir(results, family)):
            what = (f"evaluate {job.body} zero-shot ({job.statistics})" if job.statistics
                    else f"fine-tune on {job.body}")
            print(f"cannot {what} from seed {job.seed} of {job.source.kind}: its checkpoints "
                  f"were dropped (delete its run directory to train it again)", flush=True)
            return None
        return True

    def ended(job: Job, returncode: int, busy: list[Job]) -> None:
        if returncode != 0:
            print(f"failed ({returncode}): {job.kind} {job.body} seed {job.seed}", flush=True)
        run_dir = job.run_dir(results, family)
        if run_dir is not None and job.statistics is None and not job.kind.startswith("family"):
            keep_records_only(run_dir)
        _drop_shared_checkpoints(grid, busy, family, results)

    run_pinned(pending, cores, results, start=lambda job, core: _start(job, family, core, results),
               ready=ready, ended=ended)


def _start(job: Job, family: str, core: int, results: Path) -> subprocess.Popen:
    if job.statistics is not None:
        output = job.output(results, family)
        output.parent.mkdir(parents=True, exist_ok=True)
        return _cli(core, ["eval", "--run", str(job.source.run_dir(results, family)),
                           "--body", job.body, "--episodes", str(ZERO_SHOT_EPISODES),
                           "--new-body-statistics", job.statistics, "--output", str(output)],
                    output.with_suffix(".log"))
    root = job.root(results, family)
    old = job.run_dir(results, family)
    if old is not None:  # an unfinished earlier attempt: start again
        shutil.rmtree(old)
    root.mkdir(parents=True, exist_ok=True)
    init = ([] if job.source is None
            else ["--init-from", str(job.source.run_dir(results, family))])
    return _cli(core, ["train", "--body", job.body, "--seed", str(job.seed), *job.flags, *init,
                       "--runs-root", str(root), "--run-name", f"seed{job.seed}"],
                root / f"seed{job.seed}.log")


def _cli(core: int, args: list[str], log_path: Path) -> subprocess.Popen:
    """`cli.py ARGS` pinned to `core`, its output into `log_path`; the command printed."""
    command = ["taskset", "-c", str(core), sys.executable, str(ROOT / "cli.py"), *args]
    print(" ".join(command), flush=True)
    with open(log_path, "w") as log:  # the child keeps its own copy of the handle
        log.write(" ".join(command) + "\n")  # a run's summary takes its command from here
        log.flush()
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)


def _has_checkpoint(run_dir: Path) -> bool:
    return (run_dir / "checkpoints").is_dir() and any((run_dir / "checkpoints").iterdir())


def _drop_shared_checkpoints(grid: list[Job], busy: list[Job], family: str,
                             results: Path) -> None:
    """A finished shared run writes its summary and drops its checkpoints, once every run
    of the grid that starts from its checkpoint has finished."""
    for job in grid:
        if (job.kind.startswith("family") and job.finished(results, family)
                and all(other.source is not job or (other not in busy
                                                    and other.finished(results, family))
                        for other in grid)):
            run_dir = job.run_dir(results, family)
            if (run_dir / "checkpoints").exists() or not (run_dir / "summary.json").exists():
                keep_records_only(run_dir)


def _finished(run_dir: Path | None) -> bool:
    return is_finished(run_dir)


def _evaluations(record: RunRecord) -> list[dict]:
    return [row for row in record.eval_rows
            if any(key.startswith("eval/team_return") for key in row)]


def _first_evaluation(record: RunRecord, key: str) -> float:
    return next(row[key] for row in _evaluations(record) if key in row)


def _summary(values: list[float | None], percent: bool) -> str:
    """Mean over seeds (min-max), as percentages or fractions; "not within N" if a seed's
    value is missing (its fine-tuned run never reached the specialist's return)."""
    if any(v is None for v in values):
        missed = sum(v is None for v in values)
        return f"not within N ({missed} of {len(values)} seeds)"
    shown = (lambda v: f"{v * 100:.0f}%") if percent else (lambda v: f"{v:.2f}")
    spread = f" ({shown(min(values))}-{shown(max(values))})" if len(values) > 1 else ""
    return shown(sum(values) / len(values)) + spread


def _untrained_cell(values: list[float | None]) -> str:
    """The first evaluation's share over the seeds whose metrics were kept (one family run,
    attention-none seed 0, was committed without its metrics)."""
    kept = [v for v in values if v is not None]
    if not kept:
        return "not recorded"
    cell = _summary(kept, True)
    return cell if len(kept) == len(values) else f"{cell} ({len(kept)} of {len(values)} seeds)"


def _zero_shot_return(path: Path) -> float:
    """The deterministic team return of a `cli.py eval --output` file (one body)."""
    (body,) = json.loads(path.read_text())["results"].values()
    return body["deterministic"]["episode/team_return"]


def _pair_cell(by_statistics: dict[str, list[float]], finals: list[float]) -> str:
    """"warm-up / trained-bodies" shares, over the seeds evaluated both ways."""
    evaluated = len(next(iter(by_statistics.values())))
    if not evaluated:
        return "not measured"
    cell = " / ".join(_summary(values, True) for values in by_statistics.values())
    return cell if evaluated == len(finals) else f"{cell} ({evaluated} of {len(finals)} seeds)"


def _settings(results: Path, family: str) -> list[str]:
    """The network settings with a shared run folder in `results` for `family`."""
    return sorted(p.name.removeprefix("family-") for p in (results / family).glob("family-*"))


def _seeds(results: Path, family: str) -> list[int]:
    """The seeds of any run of `family` in `results`."""
    return sorted({int(p.name.removeprefix("seed"))
                   for p in (results / family).glob("*/*/*/seed*")})


def _measured(results: Path) -> Iterator[tuple[str, Family, list[str], list[int]]]:
    """(family, its Family, its settings, its seeds) for each family with a shared run
    folder in `results`."""
    for family, spec in FAMILIES.items():
        settings = _settings(results, family)
        if settings:
            yield family, spec, settings, _seeds(results, family)


def _final_return(run_dir: Path, key: str = "eval/team_return") -> float:
    """A finished run's final team return (its final evaluation, eval.json), of the body
    `key` names for a run on several bodies."""
    return load_record(run_dir).final_eval[key]


def _share_of_steps_to_reach(tuned: Path, final: float) -> float | None:
    """The env steps of the finished run `tuned` at its first evaluation whose team return
    reaches `final`, as a share of its total steps; None if none does."""
    record = load_record(tuned)
    total = record.config["config"]["ppo"]["total_steps"]
    reached = [row["step"] for row in _evaluations(record)
               if row.get("eval/team_return", float("-inf")) >= final]
    return reached[0] / total if reached else None


def _row(results: Path, family: str, spec: Family, setting: str, body: str,
         seeds: list[int]) -> str | None:
    """The report's table row of one setting on one held-out body, over the seeds whose
    shared run and specialist finished; None when none did."""
    zero_shot, untrained, finetune, finals = [], [], [], []
    by_statistics = {statistics: [] for statistics in ZERO_SHOT_STATISTICS}
    for seed in seeds:
        trained, tuned, specialist = (
            Job(kind, name, seed, []).run_dir(results, family)
            for kind, name in ((f"family-{setting}", spec.train),
                               (f"finetune-{setting}", body), ("specialist", body)))
        if not all(_finished(d) for d in (trained, specialist)):
            continue
        final = _final_return(specialist)
        key = f"eval/team_return/{body}"
        zero_shot.append(_final_return(trained, key) / final)
        trained_record = load_record(trained)
        untrained.append(_first_evaluation(trained_record, key) / final
                         if trained_record.has_rows else None)
        finals.append(final)
        evaluated = [Job(f"zeroshot-{setting}", body, seed, [], statistics=x)
                     .output(results, family) for x in ZERO_SHOT_STATISTICS]
        if all(path.exists() for path in evaluated):
            for x, path in zip(ZERO_SHOT_STATISTICS, evaluated, strict=True):
                by_statistics[x].append(_zero_shot_return(path) / final)
        if _finished(tuned):
            finetune.append(_share_of_steps_to_reach(tuned, final))
    if not finals:
        return None
    tuned_cell = _summary(finetune, False) if finetune else "none finished"
    if finetune and len(finetune) < len(finals):
        tuned_cell += f" ({len(finetune)} of {len(finals)} seeds finished)"
    return (f"| {setting} | {body} | {len(finals)} | "
            f"{sum(finals) / len(finals):,.0f} | {_summary(zero_shot, True)} | "
            f"{_untrained_cell(untrained)} | {_pair_cell(by_statistics, finals)} | "
            f"{tuned_cell} |")


def report(results: Path, write: bool) -> str:
    """The transfer report: per family, a table row per setting and held-out body (`_row`);
    written into BENCHMARKS.md when `write`."""
    lines = []
    for family, spec, settings, seeds in _measured(results):
        lines += [f"\n#### {family}: train {spec.train}, held out {', '.join(spec.held_out)}\n",
                  ("| setting (arch-morphology[-noindex]) | held-out body | seeds | specialist's "
                   "final return | zero-shot / specialist | untrained (first evaluation) / "
                   "specialist | zero-shot by `eval` (warm-up / trained bodies' statistics) "
                   "/ specialist | fine-tuning steps to the specialist's final / N |"),
                  "|---|---|---|---|---|---|---|---|"]
        for setting in settings:
            for body in spec.held_out:
                row = _row(results, family, spec, setting, body, seeds)
                if row is not None:
                    lines.append(row)
    text = (f"\n### Transfer within a family: report of {dt.date.today()} "
            f"({host_and_load(results)})\n\n`python benchmarks/transfer_table.py report "
            f"--results {shown(results)}`\n" + "\n".join(lines) + "\n")
    if write:
        benchmarks = ROOT / "BENCHMARKS.md"
        benchmarks.write_text(with_report(benchmarks.read_text(), text, shown(results)))
    return text


def seeds_report(results: Path, statistics: str) -> str:
    """Per seed, each held-out body's specialist's final return and each setting's zero-shot
    return by `cli.py eval --new-body-statistics <statistics>` on the shared run's final
    checkpoint: "return (share of the same seed's specialist; forward velocity, episode
    length)"; then each setting's fine-tuning (`_fine_tuning_by_seed`)."""
    lines = []
    for family, spec, settings, seeds in _measured(results):
        lines += [f"\n#### {family}: zero-shot by `eval --new-body-statistics {statistics}`\n",
                  "| setting | held-out body | " + " | ".join(f"seed {s}" for s in seeds) + " |",
                  "|---|---|" + "---|" * len(seeds)]
        for body in spec.held_out:
            specialists = [Job("specialist", body, seed, []).run_dir(results, family)
                           for seed in seeds]
            finals = [_final_return(d) if _finished(d) else None for d in specialists]
            lines.append(f"| specialist | {body} | " + " | ".join(
                "not run" if final is None else f"{final:,.0f}" for final in finals) + " |")
            for setting in settings:
                cells = []
                for seed, final in zip(seeds, finals, strict=True):
                    shared = Job(f"family-{setting}", spec.train, seed, []).run_dir(results,
                                                                                    family)
                    path = Job(f"zeroshot-{setting}", body, seed, [],
                               statistics=statistics).output(results, family)
                    if not path.exists():
                        cells.append("no `eval` record" if _finished(shared) else "not run")
                        continue
                    (metrics,) = json.loads(path.read_text())["results"].values()
                    episode = metrics["deterministic"]
                    share = ("" if final is None
                             else f"{episode['episode/team_return'] / final * 100:.0f}%; ")
                    cells.append(f"{episode['episode/team_return']:,.0f} ({share}"
                                 f"{episode['episode/forward_velocity']:.2f} m/s, "
                                 f"{episode['episode/length']:.0f} steps)")
                lines.append(f"| {setting} | {body} | " + " | ".join(cells) + " |")
        lines += _fine_tuning_by_seed(results, family, settings, seeds)
    return (f"`python benchmarks/transfer_table.py seeds --results {shown(results)} "
            f"--statistics {statistics}`\n" + "\n".join(lines) + "\n")


def _fine_tuning_by_seed(results: Path, family: str, settings: list[str],
                        seeds: list[int]) -> list[str]:
    """The seeds table's rows of fine-tuning: per setting, held-out body and seed, the share
    of N at which the fine-tuned run first reaches the same seed's specialist's final return,
    and the fine-tuned run's final return."""
    lines = [f"\n#### {family}: fine-tuning from the shared run, steps to the specialist's "
             "final return / N (the fine-tuned run's final return)\n",
             "| setting | held-out body | " + " | ".join(f"seed {s}" for s in seeds) + " |",
             "|---|---|" + "---|" * len(seeds)]
    for setting in settings:
        for body in FAMILIES[family].held_out:
            cells = []
            for seed in seeds:
                tuned = Job(f"finetune-{setting}", body, seed, []).run_dir(results, family)
                specialist = Job("specialist", body, seed, []).run_dir(results, family)
                if not (_finished(tuned) and _finished(specialist)):
                    cells.append("not run")
                    continue
                share = _share_of_steps_to_reach(tuned, _final_return(specialist))
                reached = "not within N" if share is None else f"{share:.2f}"
                cells.append(f"{reached} ({_final_return(tuned):,.0f} at N)")
            lines.append(f"| {setting} | {body} | " + " | ".join(cells) + " |")
    return lines


def with_report(document: str, text: str, results: Path) -> str:
    """`document` (BENCHMARKS.md) with `text`, the report of `results`, in TABLES_SECTION:
    in place of that folder's earlier report there, else after the section's last report
    (the section is added at the end when missing). Each report lies between markers that
    name its results folder."""
    begin = f"<!-- report --results {results} -->"
    end = f"<!-- end of report --results {results} -->\n"
    block = f"{begin}{text}{end}"
    if begin in document:
        head, rest = document.split(begin, 1)
        return head + block + rest.split(end, 1)[1]
    if TABLES_SECTION not in document:
        return f"{document.rstrip()}\n\n{TABLES_SECTION}\n\n{block}"
    head, rest = document.split(TABLES_SECTION, 1)
    section, next_heading, tail = rest.partition("\n## ")
    return f"{head}{TABLES_SECTION}{section.rstrip()}\n\n{block}{next_heading}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--family", choices=list(FAMILIES), required=True)
    run_parser.add_argument("--arch", nargs="+", default=["shared"],
                            choices=[a for a in get_args(Architecture) if a != "separate"])
    run_parser.add_argument("--morphology", nargs="+", default=["none"],
                            choices=list(get_args(Morphology)))
    run_parser.add_argument("--identity", nargs="+", default=["index"],
                            choices=list(get_args(ModuleIdentity)),
                            help="--module-identity of the shared runs (none: no index one-hot; "
                                 "the setting's name gets -noindex)")
    run_parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    run_parser.add_argument("--steps", type=int, default=2_000_000,
                            help="env steps of every run (N)")
    run_parser.add_argument("--cores", nargs="+", type=int, default=[0, 1])
    run_parser.add_argument("--new-body-statistics", default="warm-up",
                            choices=list(get_args(StatisticsSource)),
                            help="cli.py train --new-body-statistics of the shared runs (their "
                                 "--held-out figures) and the fine-tuned runs (default: the "
                                 "warm-up, as the table's rows so far)")
    run_parser.add_argument("--init-optimizer", default="fresh",
                            choices=list(get_args(OptimizerSource)),
                            help="cli.py train --init-optimizer of the fine-tuned runs: a "
                                 "fresh Adam state (the CLI's default) or the shared run's")
    run_parser.add_argument("--skip", nargs="+", default=[], choices=["specialist", "finetune"],
                            help="schedule no runs of these kinds (e.g. to compare zero-shot "
                                 "only, with the specialists' records from another --results)")
    report_parser = sub.add_parser("report")
    report_parser.add_argument("--write", action="store_true",
                               help="put the report in BENCHMARKS.md's section "
                                    "'the tables now', in place of the folder's earlier one")
    seeds_parser = sub.add_parser("seeds", help="each seed's zero-shot return by `eval`")
    seeds_parser.add_argument("--statistics", default="trained-bodies",
                              choices=ZERO_SHOT_STATISTICS)
    for sub_parser in (run_parser, report_parser, seeds_parser):
        sub_parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = args.results.resolve()
    if args.command == "seeds":
        print(seeds_report(results, args.statistics))
        return
    if args.command == "run":
        grid = jobs_for(args.family, args.arch, args.morphology, args.identity, args.seeds,
                        args.steps, args.new_body_statistics, args.init_optimizer)
        jobs = [job for job in grid if job.kind.split("-")[0] not in args.skip]
        run(args.family, jobs, args.cores, results, grid)
    print(report(results, write=args.command == "report" and args.write))


if __name__ == "__main__":
    main()
