"""Live training progress in the terminal (rich): a table in a terminal, lines in a log."""

from __future__ import annotations

import time

from rich.console import Console
from rich.live import Live
from rich.table import Table


def _fmt(value: float | None, spec: str = ".3g") -> str:
    return "-" if value is None else format(value, spec)


class Progress:
    """Shows steps, env-steps/s, returns and per-module critic losses as training runs.

    bodies: the bodies of a multi-body run, whose returns are shown one by one (their
    metrics end in "/<body>", and `modules` are "<body>/<module>"); empty for one body.
    """

    def __init__(self, total_steps: int, modules: tuple[str, ...], console: Console | None = None,
                 bodies: tuple[str, ...] = ()):
        self.console = console or Console()
        self.total_steps = total_steps
        self.modules = modules
        self.bodies = bodies
        self.latest: dict[str, float] = {}
        self.eval: dict[str, float] = {}
        self.compile_s: float | None = None
        self._live: Live | None = None
        self._last_line = 0.0
        self._step = 0

    def __enter__(self) -> Progress:
        if self.console.is_terminal:
            self._live = Live(self._table(0), console=self.console, refresh_per_second=2)
            self._live.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)

    def message(self, text: str) -> None:
        self.console.print(text)

    def update(self, step: int, metrics: dict[str, float]) -> None:
        self.latest = metrics
        self._step = step
        if "time/compile_s" in metrics:
            self.compile_s = metrics["time/compile_s"]
        if self._live is not None:
            self._live.update(self._table(step))
        elif time.monotonic() - self._last_line > 5.0 or step >= self.total_steps:
            self._last_line = time.monotonic()
            self.console.print(self._line(step), highlight=False)

    def show_evaluation(self, metrics: dict[str, float]) -> None:
        """An evaluation's results: in the table at once, in the next progress line."""
        self.eval = {k: v for k, v in metrics.items() if k.startswith("eval/")}
        if self._live is not None:
            self._live.update(self._table(self._step))

    def _line(self, step: int) -> str:
        m = self.latest
        parts = [
            f"step {step:,}/{self.total_steps:,}",
            f"{_fmt(m.get('throughput/env_steps_per_s'), ',.0f')} env-steps/s",
            *(f"{who}return {_fmt(m.get('episode/team_return' + end))}"
              f" eval {_fmt(self.eval.get('eval/team_return' + end))}"
              f" fwd vel {_fmt(m.get('episode/forward_velocity' + end))}"
              for who, end in self._returns()),
        ]
        if self.bodies:  # a line per module would not fit: each body's mean
            critic = [f"{body}={_fmt(self._mean_critic(body))}" for body in self.bodies]
            return " | ".join(parts) + " | mean critic " + " ".join(critic)
        critic = [
            f"{mod}={_fmt(m.get(f'losses/critic/{mod}'))}" for mod in self.modules
        ]
        return " | ".join(parts) + " | critic " + " ".join(critic)

    def _mean_critic(self, body: str) -> float | None:
        losses = [self.latest[f"losses/critic/{mod}"] for mod in self.modules
                  if mod.startswith(f"{body}/") and f"losses/critic/{mod}" in self.latest]
        return sum(losses) / len(losses) if losses else None

    def _table(self, step: int) -> Table:
        m = self.latest
        table = Table(title=f"modular_ppo — step {step:,} / {self.total_steps:,}", expand=False)
        table.add_column("metric")
        table.add_column("value", justify="right")
        rows = [
            ("env-steps/s", _fmt(m.get("throughput/env_steps_per_s"), ",.0f")),
            ("compile (s)", _fmt(self.compile_s, ".1f")),
        ]
        for who, end in self._returns():
            rows += [
                (f"{who}train team return", _fmt(m.get("episode/team_return" + end))),
                (f"{who}eval team return", _fmt(self.eval.get("eval/team_return" + end))),
                (f"{who}forward velocity", _fmt(m.get("episode/forward_velocity" + end))),
                (f"{who}episode length", _fmt(m.get("episode/length" + end), ".0f")),
            ]
        for name, value in rows:
            table.add_row(name, value)
        for mod in self.modules:
            table.add_row(
                f"critic loss / {mod}",
                f"{_fmt(m.get(f'losses/critic/{mod}'))} "
                f"(R² {_fmt(m.get(f'critic/explained_variance/{mod}'), '.2f')})",
            )
        return table

    def _returns(self) -> list[tuple[str, str]]:
        """(label prefix, metric name suffix) for each body whose returns are shown."""
        return [(f"{body}: ", f"/{body}") for body in self.bodies] or [("", "")]
