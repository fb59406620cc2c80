"""Issue 42, point 4: where a first run's compile time goes, and how it grows with a body's
module count.

    python benchmarks/compile_growth.py                                  # CPU backend, defaults
    python benchmarks/compile_growth.py --backend mjx --bodies ant-modular centipede-4
    python benchmarks/compile_growth.py --backend mjx --budget-s 180 --out $OUT/growth.json

For each body (in the order given; once --budget-s is spent, the bodies not yet begun are
skipped, the first always measured), in
this process with JAX's in-memory caches cleared before each program and no persistent
cache: the run built as `cli.py train` builds it (`build_s`: bodies, envs, networks and the
fresh training state, which compiles the network's initializers and the env reset), then
each program a run compiles before its first progress line and first evaluation, staged by
`jax.stages`: the env reset ("reset"), the training step ("train_step") and the evaluation
("evaluate"), or those named by --programs. Per program: wall seconds to trace, lower (jaxpr -> StableHLO) and compile
(XLA), the process CPU seconds of each, the traced equations (jaxpr, nested ones included;
also by the source file that traced them) and the StableHLO operations. With --concurrent the training step and the evaluation are
also compiled at once in two threads (what a run does, `runs.train_run`): `together_s`.
Writes JSON (--out, rewritten after each body) and prints a Markdown table; `--report
FILE...` prints the tables of results files written earlier, and for each file with two
bodies or more the training step's added equations per added module by source file
(where the growth with module count comes from).
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import jax
from jax._src import source_info_util  # the frame that traced an equation
from jax.extend import core as jex_core

from modular_ppo.networks import NetworkConfig
from modular_ppo.ppo import EvalConfig, default_ppo_config
from modular_ppo.ppo.evaluate import run_episodes
from modular_ppo.ppo.state import reset_envs
from modular_ppo.ppo.step import train_step
from modular_ppo.runs.build import build_run
from modular_ppo.runs.config import TrainRunConfig
from report import environment_facts  # beside this script
from tables import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("reset", "train_step", "evaluate")
BODIES = ("ant-modular", "centipede-4", "centipede-8", "centipede-16", "centipede-32")
_FUSION = re.compile(r"^\s*(?:ROOT )?%\S+ = .* fusion\(", re.MULTILINE)
_STABLEHLO_OP = re.compile(r"^\s*(?:%\S+(?:, %\S+)* = )?\"?(?:stablehlo|chlo|func|sdy)\.\w+",
                           re.MULTILINE)


def equations(jaxpr):
    """Every equation of a (closed) jaxpr, those of the jaxprs nested in its equations'
    parameters (scan and loop bodies, conditionals, custom derivatives) included."""
    for equation in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        yield equation
        for value in equation.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(inner, (jex_core.Jaxpr, jex_core.ClosedJaxpr)):
                    yield from equations(inner)


def count_equations(jaxpr) -> int:
    return sum(1 for _ in equations(jaxpr))


def equations_by_file(jaxpr) -> dict[str, int]:
    """Equations by the source file of the innermost frame outside JAX that traced them
    (this project's files from modular_ppo/, a package's from its name; "-" if none)."""
    counts: collections.Counter = collections.Counter()
    for equation in equations(jaxpr):
        frame = source_info_util.user_frame(equation.source_info.traceback)
        name = "-" if frame is None else frame.file_name
        for marker in ("/site-packages/", "/modular_ppo/"):
            name = name.split(marker)[-1]
        counts[name] += 1
    return dict(counts)


def count_stablehlo_ops(text: str) -> int:
    """Operations in a lowered program's StableHLO text, one per line that starts one."""
    return len(_STABLEHLO_OP.findall(text))


def _timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def count_fusions(text: str) -> int:
    """Fusions of an optimized (compiled) HLO program: XLA generates code for each."""
    return len(_FUSION.findall(text))


