"""`train`: a training run of `TrainRunConfig` (modular_ppo.runs), its paths checked first."""

from __future__ import annotations

from rich.console import Console

from modular_ppo.output_paths import output_folder
from modular_ppo.ppo import start_distributed
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.resolve import LoadedBodies
from modular_ppo.runs.seed_runs import run_seed_training
from modular_ppo.runs.train_run import run_training


def train(config: TrainRunConfig, console: Console | None = None,
          loaded: LoadedBodies | None = None) -> None:
    """Check where the run will write (the runs root, or the resumed run's directory), join
    the run's other processes (--distributed.*), then train
    (`modular_ppo.runs.train_run.run_training`, which resolves the config once; with
    `--seeds`, `runs.seed_runs.run_seed_training`: the seeds in one compiled program).

    loaded: bodies the command line loaded already (for their presets)."""
    if config.resume is not None:
        output_folder(config.resume, "--resume")
    else:
        output_folder(config.runs_root, "--runs-root")
    start_distributed(config.distributed)
    if config.seeds:
        run_seed_training(config, config.seeds, console or Console())
    else:
        run_training(config, console or Console(), loaded=loaded)
