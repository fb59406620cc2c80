"""Run directories: `runs/<body>/<timestamp>/`, never shared between runs."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any

from modular_ppo.runs.atomic_write import write_atomically
from modular_ppo.runs.event_files import rewind_event_files
from modular_ppo.runs.errors import RunDirError

CONFIG_FILE = "config.json"
METRICS_FILE = "metrics.jsonl"
EVAL_FILE = "eval.json"
FAILURE_FILE = "failure.json"
CHECKPOINT_DIR = "checkpoints"
VIDEO_DIR = "videos"
TENSORBOARD_DIR = "tensorboard"
MAX_BODY_FOLDER = 200
"""The longest body folder name, in bytes (file systems refuse names over 255): a run on many
bodies ("+"-joined names, e.g. the 15 bodies of smp-cheetah++) gets a shortened one."""


def body_folder(body_name: str) -> str:
    """The folder of `body_name`'s runs: the name with "/" made "_" and ".xml" dropped; over
    MAX_BODY_FOLDER bytes, its leading "+"-joined bodies that fit, then "+<k>-more-<hash>"
    (k bodies left out, the first 8 hex digits of the whole name's SHA-1, so that sets sharing
    their leading bodies get folders of their own)."""
    safe = body_name.replace("/", "_").replace(".xml", "")
    if len(safe.encode()) <= MAX_BODY_FOLDER:
        return safe
    digest = hashlib.sha1(safe.encode()).hexdigest()[:8]
    bodies = safe.split("+")

    def shortened(kept: int) -> str:
        return "+".join([*bodies[:kept], f"{len(bodies) - kept}-more-{digest}"])

    fits = [k for k in range(len(bodies)) if len(shortened(k).encode()) <= MAX_BODY_FOLDER]
    return shortened(max(fits))  # 0 bodies kept always fits


def new_run_dir(root: Path, body_name: str, name: str | None = None) -> Path:
    """Create a fresh run dir; an existing one (of another run) is never reused."""
    base = Path(root) / body_folder(body_name)
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
        except OSError as e:
            raise RunDirError(
                f"{path}: cannot create the run directory ({e.strerror}). Give --runs-root "
                "a folder you can write to."
            ) from None
    raise RunDirError(f"{base}: runs {stamp} to {stamp}-999 all exist; give --run-name a new "
                      "name, or another --runs-root.")


def existing_run_dir(path: Path) -> Path:
    """`path` if it is a run directory with a readable config.json, else RunDirError."""
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
    read_run_record(path)
    return path


def read_run_record(run_dir: Path) -> dict[str, Any]:
    """The run's config.json (its config under "config", and what it was built into)."""
    path = Path(run_dir) / CONFIG_FILE
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RunDirError(
            f"{path}: unreadable ({e}). The run's settings are lost with it: restore the "
            "file from a backup, or start a new run."
        ) from None
    if not isinstance(record, dict) or not isinstance(record.get("config"), dict):
        raise RunDirError(
            f"{path}: holds no run config (no \"config\" object). Restore the file written "
            "by the training run, or start a new run."
        )
    return record


def write_json(path: Path, data: Any) -> None:
    write_atomically(path, json.dumps(data, indent=2, default=str))


def rewind_metrics(run_dir: Path, step: int) -> int:
    """Drop the rows of metrics.jsonl after `step` (written after the checkpoint a run
    resumes from; the resumed run writes them again), and a torn last line; the same for
    the TensorBoard events (`rewind_event_files`). Returns the number of rows dropped from
    metrics.jsonl."""
    rewind_event_files(Path(run_dir) / TENSORBOARD_DIR, step)
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return 0
    lines = path.read_text().splitlines()
    kept = [line for line, row in zip(lines, map(_parse_row, lines))
            if row is not None and row.get("step", 0) <= step]
    if len(kept) < len(lines):
        write_atomically(path, "".join(line + "\n" for line in kept))
    return len(lines) - len(kept)


def _parse_row(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    return row if isinstance(row, dict) else None


def read_metrics(run_dir: Path) -> list[dict[str, float]]:
    """All rows of a run's metrics.jsonl (a torn last line from a kill is skipped)."""
    path = Path(run_dir) / METRICS_FILE
    if not path.is_file():
        return []
    return [row for row in map(_parse_row, path.read_text().splitlines()) if row is not None]