def stage(jitted, *args) -> dict:
    """Trace, lower and compile `jitted` on `args` one stage at a time: seconds (wall and
    process CPU), traced equations, StableHLO operations and compiled fusions."""
    traced, trace_s, trace_cpu = _timed(lambda: jitted.trace(*args))
    lowered, lower_s, lower_cpu = _timed(traced.lower)
    compiled, compile_s, compile_cpu = _timed(lowered.compile)
    return dict(trace_s=trace_s, lower_s=lower_s, compile_s=compile_s,
                trace_cpu_s=trace_cpu, lower_cpu_s=lower_cpu, compile_cpu_s=compile_cpu,
                equations=count_equations(traced.jaxpr),
                equations_by_file=equations_by_file(traced.jaxpr),
                stablehlo_ops=count_stablehlo_ops(lowered.as_text()),
                fusions=count_fusions(compiled.as_text() or ""))


def run_config(body: str, backend: str, arch: str, n_envs: int | None) -> TrainRunConfig:
    ppo = default_ppo_config()
    if n_envs is not None:
        ppo = dataclasses.replace(ppo, n_envs=n_envs)
    return TrainRunConfig(body=body, backend=backend, network=NetworkConfig(arch=arch), ppo=ppo)


def measure_body(config: TrainRunConfig, concurrent: bool,
                 only: tuple[str, ...] = PROGRAMS) -> dict:
    """One body's build and programs (those named in `only`), each compiled from cold
    in-memory caches."""
    jax.clear_caches()
    run, build_s, build_cpu = _timed(lambda: build_run(config))
    group, state = run.groups[0], run.state
    eval_config = EvalConfig()
    network_state = state.network_state(group.name)
    keys = jax.random.split(jax.random.key(0), config.ppo.n_envs)
    programs = {
        "reset": (reset_envs, group.env, keys),
        "train_step": (train_step, run.groups, config.ppo, state),
        "evaluate": (run_episodes, group.env, group.graphdef, eval_config, network_state,
                     jax.random.key(1)),
    }
    result = {"body": config.body, "modules": len(group.env.obs_sizes),
              "build_s": build_s, "build_cpu_s": build_cpu, "programs": {}}
    for name, (jitted, *args) in programs.items():
        if name not in only:
            continue
        jax.clear_caches()
        result["programs"][name] = stage(jitted, *args)
        print(f"  {config.body} {name}: {json.dumps(result['programs'][name])}", flush=True)
    if concurrent:
        jax.clear_caches()
        lowered = [jitted.lower(*args) for jitted, *args in
                   (programs["train_step"], programs["evaluate"])]
        with ThreadPoolExecutor(2) as pool:
            _, result["together_s"], result["together_cpu_s"] = _timed(
                lambda: list(pool.map(lambda program: program.compile(), lowered)))
    return result


def _rows(body: dict) -> list[list[object]]:
    rows = []
    for name, p in body["programs"].items():
        rows.append([body["body"], body["modules"], f"{body['build_s']:.1f}", name,
                     f"{p['trace_s']:.2f}", f"{p['lower_s']:.2f}",
                     f"{p['compile_s']:.1f} ({p['compile_cpu_s']:.1f})", p["equations"],
                     p["stablehlo_ops"], p["fusions"]])
    if "together_s" in body:
        rows.append([body["body"], body["modules"], "", "train_step + evaluate in 2 threads",
                     "", "", f"{body['together_s']:.1f} ({body['together_cpu_s']:.1f})",
                     "", "", ""])
    return rows


def markdown(results: dict) -> str:
    """The table of `results`, a row per body and program."""
    columns = ["body", "modules", "build s", "program", "trace s", "lower s",
               "compile s (CPU s)", "equations", "StableHLO ops", "fusions"]
    rows = [row for body in results["bodies"] for row in _rows(body)]
    return markdown_table(columns, rows, numeric=(1, 2, 4, 5, 6, 7, 8, 9))


