"""A finished benchmark run directory as one small summary.json, and the records a report
reads from it (or from a run still in progress).

    python benchmarks/records.py benchmarks/results     # every run dir under it (has config.json)
    python benchmarks/records.py RUN_DIR ...            # these run dirs

A run dir (what `cli.py train` writes) holds config.json, metrics.jsonl (one row per
iteration, per-module keys), eval.json (the final evaluation), checkpoints and events: far too
much to keep in the repository. Its summary.json keeps what the reports read:
- "command": the `cli.py train` line that started it, where a log beside it printed it;
- "config": config.json as the run wrote it (its "versions": Python, JAX, devices);
- "load_1min": [min, max] of the 1-min load sampled in the results folder during its runs;
- "final_eval": eval.json (None when the run did not finish);
- "compile_s": the first row's time/compile_s (tracing and compiling the training step);
- "last_row": the last metrics row's whole-run figures (keys with at most one "/": step, wall
  time, episode return, throughput, compile time, ...), and "n_rows", the number of rows;
- "eval_rows": every row with an evaluation, its step, wall time and eval/* figures (per-module
  returns left out, per-body returns of a multi-body run kept), at full precision;
- "training": the training curve, at most MAX_TRAINING_ROWS rows evenly spread over the run
  (first and last kept), as columns (TRAINING_KEYS, None where a row lacks one), 5 digits.
A results folder's load.jsonl becomes load.json: the range and time span of its samples.
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import re
from pathlib import Path

SUMMARY = "summary.json"
LOAD = "load.json"
MAX_TRAINING_ROWS = 100
TRAINING_KEYS = ("step", "time/elapsed_s", "episode/team_return", "episode/forward_velocity",
                 "episode/length", "throughput/env_steps_per_s")
"""The training curve's columns: enough to draw return and speed against steps and wall time."""
EVAL_PER_MODULE = re.compile(r"^eval/return/")
"""Per-module evaluation returns, which no report reads (the team return sums them)."""
LOG_SUFFIXES = (".log", ".txt")


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """What the reports read of one run, from its summary.json or its raw files."""

    config: dict
    """config.json as the run wrote it ({} where missing)."""
    final_eval: dict | None
    """eval.json: the final evaluation; None while the run has not finished."""
    eval_rows: list[dict]
    """The metrics rows with an evaluation, in order."""
    last_row: dict
    """The last metrics row ({} before the first)."""
    training: list[dict]
    """Training rows: subsampled in a summary, every row of a run in progress."""
    command: str | None = None

    @property
    def finished(self) -> bool:
        return self.final_eval is not None

    @property
    def has_rows(self) -> bool:
        return bool(self.last_row)


def has_record(run_dir: Path | None) -> bool:
    """Whether `run_dir` holds a run a report can read: a summary or a config.json."""
    return run_dir is not None and ((run_dir / SUMMARY).exists()
                                    or (run_dir / "config.json").exists())


def is_finished(run_dir: Path | None) -> bool:
    """Whether the run has its final evaluation (in its summary, or eval.json), without
    reading the metrics of a run in progress."""
    if run_dir is None:
        return False
    if (run_dir / SUMMARY).exists():
        return json.loads((run_dir / SUMMARY).read_text())["final_eval"] is not None
    return (run_dir / "eval.json").exists()


def load_record(run_dir: Path) -> RunRecord:
    """The run's record: its summary.json where there is one, else its raw files (a run in
    progress: config.json, metrics.jsonl, eval.json once it has finished)."""
    summary_path = run_dir / SUMMARY
    if summary_path.exists():
        return record_of_summary(json.loads(summary_path.read_text()))
    rows = raw_rows(run_dir, allow_gzip=False)
    return RunRecord(config=_json_or(run_dir / "config.json", {}),
                     final_eval=_json_or(run_dir / "eval.json", None),
                     eval_rows=[r for r in rows if _is_eval(r)],
                     last_row=rows[-1] if rows else {}, training=rows)


def record_of_summary(summary: dict) -> RunRecord:
    columns = summary["training"]
    training = [{key: values[i] for key, values in columns.items() if values[i] is not None}
                for i in range(len(columns.get("step", [])))]
    return RunRecord(config=summary["config"], final_eval=summary["final_eval"],
                     eval_rows=summary["eval_rows"], last_row=summary["last_row"],
                     training=training, command=summary.get("command"))


def summarize(run_dir: Path, command: str | None = None) -> dict:
    """The summary of `run_dir` (see the module's docstring); `command`, when given, is the
    line that started it, else the one found in a log beside it."""
    rows = raw_rows(run_dir, allow_gzip=True)
    return {
        "command": command or logged_command(run_dir),
        "config": _json_or(run_dir / "config.json", {}),
        "load_1min": folder_load(run_dir),
        "final_eval": _json_or(run_dir / "eval.json", None),
        "n_rows": len(rows),
        "compile_s": rows[0].get("time/compile_s") if rows else None,
        "last_row": {k: v for k, v in rows[-1].items() if k.count("/") <= 1} if rows else {},
        "eval_rows": [{k: v for k, v in r.items() if k in ("step", "time/elapsed_s")
                       or (k.startswith("eval/") and not EVAL_PER_MODULE.match(k))}
                      for r in rows if _is_eval(r)],
        "training": training_columns(rows),
    }


