"""Per-module analysis of training runs: which module's critic lags?

Reads run dirs (metrics.jsonl, config.json) and gives, per module, critic loss, explained
variance, advantage std and return at the start, middle and end of training, as rows for a
table, and PNG plots of critic loss and explained variance over steps (several runs overlaid).
A multi-body run's modules are "<body>/<module>" (its metric names), and `body_table` gives
each body's team return and mean critic loss.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np

from modular_ppo.runs.run_dir import CONFIG_FILE, existing_run_dir, read_metrics
from modular_ppo.errors import AnalysisError

MODULE_METRICS = {
    "critic loss": "losses/critic/{}",
    "explained var": "critic/explained_variance/{}",
    "advantage std": "advantages/std/{}",
    "return": "episode/return/{}",
}
PHASES = ("start", "middle", "end")


@dataclasses.dataclass(frozen=True)
class RunCurves:
    """The per-module metric curves of one run."""

    run_dir: Path
    label: str
    modules: tuple[str, ...]
    bodies: tuple[str, ...]
    """The bodies of a multi-body run; empty for a single-body run."""
    steps: np.ndarray
    series: dict[str, np.ndarray]
    """metric key (e.g. "losses/critic/torso") -> values, NaN where a row lacks the key."""

    def curve(self, metric: str, module: str) -> np.ndarray:
        return self.series.get(MODULE_METRICS[metric].format(module), np.full(len(self.steps), np.nan))


def _modules_of(rows: list[dict], config: dict) -> tuple[str, ...]:
    modules = config.get("modules")
    if modules:
        return tuple(modules)
    prefix = "losses/critic/"
    seen: dict[str, None] = {}
    for row in rows:
        for key in row:
            if key.startswith(prefix):
                seen[key[len(prefix):]] = None
    return tuple(seen)


def load_run(run_dir: Path | str) -> RunCurves:
    run_dir = existing_run_dir(Path(run_dir))
    config = json.loads((run_dir / CONFIG_FILE).read_text())
    rows = [r for r in read_metrics(run_dir) if any(k.startswith("losses/") for k in r)]
    if not rows:
        raise AnalysisError(
            f"{run_dir}: metrics.jsonl holds no training iterations yet. Analyze the run "
            "after it has logged at least one iteration."
        )
    keys = sorted({k for r in rows for k in r if k != "step"})
    series = {
        k: np.array([_as_float(r.get(k)) for r in rows], dtype=np.float64) for k in keys
    }
    label = f"{config.get('body', '?')} / {config.get('arch', '?')} ({run_dir.name})"
    return RunCurves(
        run_dir=run_dir,
        label=label,
        modules=_modules_of(rows, config),
        bodies=tuple(config.get("bodies", ())),
        steps=_steps(rows, run_dir),
        series=series,
    )


def _steps(rows: list[dict], run_dir: Path) -> np.ndarray:
    """The rows' "step" values; AnalysisError for one that is not a whole number >= 0."""
    for row in rows:
        step = row.get("step")
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < 2**62:
            raise AnalysisError(
                f"{run_dir / 'metrics.jsonl'}: a training row has step {step!r}; each row's "
                '"step" is a whole number of env steps >= 0. Restore the file written by the '
                "training run, or delete that row."
            )
    return np.array([row["step"] for row in rows], dtype=np.int64)


def _as_float(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _phase_mean(values: np.ndarray, phase: str) -> float:
    """Mean over the first, middle or last tenth of the run (at least one row)."""
    n = len(values)
    width = max(1, n // 10)
    start = {"start": 0, "middle": max(0, n // 2 - width // 2), "end": n - width}[phase]
    window = values[start : start + width]
    finite = window[np.isfinite(window)]
    return float(finite.mean()) if finite.size else float("nan")


def module_table(run: RunCurves) -> list[dict[str, object]]:
    """One row per module: each metric at the start, middle and end of training."""
    rows = []
    for module in run.modules:
        row: dict[str, object] = {"module": module}
        for metric in MODULE_METRICS:
            values = run.curve(metric, module)
            for phase in PHASES:
                row[f"{metric} ({phase})"] = _phase_mean(values, phase)
        rows.append(row)
    return rows


def body_table(run: RunCurves) -> list[dict[str, object]]:
    """One row per body of a multi-body run: its training team return and its modules'
    mean critic loss at the start, middle and end of training."""
    rows = []
    for body in run.bodies:
        nan = np.full(len(run.steps), np.nan)
        returns = run.series.get(f"episode/team_return/{body}", nan)
        critic = [run.curve("critic loss", m) for m in run.modules if m.startswith(f"{body}/")]
        with np.errstate(invalid="ignore"):
            mean_critic = np.nanmean(np.stack(critic), axis=0) if critic else nan
        row: dict[str, object] = {"body": body}
        for metric, values in (("team return", returns), ("mean critic loss", mean_critic)):
            for phase in PHASES:
                row[f"{metric} ({phase})"] = _phase_mean(values, phase)
        rows.append(row)
    return rows


def lagging_module(run: RunCurves) -> str:
    """The module whose critic explains the least variance at the end of training."""
    end = {m: _phase_mean(run.curve("explained var", m), "end") for m in run.modules}
    finite = {m: v for m, v in end.items() if np.isfinite(v)}
    if not finite:
        raise AnalysisError(f"{run.run_dir}: no explained-variance values were logged.")
    return min(finite, key=finite.get)


def _finite(steps, values) -> tuple[np.ndarray, np.ndarray]:
    steps, values = np.asarray(steps, float), np.asarray(values, float)
    keep = np.isfinite(values)
    return steps[keep], values[keep]


def _moving_average(values: np.ndarray, points: int = 50) -> np.ndarray:
    """Mean over a centered window of about len/points iterations (edges: shorter windows),
    so a long run's trend shows through the per-iteration noise."""
    window = max(1, len(values) // points)
    if window == 1:
        return values
    kernel = np.ones(window)
    return np.convolve(values, kernel, "same") / np.convolve(np.ones(len(values)), kernel, "same")


def plot_runs(runs: list[RunCurves], path: Path | str) -> Path:
    """Critic loss and explained variance per module over steps, runs overlaid; a PNG.
    Each curve is drawn per iteration (faint) and as a moving average (solid)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modules = list(dict.fromkeys(m for r in runs for m in r.modules))
    fig, axes = plt.subplots(
        2, len(modules), figsize=(3.2 * len(modules), 6), squeeze=False, sharex="col"
    )
    styles = ["-", "--", ":", "-."]
    for col, module in enumerate(modules):
        for row, metric in enumerate(("critic loss", "explained var")):
            ax = axes[row, col]
            for i, run in enumerate(runs):
                if module in run.modules:
                    steps, values = _finite(run.steps, run.curve(metric, module))
                    line, = ax.plot(steps, values, styles[i % 4], alpha=0.25, linewidth=0.8)
                    ax.plot(steps, _moving_average(values), styles[i % 4], label=run.label,
                            color=line.get_color())
            ax.set_title(f"{module}: {metric}", fontsize=9)
            if metric == "critic loss":
                ax.set_yscale("log")
            ax.grid(alpha=0.3)
            if row == 1:
                ax.set_xlabel("env steps")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
