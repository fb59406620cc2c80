"""The configuration of a training run: everything needed to rebuild it, as one frozen
dataclass checked on construction. `runs.resolve` turns the settings given into a run's
final config; config_json.py reads and writes it."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

import tyro

from modular_ppo.body import BODY_SETS, family_members
from modular_ppo.compile_cache import CompileCacheConfig, CompileCacheFlags
from modular_ppo.env import Backend, EnvConfig
from modular_ppo.networks import NetworkConfig
from modular_ppo.networks.registry import acting_on_any_body, architecture
from modular_ppo.ppo import DistributedConfig, EvalConfig, PPOConfig, default_ppo_config
from modular_ppo.runs.errors import RunConfigError
from modular_ppo.runs.validate import check_config


StatisticsSource = Literal["warm-up", "trained-bodies"]
"""Where a body the parameters were not trained on gets its observation normalizer
statistics (`runs.transfer`): "warm-up" (steps of the policy acting on it) or
"trained-bodies" (pooled from the trained bodies' modules that observe the same blocks)."""
TrainBackend = Literal["auto", "mjx", "cpu", "cpu-pipelined", "warp"]
"""A run's `--backend`: a simulator backend of `env.make_env`, or "cpu-pipelined" (the
CPU backend's envs, trained with the host's physics and the device's work overlapped)."""
OptimizerSource = Literal["fresh", "source"]
"""The optimizer state a fine-tuned run (`--init-from`) starts with."""


def default_eval_every_steps(platform: str | None = None) -> int:
    """Env steps between a run's evaluations: 500,000 when JAX runs on CPU (about a minute
    of training at the CPU defaults), 5,000,000 on an accelerator (about 40 s at the chip's
    100-140k env-steps/s: at 500,000, the ant's evaluations on `--backend cpu-pipelined`,
    5-7 s each, took 136 of a 5-minute run's 300 s on one TPU v5e chip). platform: "cpu",
    "gpu" or "tpu" (default: JAX's)."""
    if platform is None:
        import jax

        platform = jax.default_backend()
    return 500_000 if platform == "cpu" else 5_000_000


@dataclasses.dataclass(frozen=True)
class TrainRunConfig:
    """Train PPO on a modular body and keep everything in a run directory."""

    body: str = "ant-modular"
    """A bundled body (`python cli.py bodies list`) or the path of an MJCF file; several,
    comma-separated ("centipede-4,centipede-6"), train one network on all of them (--arch
    shared, graph or attention); "NAME-A..B" stands for the family's members of sizes A to
    B ("centipede-3..7": centipede-4 and centipede-6, centipedes having an even number of
    legs)."""
    held_out: tuple[str, ...] = ()
    """Bodies to evaluate zero-shot at every evaluation (the run's parameters on a network
    built for each, normalizer statistics from --new-body-statistics; no training on them):
    metrics "eval/team_return/<body>", ... Needs --arch shared, graph or attention."""
    body_env_shares: tuple[float, ...] = ()
    """With several bodies: each body's share of --ppo.n-envs, in --body order (default:
    equal shares). Each body's environment count must come out a multiple of
    --ppo.n-minibatches."""
    body_loss_shares: tuple[float, ...] = ()
    """With several bodies: each body's weight in the loss the shared network is trained on,
    in --body order (default: equal). Each body's loss is a mean over its own samples, so a
    body with more environments or shorter episodes does not get more weight."""
    partition: str | None = None
    """Partition rule or MaMuJoCo-style string (e.g. "4x2"); None uses the body file's own
    annotation, else one module per child subtree of the root body."""
    seed: int = 0
    """Seeds parameters, environments and minibatch shuffling: the same seed gives the
    same run."""
    seeds: tuple[int, ...] = ()
    """Train these seeds (e.g. `--seeds 0 1 2 3 4`) as one compiled program, the training
    states stacked on a leading seed axis, each seed keeping a run dir of its own
    (`<run name>-seed<k>`; `--resume` on one continues that seed alone). Empty: one run of
    `--seed`."""
    network: Annotated[NetworkConfig, tyro.conf.arg(name="")] = NetworkConfig()
    """Architecture (`--arch`) and network sizes. The network's flags carry no "network."
    prefix; its nested configs keep theirs (`--graph.rounds`, `--attention.heads`)."""
    backend: TrainBackend = "auto"
    """Simulator: "cpu" (MuJoCo's C simulator on a thread pool, several times faster than
    MJX when JAX runs on CPU: BENCHMARKS.md), "cpu-pipelined" (the same simulator and envs,
    with the host's physics of one half of the environments overlapped with the device's
    networks for the other half: for an accelerator with idle host cores, docs/backends.md),
    "mjx" (MuJoCo MJX inside JAX, the one for GPUs), "warp" (MJX's MuJoCo Warp
    implementation: NVIDIA GPUs, `pip install -e '.[warp]'`) or "auto" ("cpu" when JAX runs
    on CPU and the body allows it; "cpu-pipelined" on a TPU with 8 host cores or more and
    the body allows it; else "mjx"). The run records the backend it used, and a resumed run
    keeps it."""
    device_share: float | None = None
    """With --backend cpu-pipelined: about this share of each body's environments is
    stepped by MJX on the accelerator, in the time it idles while the host steps the rest
    (docs/backends.md); 0: the host steps them all. A share whose MJX step outlasts the
    host's half-step delays the host. Default: 0.4 on an accelerator
    (`runs.resolve.DEVICE_SHARE`), 0 where JAX runs on CPU."""
    env: EnvConfig = EnvConfig()
    """Task, observations and episodes."""
    ppo: PPOConfig = dataclasses.field(default_factory=default_ppo_config)
    """PPO batch shape, losses and optimizer (`--ppo.total-steps` sets the run length).
    The default batch shape follows the hardware (`ppo.default_ppo_config`): 64 envs on
    CPU, 4096 on a GPU."""
    eval: EvalConfig = EvalConfig()
    """Evaluation episodes."""
    eval_every_steps: int = dataclasses.field(default_factory=default_eval_every_steps)
    """Run an evaluation every this many env steps (and at the end); 0 only at the end.
    Default: 500,000 when JAX runs on CPU, 5,000,000 on an accelerator
    (`default_eval_every_steps`)."""
    checkpoint_every_steps: int = 500_000
    """Save the full training state every this many env steps (and at the end)."""
    keep_checkpoints: int = 3
    """Checkpoints kept on disk (the newest ones)."""
    video: bool = True
    """Render a video of one deterministic episode at the end (needs headless OpenGL)."""
    video_length: int = 250
    """Control steps in the video."""
    runs_root: Path = Path("runs")
    """Run directories are created as <runs_root>/<body>/<timestamp>/."""
    run_name: str | None = None
    """Name of the run directory instead of a timestamp (must not exist yet)."""
    resume: Path | None = None
    """Continue the run in this directory from its latest checkpoint. The run's own settings
    of body, partition, seed, network, env and PPO are used (giving different ones is an
    error); `--ppo.total-steps` sets the new length, and the settings that do not change
    what training computes may be changed (RESUME_MAY_CHANGE: evaluation, checkpoints,
    video, held-out bodies and their statistics, compile cache, data-parallel and
    distributed settings)."""
    init_from: Path | None = None
    """Fine-tune: start from the parameters of this run directory's latest checkpoint (its
    network settings but the entropy weight are used, and its sizes must hold --body), with
    the optimizer state of --init-optimizer and each body's observation normalizer from
    --new-body-statistics (the run's own for a body it trained on)."""
    init_optimizer: OptimizerSource = "fresh"
    """With --init-from, the optimizer state the new run starts with: "fresh" (Adam's
    moments at zero: its first updates move every weight by about the learning rate) or
    "source" (the source checkpoint's moments and step count, as if training went on;
    needs gradient clipping and weight decay on or off as in the source run)."""
    new_body_statistics: StatisticsSource = "trained-bodies"
    """Where --held-out bodies and, with --init-from, the new run's bodies (those the source
    did not train on) get their observation normalizer statistics: "trained-bodies"
    (pooled from the trained bodies' modules that observe the same blocks, as `eval
    --body`) or "warm-up" (4,096 steps of the policy acting on the body: statistics of a
    standing start, on which held-out walkers walked backwards in BENCHMARKS.md)."""
    distributed: DistributedConfig = DistributedConfig()
    """Train with several processes (hosts): README, "Many machines". Environments are split
    over every process's devices (--ppo.data-parallel is implied); process 0 writes the run
    directory; checkpoints are written by all, into a folder every process can reach."""
    cache: CompileCacheFlags = CompileCacheConfig()
    """Where compiled programs are kept between runs (`--compile-cache-dir`,
    `--no-compile-cache`); the CLI sets it up before anything compiles."""

    def __post_init__(self) -> None:
        check_config(self, flag)  # numbers in their stated ranges, body count (runs/limits.py)
        if self.run_name is not None and (
            Path(self.run_name).name != self.run_name or self.run_name in ("", ".", "..")
        ):
            raise RunConfigError(
                f"--run-name {self.run_name!r}: give a plain folder name (no '/' or '..'); "
                "the run directory is created as <runs_root>/<body>/<run_name>. Use "
                "--runs-root to put runs elsewhere."
            )
        self._check_bodies()
        check_distributed_backend(self.backend, self.distributed)
        if self.device_share and self.backend != "cpu-pipelined":
            raise RunConfigError(
                f"--device-share {self.device_share} with --backend {self.backend}: the "
                "device share is the pipelined backend's (MJX steps it beside the host's C "
                "simulator). Add --backend cpu-pipelined, or drop --device-share.")
        if self.init_optimizer != "fresh" and self.init_from is None:
            raise RunConfigError(
                f"--init-optimizer {self.init_optimizer} without --init-from: the optimizer "
                "state comes from the run a fine-tuned run starts from. Give --init-from "
                "RUN_DIR, or drop --init-optimizer."
            )
        if self.init_from is not None and self.resume is not None:
            raise RunConfigError(
                f"--init-from {self.init_from} with --resume {self.resume}: --resume continues "
                "a run from its own checkpoint, --init-from starts a new one from another "
                "run's parameters. Give one of them."
            )

    def _check_bodies(self) -> None:
        bodies = self.bodies
        if not all(bodies):
            raise RunConfigError(
                f"--body {self.body!r}: an empty body name; give names separated by single "
                "commas, e.g. --body centipede-4,centipede-6."
            )
        if len(set(bodies)) != len(bodies):
            raise RunConfigError(f"--body {self.body!r}: each body may appear once; drop "
                                 "the repeated name.")
        per_module = architecture(self.arch).per_module_weights
        if len(bodies) > 1 and per_module:
            raise RunConfigError(
                f"--body {self.body!r} with --arch {self.arch}: that architecture gives "
                "every module its own weights, so one network cannot serve several bodies. "
                f"Use --arch {acting_on_any_body()} (weights shared across modules and "
                "bodies), or train one body per run."
            )
        held_out = self.held_out_bodies
        if held_out and per_module:
            raise RunConfigError(
                f"--held-out {' '.join(self.held_out)} with --arch {self.arch}: its weights "
                "belong to the training bodies' modules by name and cannot act on other "
                f"bodies. Use --arch {acting_on_any_body()}."
            )
        both = sorted(set(held_out) & set(bodies))
        if both:
            raise RunConfigError(
                f"--held-out {' '.join(self.held_out)}: {', '.join(both)} is also a training "
                "body (--body); a held-out body is one the run never trains on. Drop it from "
                "one of the two."
            )
        for name in ("body_env_shares", "body_loss_shares"):
            shares = getattr(self, name)
            if shares and (len(shares) != len(bodies) or not all(s > 0 for s in shares)):
                raise RunConfigError(
                    f"{flag(name)} {' '.join(map(str, shares))}: give one positive share "
                    f"per body ({len(bodies)}: {', '.join(bodies)}), or none for equal shares."
                )

    @property
    def bodies(self) -> tuple[str, ...]:
        """The bodies of the run, in --body order (one for a single-body run), family ranges
        ("centipede-3..7") expanded."""
        return body_names(self.body)

    @property
    def held_out_bodies(self) -> tuple[str, ...]:
        """The held-out bodies, family ranges expanded."""
        return tuple(name for part in self.held_out for name in family(part.strip(), "--held-out"))

    @property
    def env_backend(self) -> Backend:
        """The simulator backend of the run's envs (`env.make_env`): "cpu" for
        "cpu-pipelined"."""
        return "cpu" if self.backend == "cpu-pipelined" else self.backend

    @property
    def backend_in_words(self) -> str:
        """The simulator as the progress line names it, e.g. "--backend cpu-pipelined,
        40% of the envs on MJX"."""
        share = f", {self.device_share:.0%} of the envs on MJX" if self.device_share else ""
        return f"--backend {self.backend}{share}"

    @property
    def pipelined(self) -> bool:
        """Whether rollouts overlap the host's physics with the device's work."""
        return self.backend == "cpu-pipelined"

    @property
    def multi_body(self) -> bool:
        return len(self.bodies) > 1

    @property
    def arch(self) -> str:
        return self.network.arch


def check_distributed_backend(backend: str, distributed: DistributedConfig) -> None:
    """Raise RunConfigError for the C simulator in a run of several processes: it is
    stepped from host calls, which this version does not split over several processes'
    devices (runs of several processes use MJX)."""
    if distributed.enabled and backend in ("cpu", "cpu-pipelined"):
        raise RunConfigError(
            f"--backend {backend} with --distributed.*: the C simulator is stepped from host "
            "calls, which this version does not split over several processes' devices. "
            "Use --backend mjx (the default with --distributed.*)."
        )


FAMILY_RANGE = re.compile(r"^(?P<stem>.+)-(?P<first>\d{1,9})\.\.(?P<last>\d{1,9})$")


def body_names(body: str) -> tuple[str, ...]:
    """The bodies a --body value names, in order: comma-separated, each a body, a family
    range or a body set (`family`)."""
    return tuple(name for part in body.split(",") for name in family(part.strip()))


def family(name: str, flag_name: str = "--body") -> tuple[str, ...]:
    """"centipede-4..8" -> ("centipede-4", "centipede-6", "centipede-8"): the members of
    the range that the family has (`modular_ppo.body.family_members`); a named body set
    ("smp-walker++", `modular_ppo.body.BODY_SETS`) -> its bodies; any other name ->
    (name,). RunConfigError for a range with no member."""
    if name in BODY_SETS:
        return BODY_SETS[name]
    match = FAMILY_RANGE.match(name)
    if match is None:
        return (name,)
    first, last = int(match["first"]), int(match["last"])
    if first > last:
        raise RunConfigError(
            f"{flag_name} {name}: the range {first}..{last} is empty. Give NAME-A..B with "
            f"A <= B, e.g. {match['stem']}-{last}..{first}."
        )
    members = family_members(match["stem"], first, last)
    if not members:
        raise RunConfigError(
            f"{flag_name} {name}: no {match['stem']} has a size in {first}..{last} (a "
            f"{match['stem']} cannot have each size; `python cli.py bodies list` says which "
            f"it can). Widen the range, e.g. {match['stem']}-{first}..{last + 2}."
        )
    return members


def flag(path: str) -> str:
    """The command-line flag of a config field path such as "ppo.n_envs" or "network.arch"."""
    path = path.removeprefix("network.")  # the network's flags carry no prefix
    return "--" + path.replace("_", "-")


def config_leaves(config: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(field path, value) of every non-dataclass field, nested configs flattened."""
    for field in dataclasses.fields(config):
        value = getattr(config, field.name)
        if dataclasses.is_dataclass(value):
            yield from config_leaves(value, f"{prefix}{field.name}.")
        else:
            yield f"{prefix}{field.name}", value
