"""Metrics to `metrics.jsonl` (one line per iteration) and TensorBoard event files."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from modular_ppo.runs.event_files import event_files
from modular_ppo.runs.run_dir import METRICS_FILE, TENSORBOARD_DIR


def to_floats(metrics: dict[str, Any]) -> dict[str, float]:
    """Scalars of a metrics dict as Python floats (device arrays are fetched once)."""
    out = {}
    for key, value in metrics.items():
        array = np.asarray(value)
        if array.size == 1:
            out[key] = float(array.reshape(()))
    return out


class MetricsLog:
    """Appends to a run's metrics.jsonl and TensorBoard events; with `enabled` False
    (processes other than 0 of a run of several) it writes nothing."""

    def __init__(self, run_dir: Path, tensorboard: bool = True, enabled: bool = True):
        self.enabled = enabled
        self._file = open(Path(run_dir) / METRICS_FILE, "a", buffering=1) if enabled else None
        self._writer = None
        if tensorboard and enabled:
            from tensorboardX import SummaryWriter

            directory = Path(run_dir) / TENSORBOARD_DIR
            # tensorboardX names a file by the second it was opened; a suffix counting the
            # files already there keeps a resumed run's file from overwriting an earlier
            # one and sorts it after them.
            suffix = f".{len(event_files(directory))}"
            self._writer = SummaryWriter(str(directory), filename_suffix=suffix)

    def write(self, step: int, metrics: dict[str, float]) -> None:
        if self._file is None:
            return
        row = {"step": int(step),
               **{k: (v if math.isfinite(v) else str(v)) for k, v in metrics.items()}}
        self._file.write(json.dumps(row) + "\n")
        if self._writer is not None:
            for key, value in metrics.items():
                if math.isfinite(value):
                    self._writer.add_scalar(key, value, step)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._writer is not None:
            self._writer.close()
