"""Run directories: `runs/<body>/<timestamp>/`, never shared between runs."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from modular_ppo.errors import ModularPPOError

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
EVAL_FILE = "eval.json"
FAILURE_FILE = "failure.json"
CHECKPOINT_DIR = "checkpoints"
VIDEO_DIR = "videos"
TENSORBOARD_DIR = "tensorboard"


class RunDirError(ModularPPOError):
    """A run directory that is missing, or would overwrite another run."""


def new_run_dir(root: Path, body_name: str, name: str | None = None) -> Path:
    """Create a fresh run dir; an existing one (of another run) is never reused."""
    safe_body = body_name.replace("/", "_").replace(".xml", "")
    base = Path(root) / safe_body
    stamp = name or dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for suffix in ["", *(f"-{i}" for i in range(1, 1000))]:
        path = base / f"{stamp}{suffix}"
        try:
            path.mkdir(parents=True, exist_ok=False)
            return path
        except FileExistsError:
            if name is not None:
                raise RunDirError(
                    f"{path}: a run directory of that name exists already; runs never "
                    "overwrite each other. Choose another --run-name, or --resume it."
                ) from None
    raise RunDirError(f"{base}: could not find a free run directory name.")


def existing_run_dir(path: Path) -> Path:
    path = Path(path)
    if not (path / CONFIG_FILE).is_file():
        hint = ""
        if path.parent.is_dir():
            runs = sorted(p.name for p in path.parent.iterdir() if (p / CONFIG_FILE).is_file())
            if runs:
                hint = f" Runs in {path.parent}: {', '.join(runs[-5:])}."
        raise RunDirError(
            f"{path}: not a run directory (no {CONFIG_FILE} there). Give the folder a "
            f"training run created, e.g. runs/ant-modular/<timestamp>.{hint}"
        )
    return path


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str))
    tmp.replace(path)


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """All rows of a run's metrics.jsonl (a torn last line from a kill is skipped)."""
    rows = []
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return rows
    for line in path.read_text().splitlines():
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return rows