def growth_by_file(results: dict, program: str = "train_step", top: int = 12) -> str:
    """Equations `program` adds per added module, by source file, from the first body to the
    last (bodies with `equations_by_file`); "" if fewer than two."""
    bodies = [b for b in results["bodies"] if "equations_by_file" in b["programs"].get(program, {})]
    if len(bodies) < 2 or bodies[-1]["modules"] == bodies[0]["modules"]:
        return ""
    first, last = (b["programs"][program]["equations_by_file"] for b in (bodies[0], bodies[-1]))
    added = bodies[-1]["modules"] - bodies[0]["modules"]
    growth = sorted((((last.get(f, 0) - first.get(f, 0)) / added, f) for f in {*first, *last}),
                    key=lambda row: (-row[0], row[1]))
    rows = [[f, f"{per:.0f}", first.get(f, 0), last.get(f, 0)] for per, f in growth[:top]]
    total = sum(last.values()) - sum(first.values())
    return (f"{program}: equations added per module, {bodies[0]['body']} -> "
            f"{bodies[-1]['body']} ({total / added:.0f} in all):\n\n" + markdown_table(
                ["source file", "per added module", bodies[0]["body"], bodies[-1]["body"]],
                rows, numeric=(1, 2, 3)))


def report(paths: list[Path]) -> str:
    """Each results file's table under a line naming its command, date, machine and load,
    then its growth by source file (`growth_by_file`) where it has one."""
    parts = []
    for path in paths:
        results = json.loads(path.read_text())
        facts = results["facts"]
        where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        parts.append(f"`{where}`: `{results['command']}` ({results['backend']} backend, "
                     f"{results['arch']} network, {results.get('n_envs')} envs), "
                     f"{facts['date']}, {facts['cpu']}, {facts['cores']} core(s), git "
                     f"{facts['git']}, load {facts['load_average'][0]:.1f}\n\n"
                     + markdown(results))
        growth = growth_by_file(results)
        if growth:
            parts.append(growth)
    return "\n\n".join(parts)


def _write(path: Path, results: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1) + "\n")


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, nargs="+",
                        help="print the tables of these results files instead of measuring")
    parser.add_argument("--bodies", nargs="+", default=list(BODIES))
    parser.add_argument("--backend", default="cpu", choices=("cpu", "mjx"))
    parser.add_argument("--arch", default="separate")
    parser.add_argument("--n-envs", type=int, default=None,
                        help="default: the CLI's (64 on CPU, 4096 on an accelerator)")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="start no body after the first once this many seconds have "
                        "passed")
    parser.add_argument("--programs", nargs="+", choices=PROGRAMS, default=list(PROGRAMS),
                        help="the programs to stage (default: all)")
    parser.add_argument("--concurrent", action="store_true",
                        help="also compile the training step and the evaluation in 2 threads")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks/results/compile_growth/results.json")
    args = parser.parse_args(argv)
    if args.report:
        print(report([path.resolve() for path in args.report]))
        return {}
    started = time.perf_counter()
    results = {"command": "python benchmarks/compile_growth.py " + " ".join(
        sys.argv[1:] if argv is None else argv), "facts": environment_facts(),
        "backend": args.backend, "arch": args.arch, "bodies": [], "skipped": []}
    for body in args.bodies:
        if (results["bodies"] and args.budget_s is not None
                and time.perf_counter() - started > args.budget_s):
            results["skipped"].append(body)
            continue
        config = run_config(body, args.backend, args.arch, args.n_envs)
        results["bodies"].append(measure_body(config, args.concurrent, tuple(args.programs)))
        results["n_envs"] = config.ppo.n_envs
        _write(args.out, results)  # after every body: a run stopped by a time limit keeps it
    _write(args.out, results)
    print(markdown(results))
    print(f"wrote {args.out}" + (f"; skipped (budget): {results['skipped']}"
                                 if results["skipped"] else ""))
    return results


if __name__ == "__main__":
    main()
