"""What each CLI subcommand does, as library functions that print with rich.

One module per command, each holding the dataclass that configures it (what `cli.py`
parses) and the function that takes it whole:

- `evaluate`: `EvalCommand`, `evaluate_run(command, console)`
- `render`: `RenderCommand`, `render_run(command, console)`
- `analyze`: `AnalyzeCommand`, `analyze_runs(command, console)`
- `bodies`: `BodiesListCommand`, `list_bodies(console)`; `BodiesShowCommand`,
  `show_body(command, console)`
- `train`: `train(config, console)` for `modular_ppo.runs.config.TrainRunConfig`

Every path a command writes is checked before its work starts (`modular_ppo.output_paths`).
"""

from modular_ppo.commands.analyze import AnalyzeCommand, analyze_runs
from modular_ppo.commands.bodies import BodiesListCommand, BodiesShowCommand, list_bodies, show_body
from modular_ppo.commands.evaluate import EvalCommand, evaluate_run
from modular_ppo.commands.render import RenderCommand, render_run
from modular_ppo.commands.train import train

__all__ = [
    "AnalyzeCommand", "BodiesListCommand", "BodiesShowCommand", "EvalCommand", "RenderCommand",
    "analyze_runs", "evaluate_run", "list_bodies", "render_run", "show_body", "train",
]