def write_summary(run_dir: Path, command: str | None = None) -> Path:
    """Write `run_dir`/summary.json (compact: one line per field) and return its path."""
    summary = summarize(run_dir, command)
    text = "{\n" + ",\n".join(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}"
                              for key, value in summary.items()) + "\n}\n"
    path = run_dir / SUMMARY
    path.write_text(text)
    return path


def subsample(n: int, most: int = MAX_TRAINING_ROWS) -> list[int]:
    """At most `most` row indices out of `n`, evenly spread, the first and the last kept."""
    if n <= most:
        return list(range(n))
    return sorted({round(i * (n - 1) / (most - 1)) for i in range(most)})


def training_columns(rows: list[dict]) -> dict[str, list]:
    """The subsampled training rows as TRAINING_KEYS columns, floats to 5 significant digits."""
    kept = [rows[i] for i in subsample(len(rows))]
    return {key: [_rounded(r.get(key)) for r in kept] for key in TRAINING_KEYS}


def raw_rows(run_dir: Path, allow_gzip: bool) -> list[dict]:
    """The rows of metrics.jsonl; with `allow_gzip`, of metrics.jsonl.gz where there is no
    plain file (how older committed runs kept it; only the conversion reads those)."""
    plain, packed = run_dir / "metrics.jsonl", run_dir / "metrics.jsonl.gz"
    if plain.exists():
        text = plain.read_text()
    elif allow_gzip and packed.exists():
        text = gzip.decompress(packed.read_bytes()).decode()
    else:
        return []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def logged_command(run_dir: Path) -> str | None:
    """The `cli.py train` line naming this run (its runs root and run name) in a log of its
    own folder or a folder above it inside the results (as every_body.py's runners print)."""
    name, runs_root = run_dir.name, run_dir.parent.parent
    wanted = (f"--run-name {name}", "cli.py train")
    for folder in [run_dir, *run_dir.parents][:5]:
        for log in sorted(p for p in folder.iterdir() if p.suffix in LOG_SUFFIXES):
            for line in log.read_text(errors="replace").splitlines():
                if all(w in line for w in wanted) and _names_root(line, runs_root):
                    return line.strip()
    return None


def _names_root(line: str, runs_root: Path) -> bool:
    """Whether the line's --runs-root ends in the same last two folders as `runs_root` (logs
    name the machine's checkout, which differs from this one)."""
    found = re.search(r"--runs-root (\S+)", line)
    return found is not None and Path(found.group(1)).parts[-2:] == runs_root.parts[-2:]


def folder_load(run_dir: Path) -> list[float] | None:
    """[min, max] 1-min load of the nearest results folder above `run_dir` that sampled it."""
    for folder in list(run_dir.parents)[:6]:
        summary = load_summary(folder)
        if summary is not None:
            return [summary["min"], summary["max"]]
    return None


def load_summary(folder: Path) -> dict | None:
    """The folder's load samples: from load.json, else summarized from load.jsonl."""
    if (folder / LOAD).exists():
        return json.loads((folder / LOAD).read_text())
    raw = folder / "load.jsonl"
    if not raw.exists():
        return None
    samples = [json.loads(line) for line in raw.read_text().splitlines() if line.strip()]
    if not samples:
        return None
    # Older samplers wrote {"t": "HH:MM:SS", "loadavg": "1min 5min 15min"}.
    loads = [s["load1"] if "load1" in s else float(s["loadavg"].split()[0]) for s in samples]
    times = [s.get("time", s.get("t")) for s in (samples[0], samples[-1])]
    return {"samples": len(samples), "min": min(loads), "max": max(loads),
            "first_time": times[0], "last_time": times[1]}


def write_load_summary(folder: Path) -> Path | None:
    """Write <folder>/load.json from its load.jsonl; None when it has no samples."""
    summary = load_summary(folder)
    if summary is None:
        return None
    (folder / LOAD).write_text(json.dumps(summary) + "\n")
    return folder / LOAD


def run_dirs(root: Path) -> list[Path]:
    """Every run dir under `root` (a folder with a config.json), symlinks not followed."""
    return sorted(p.parent for p in root.rglob("config.json")
                  if not any(q.is_symlink() for q in [p, *p.parents] if root in q.parents))


def _is_eval(row: dict) -> bool:
    return any(key.startswith("eval/") for key in row)


def _rounded(value):
    return float(f"{value:.5g}") if isinstance(value, float) else value


def _json_or(path: Path, default):
    return json.loads(path.read_text()) if path.exists() else default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path,
                        help="run dirs, or folders whose run dirs (and load.jsonl) to summarize")
    args = parser.parse_args()
    for path in args.paths:
        dirs = [path] if (path / "config.json").exists() else run_dirs(path)
        for run_dir in dirs:
            print(write_summary(run_dir), flush=True)
        loads = [path] if (path / "load.jsonl").exists() else sorted(
            p.parent for p in path.rglob("load.jsonl"))
        for folder in loads:
            print(write_load_summary(folder), flush=True)


if __name__ == "__main__":
    main()
