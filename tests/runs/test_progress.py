"""Training progress: an iteration's line shows as soon as the iteration returns, before the
evaluation that is due at that step runs; the evaluation's results show in the next line."""

import io
import types
from pathlib import Path

from rich.console import Console

from modular_ppo.runs import train_run
from modular_ppo.runs.progress import Progress
from modular_ppo.runs.run_book import RunBook

MODULES = ("torso", "leg")


def plain_console() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, force_terminal=False, width=300), out


def iteration_metrics(team_return: float) -> dict[str, float]:
    return {"throughput/env_steps_per_s": 1000.0, "episode/team_return": team_return,
            "losses/critic/torso": 0.5, "losses/critic/leg": 0.25}


def test_an_evaluation_shows_in_the_line_after_it():
    console, out = plain_console()
    with Progress(64, MODULES, console) as progress:
        progress.update(16, iteration_metrics(1.0))
        progress.show_evaluation({"eval/team_return": 7.5, "time/eval_s": 0.1})
        progress.update(64, iteration_metrics(2.0))  # the last step always prints
    first, last = out.getvalue().splitlines()
    assert first.startswith("step 16/64") and "return 1 eval -" in first
    assert last.startswith("step 64/64") and "return 2 eval 7.5" in last
    assert "critic torso=0.5 leg=0.25" in last


class _Log:
    enabled = True

    def __init__(self):
        self.rows: list[tuple[int, dict]] = []

    def write(self, step: int, metrics: dict) -> None:
        self.rows.append((step, dict(metrics)))


class _Checkpointer:
    def steps(self) -> list[int]:
        return []

    def save(self, step, state) -> None:
        pass


def test_the_first_progress_line_comes_before_the_first_evaluation(tmp_path: Path):
    console, out = plain_console()
    printed_when_evaluated: list[str] = []

    def evaluator(state, key) -> dict[str, float]:
        printed_when_evaluated.append(out.getvalue())
        return {"episode/team_return": 42.0}

    def fit(on_iteration):
        for steps in (16, 32):
            state = types.SimpleNamespace(steps=steps)
            if on_iteration(state, iteration_metrics(float(steps))):
                break
        return state

    config = types.SimpleNamespace(seed=0, resume=None, eval_every_steps=16,
                                   checkpoint_every_steps=0, backend_in_words="--backend cpu",
                                   ppo=types.SimpleNamespace(total_steps=32))
    run = types.SimpleNamespace(config=config, state=types.SimpleNamespace(steps=0),
                                progress_modules=MODULES, progress_bodies=(), fit=fit)
    log = _Log()
    stop = types.SimpleNamespace(requested=False, signum=None)
    book = RunBook(run, tmp_path, _Checkpointer(), log, evaluator, started_at=0.0)
    _, stopped = train_run._train(book, stop, console)
    assert stopped is None
    # Evaluated at both steps; at the first, step 16's line was already out.
    assert len(printed_when_evaluated) == 2
    assert "step 16/32" in printed_when_evaluated[0]
    # Each step's metrics row holds its training metrics and its evaluation.
    assert [step for step, _ in log.rows] == [16, 32]
    assert all(row["eval/team_return"] == 42.0 and "episode/team_return" in row
               for _, row in log.rows)
    # The last line (step 32, printed before its own evaluation) shows step 16's.
    assert "step 32/32" in out.getvalue().splitlines()[-1]
    assert "eval 42" in out.getvalue().splitlines()[-1]
