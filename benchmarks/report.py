"""The Markdown section a throughput run appends to BENCHMARKS.md: facts, table, targets."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
from pathlib import Path

from modular_ppo.runs.versions import CODE_DIRS, git_state
from tables import markdown_table

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("jax", "jaxlib", "flax", "optax", "mujoco", "mujoco-mjx", "brax", "numpy")

DESCRIPTIONS = {
    "mujoco-batch": "MuJoCo C simulator from numpy (mujoco.batch), closed loop, {0} controls",
    "mjx-step": "vmap(mjx.step) x 5, random ctrl",
    "env-step": "our env, {0} backend, random actions",
    "train": "ppo.train_step, {0} backend, {1} shape",
    "brax-ppo": "Brax PPO (its MJX ant task) on bodies/ant-modular.xml",
}


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def _git_revision() -> str:
    """The commit the benchmarked code is at, as config.json records a run's."""
    state = git_state(*CODE_DIRS)
    if state["commit"] is None:
        return "unknown (not a git checkout)"
    return state["commit"][:7] + (" (with uncommitted changes to the code)"
                                  if state["modified"] else "")


def environment_facts() -> dict:
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu_model(),
        "cores": len(os.sched_getaffinity(0)),
        "memory_gib": round(_memory_gib(), 1),
        "python": platform.python_version(),
        "versions": {p: _version(p) for p in PACKAGES},
        "git": _git_revision(),
        "load_average": os.getloadavg(),
    }


def _describe(case: str) -> str:
    kind, *args = case.split("/")
    if kind == "mujoco-batch":  # mujoco-batch/<n_envs>[/<controls>]
        args = [args[1] if len(args) > 1 else "random"]
    return DESCRIPTIONS.get(kind, kind).format(*args)


def _table(results: list[dict]) -> list[str]:
    columns = ["case", "what", "envs", "env steps/s", "env steps per CPU-s", "compile s",
               "first iteration s", "peak RSS GiB", "load (1 min) before / after"]
    return markdown_table(columns, list(map(_row, results)), numeric=range(2, 8)).splitlines()


def _row(r: dict) -> list[object]:
    case = [r["case"], _describe(r["case"])]
    if "error" in r:
        return [*case, "", f"failed: {r['error']}", "", "", "", "", ""]
    return [*case, r["n_envs"], f"{r['steps_per_s']:,.0f}", _figure(r["steps_per_cpu_s"]),
            f"{r['compile_s']:.1f}", f"{r['first_iteration_s']:.1f}", f"{r['peak_rss_gib']:.2f}",
            f"{r['load_before']:.1f} / {r['load_after']:.1f}"]


def _figure(value: float | None) -> str:
    """A rate for a table; blank where it could not be measured (None)."""
    return "" if value is None else f"{value:,.0f}"


def _profile(results: list[dict]) -> list[str]:
    columns = ["case", "iteration s", "rollout s (env + policy)", "raw stepping s (same steps)",
               "update s (iteration - rollout)", "training / raw", "compile s (CPU-s)"]
    rows = [[r["case"], f"{r['call_s']:.2f}", f"{r['rollout_s']:.2f}", f"{r['raw_s']:.2f}",
             f"{r['call_s'] - r['rollout_s']:.2f}",
             f"{r['steps_per_s'] / r['raw_steps_per_s']:.2f}",
             f"{r['compile_s']:.1f} ({r['compile_cpu_s']:.1f})"]
            for r in results if "raw_s" in r]
    return markdown_table(columns, rows, numeric=range(1, 7)).splitlines()


def _cpu_profile(results: list[dict]) -> list[str]:
    """The same split in CPU seconds of the process (all threads), where the cases have it."""
    columns = ["case", "iteration CPU-s", "rollout CPU-s", "raw stepping CPU-s",
               "update CPU-s (iteration - rollout)"]
    rows = [[r["case"], f"{r['call_cpu_s']:.3f}", f"{r['rollout_cpu_s']:.3f}",
             f"{r['raw_cpu_s']:.3f}", f"{r['call_cpu_s'] - r['rollout_cpu_s']:.3f}"]
            for r in results if "rollout_cpu_s" in r]
    if not rows:
        return []
    return ["", "The same in CPU seconds of the process (all threads; fastest call of each):",
            "", *markdown_table(columns, rows, numeric=range(1, 5)).splitlines()]


def _ratio(results: dict[str, dict], top: str, bottom: str, key: str = "steps_per_s"):
    if top in results and bottom in results:
        return results[top][key] / results[bottom][key]
    return None


def _verdict(value: float | None, target: float, at_least: bool = True) -> str:
    if value is None:
        return "not measured in this run"
    met = value >= target if at_least else value <= target
    return "**met**" if met else "**missed**"


def _targets(results: dict[str, dict]) -> list[str]:
    """The report's lines on each throughput, compile and memory target, with its verdict."""
    lines = []
    brax = _ratio(results, "train/cpu/brax", "brax-ppo/brax")
    brax_cpu = _ratio(results, "train/cpu/brax", "brax-ppo/brax", "steps_per_cpu_s")
    if brax is not None:
        lines.append(
            f"- Training env-steps/s, CPU backend, Brax's batch shape / Brax PPO "
            f"= **{brax:.2f}x** (target >= 2x): {_verdict(brax, 2.0)}; per CPU-second "
            f"{brax_cpu:.2f}x."
        )
    for shape in ("brax", "default"):
        r = results.get(f"train/cpu/{shape}")
        if r:
            raw = r["steps_per_s"] / r["raw_steps_per_s"]
            lines.append(
                f"- Training / raw stepping of the same env and batch, CPU backend, "
                f"{r['n_envs']} envs ({shape} shape) = **{raw:.2f}** "
                f"(target >= 0.6): {_verdict(raw, 0.6)}; per CPU-second "
                f"{r['steps_per_cpu_s'] / r['raw_steps_per_cpu_s']:.2f}."
            )
    native = results.get("mujoco-batch/64/policy")
    r = results.get("train/cpu/default")
    if native and r:
        wall, cpu = r["steps_per_s"] / native["steps_per_s"], (
            r["steps_per_cpu_s"] / native["steps_per_cpu_s"])
        lines.append(
            f"- Training env-steps/s at the CLI's CPU default (64 envs) / MuJoCo's rollout "
            f"with a JAX policy in the loop (mujoco-batch/64/policy) = **{wall:.2f}** "
            f"(target >= 0.8): {_verdict(wall, 0.8)}; per CPU-second {cpu:.2f} (no overlap "
            "of simulator and network raises env steps per CPU-second, so this bounds what "
            "overlap can reach where the rollout with policy keeps every core busy)."
        )
    return lines + _cost_targets(results)


def _cost_targets(results: dict[str, dict]) -> list[str]:
    """The report's lines on the targets for compile time and peak memory (CPU backend)."""
    lines = []
    for shape in ("default", "brax"):
        r = results.get(f"train/cpu/{shape}")
        if r and "error" not in r:
            lines.append(
                f"- Compile of the training step, CPU backend, {shape} shape: "
                f"**{r['compile_s']:.1f} s** (target <= 30 s): "
                f"{_verdict(r['compile_s'], 30.0, at_least=False)} ({r['compile_cpu_s']:.1f} "
                "CPU-s: XLA compiles on one thread, so about the wall time on an idle "
                f"machine); from building the env to the end of the first iteration "
                f"{r['first_iteration_s']:.1f} s."
            )
    r = results.get("train/cpu/brax")
    if r and "error" not in r:
        lines.append(
            f"- Peak RSS at 2048 envs (Brax's shape, CPU backend): "
            f"**{r['peak_rss_gib']:.2f} GiB** (target <= 4 GiB): "
            f"{_verdict(r['peak_rss_gib'], 4.0, at_least=False)}."
        )
    return lines


def _other_ratios(results: dict[str, dict]) -> list[str]:
    pairs = [
        *((f"env-step/cpu/{n}", f"env-step/mjx/{n}",
           f"CPU backend / MJX backend, env stepping, {n} envs") for n in (2048, 64)),
        *((f"env-step/cpu/{n}", f"mujoco-batch/{n}", f"our CPU env / bare C simulator, {n} envs")
          for n in (2048, 64)),
        ("env-step/mjx/2048", "mjx-step/2048", "our MJX env / bare vmap(mjx.step), 2048 envs"),
        *((f"train/cpu/default/{arch}", "train/cpu/default",
           f"training, {arch} / separate networks, default shape (target >= 0.5: within 2x)")
          for arch in ("shared", "graph", "attention")),
    ]
    lines = []
    for top, bottom, label in pairs:
        value = _ratio(results, top, bottom)
        if value is not None:
            lines.append(f"- {label}: {value:.2f}")
    return lines


def markdown_section(command: str, facts: dict, results: list[dict]) -> str:
    ok = {r["case"]: r for r in results if "error" not in r}
    versions = ", ".join(f"{k} {v}" for k, v in facts["versions"].items())
    backends = sorted({r["jax_backend"] for r in ok.values() if "jax_backend" in r})
    lines = [
        f"## Run of {facts['date']}",
        "",
        f"- Command: `{command}`",
        f"- Hardware: {facts['cpu']}, {facts['cores']} cores available, "
        f"{facts['memory_gib']} GiB memory; JAX backend of the cases: "
        f"{', '.join(backends) or 'none'}.",
        f"- Versions: Python {facts['python']}, {versions}; git {facts['git']}.",
        f"- Load: 1/5/15-min load average at the start "
        f"{' / '.join(f'{x:.1f}' for x in facts['load_average'])}; per case below. A load "
        f"above {facts['cores']} means other processes were competing for these cores: "
        "absolute figures are then low and noisy; compare the ratios of cases run next to "
        "each other.",
        "",
        *_table(results),
        "",
        "Training cases time, in turn in one process, the iteration, its rollout alone and "
        "raw stepping of the same env and batch (random actions, as many steps):",
        "",
        *_profile([r for r in results if "error" not in r]),
        *_cpu_profile([r for r in results if "error" not in r]),
        "",
        "### Targets (ant-modular, this CPU)",
        "",
        *_targets(ok),
        "",
        "### Other ratios",
        "",
        *_other_ratios(ok),
        "",
    ]
    return "\n".join(lines)
