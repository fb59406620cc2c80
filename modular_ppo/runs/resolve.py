"""The one place a training run's final config is decided.

`train_defaults` gives the command line its defaults (a body file's PPO and architecture
presets; the hardware's batch shape comes with `TrainRunConfig`'s own defaults), and
`resolve_train_config` turns the parsed settings into the config the run trains with:
the saved run's (`--resume`), the source run's network and observations (`--init-from`),
a run of several processes on MJX with data parallelism (`--distributed.*`), the backend
"auto" chosen for the bodies, the token networks' max sizes, and each body's share of the
environments and of the loss. Every later stage reads the `ResolvedRun`; none rewrites
its config. Checks of the settings given belong here too, before anything is built.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping

import jax

from modular_ppo.body import BodyGraph, load_body
from modular_ppo.body.task import PPO_PRESET, PPO_PRESET_ACCELERATOR, PREFIX
from modular_ppo.env import default_backend, make_env
from modular_ppo.env.cpu_backend import cpu_unsupported_reason
from modular_ppo.env.cpu_simulator import usable_cores
from modular_ppo.env.device_twin import device_twin
from modular_ppo.env.errors import EnvError
from modular_ppo.env.types import ModularEnvProtocol
from modular_ppo.errors import ModularPPOError
from modular_ppo.networks import NetworkConfig, NetworkConfigError
from modular_ppo.networks.registry import architecture
from modular_ppo.ppo import default_ppo_config, with_preset
from modular_ppo.runs.config import TrainRunConfig, body_names
from modular_ppo.runs.config_json import load_run_config
from modular_ppo.runs.errors import EnvRewardError, RunConfigError
from modular_ppo.runs.limits import MAX_BODIES
from modular_ppo.runs.source_settings import with_source_settings
from modular_ppo.runs.max_sizes import with_max_sizes
from modular_ppo.runs.resume import resume_config


class LoadedBodies:
    """Bodies loaded by (name, partition), each once: the command line reads a body's
    preset before parsing, and the run builds on the same BodyGraph."""

    def __init__(self) -> None:
        self._bodies: dict[tuple[str, str | None], BodyGraph] = {}

    def get(self, name: str, partition: str | None = None) -> BodyGraph:
        """The body `name` with `partition` (`body.load_body`), loaded on the first call."""
        key = (name, partition)
        if key not in self._bodies:
            self._bodies[key] = load_body(name, partition)
        return self._bodies[key]


@dataclasses.dataclass(frozen=True)
class ResolvedRun:
    """A training run's final settings and what they were decided from (nothing
    trained). Names are the bodies' (`BodyGraph.name`), in --body order."""

    config: TrainRunConfig
    bodies: dict[str, BodyGraph]
    envs: dict[str, ModularEnvProtocol]
    body_envs: dict[str, int]
    """Each body's environments: its share of `config.ppo.n_envs` (the run's total)."""
    loss_weights: dict[str, float]
    """Each body's weight in the loss, summing to 1."""
    custom_env: bool = False
    """Built on an env given in code, not from the config (`runs.program_key` can name
    only what the config builds)."""


def train_defaults(body: str | None, partition: str | None = None,
                   loaded: LoadedBodies | None = None) -> TrainRunConfig:
    """The defaults of `cli.py train --body BODY`: TrainRunConfig() with the PPO settings
    and the architecture the body's file recommends (`modular_ppo:ppo_preset`, then on a GPU
    or TPU `modular_ppo:ppo_preset_accelerator`, and
    `modular_ppo:arch_preset`; for several bodies, each preset they all give, e.g. a body
    set's), which flags still override. A preset the bodies differ on, a body that does not
    load, and more bodies than a run takes (the run reports why, before loading any) keep
    the defaults."""
    if body is None:
        return TrainRunConfig()
    loaded = loaded or LoadedBodies()
    try:
        names = body_names(body)
        if len(names) > MAX_BODIES:
            return TrainRunConfig()
        graphs = [loaded.get(name, partition) for name in names]
    except ModularPPOError:
        return TrainRunConfig()
    graph = graphs[0]
    platform = _platform()
    presets = {PREFIX + PPO_PRESET: [g.ppo_preset for g in graphs]}
    if platform != "cpu":
        presets[PREFIX + PPO_PRESET_ACCELERATOR] = [g.ppo_preset_accelerator for g in graphs]
    ppo = default_ppo_config(platform)
    for element, given in presets.items():
        same = all(preset == given[0] for preset in given)
        ppo = with_preset(ppo, given[0] if same else {}, graph.source, element)
    arch = graph.arch_preset if all(g.arch_preset == graph.arch_preset for g in graphs) else None
    try:
        network = NetworkConfig() if arch is None else NetworkConfig(arch=arch)
    except NetworkConfigError as error:  # no such architecture
        raise RunConfigError(
            f'{graph.source}: <text name="modular_ppo:arch_preset" data="{arch}">: {error} '
            "Fix its value, or remove it."
        ) from None
    try:  # --body comes from the command line
        return TrainRunConfig(ppo=ppo, network=network)
    except RunConfigError as error:  # a preset value beyond its stated range (runs/limits.py)
        elements = " / ".join(f'<text name="{element}">' for element, given in presets.items()
                              if given[0])
        raise RunConfigError(f"{graph.source}: {elements}: {error} Fix its value.") from None


def resolve_train_config(config: TrainRunConfig, env: ModularEnvProtocol | None = None,
                         loaded: LoadedBodies | None = None) -> ResolvedRun:
    """The run `config` describes, with its final config (the module docstring says what
    is decided), its bodies and their envs.

    env: train in this environment (a custom task, a wrapper) instead of the one the
    config describes; its body is the run's. loaded: bodies already loaded (by the
    command line), used instead of loading them again."""
    config = _given_settings(config, env)
    if env is not None:
        check_env_rewards(env)
        bodies, envs = {env.body.name: env.body}, {env.body.name: env}
    else:
        bodies = _load_bodies(config, loaded or LoadedBodies())
        config = _with_backend(config, bodies)
        envs = {name: make_env(body, config.env, config.env_backend)
                for name, body in bodies.items()}
    config = _with_device_share(config, envs)
    if architecture(config.arch).tokens:
        # A resumed run keeps the sizes it was built with (held-out bodies may be added).
        headroom = len(bodies) > 1 or bool(config.held_out and config.resume is None)
        config = dataclasses.replace(
            config, network=with_max_sizes(config.network, envs, headroom))
    return ResolvedRun(config, bodies, envs, dict(zip(bodies, split_envs(config))),
                       dict(zip(bodies, loss_weights(config))), custom_env=env is not None)


def _given_settings(config: TrainRunConfig, env: ModularEnvProtocol | None) -> TrainRunConfig:
    """`config` with what other sources decide: a run of several processes (MJX, data
    parallel), the resumed run's settings, a custom env's body, the --init-from run's
    network and observations."""
    if config.distributed.enabled:
        config = dataclasses.replace(
            config, backend="mjx", ppo=dataclasses.replace(config.ppo, data_parallel=True))
    if config.resume is not None:
        return resume_config(config, load_run_config(config.resume))
    if env is not None:
        if config.multi_body:
            raise RunConfigError(
                f"--body {config.body!r}: a custom env trains one body; give one body with "
                "it, or drop the env to train the listed bodies.")
        config = dataclasses.replace(config, body=env.body.name)
    if config.init_from is not None:
        config = with_source_settings(config)
    return config


def _load_bodies(config: TrainRunConfig, loaded: LoadedBodies) -> dict[str, BodyGraph]:
    """The run's bodies by name; RunConfigError for two bodies of one name."""
    bodies: dict[str, BodyGraph] = {}
    for name in config.bodies:
        body = loaded.get(name, config.partition)
        if body.name in bodies:
            raise RunConfigError(
                f"--body {config.body!r}: two bodies are named '{body.name}' (an MJCF "
                "file's body takes the name in <mujoco model=...>, else the file's "
                "name); give each body once, or give one of the files another model name.")
        bodies[body.name] = body
    return bodies


PIPELINED_MIN_CORES = 8
"""Host cores from which "auto" on a TPU is the pipelined backend (`_with_backend`)."""
DEVICE_SHARE = 0.4
"""The device share of a pipelined run on an accelerator when none is given: the best of
0, 0.25 and 0.4 at the accelerator default of 4,096 ant envs on one TPU v5e chip with 13
host cores (128,884 / 141,940 / 149,696 env-steps/s; docs/backends.md)."""


def _platform() -> str:
    """JAX's default platform: "cpu", "gpu" or "tpu"."""
    return jax.default_backend()


def _with_backend(config: TrainRunConfig, bodies: Mapping[str, BodyGraph]) -> TrainRunConfig:
    """`config` with backend "auto" replaced by the one the bodies get: on a TPU with
    PIPELINED_MIN_CORES host cores or more, "cpu-pipelined" where the C simulator runs
    every body and the run is on one device (one run or --seeds; no data parallelism or
    several processes); on one TPU v5e chip with 13 host cores it trained the ant at 1.5x MJX's
    rate (docs/backends.md). Else `default_backend` ("mjx" when the bodies would get
    different ones)."""
    if config.backend != "auto":
        return config
    backends = {default_backend(body) for body in bodies.values()}
    one_device = not (config.ppo.data_parallel or config.distributed.enabled)
    if (_platform() == "tpu" and usable_cores() >= PIPELINED_MIN_CORES
            and one_device
            and not any(cpu_unsupported_reason(body) for body in bodies.values())):
        backends = {"cpu-pipelined"}
    return dataclasses.replace(config, backend=backends.pop() if len(backends) == 1 else "mjx")


def _with_device_share(config: TrainRunConfig,
                       envs: Mapping[str, ModularEnvProtocol]) -> TrainRunConfig:
    """`config` with an unset device share decided: DEVICE_SHARE for a pipelined run on an
    accelerator where every env has an MJX twin (`env.device_twin`, kept for the run's
    rollouts), else 0 (where JAX runs on CPU, MJX would step on the simulator's cores)."""
    if config.device_share is not None:
        return config
    share = DEVICE_SHARE if config.pipelined and _platform() != "cpu" else 0.0
    if share and not all(_has_twin(env) for env in envs.values()):
        share = 0.0
    return dataclasses.replace(config, device_share=share)


def _has_twin(env: ModularEnvProtocol) -> bool:
    try:
        device_twin(env)
    except EnvError:  # MJX refuses the body, or the env is not the CPU backend's
        return False
    return True


def split_envs(config: TrainRunConfig) -> list[int]:
    """Each body's environment count: its share of ppo.n_envs (`body_env_shares`, default
    equal), in whole minibatch slots (multiples of n_minibatches), adding up to n_envs."""
    ppo, bodies = config.ppo, config.bodies
    shares = config.body_env_shares or (1.0,) * len(bodies)
    slots = ppo.n_envs // ppo.n_minibatches
    counts = [math.floor(slots * share / sum(shares)) for share in shares]
    counts[-1] += slots - sum(counts)
    if min(counts) < 1:
        raise RunConfigError(
            f"--ppo.n-envs {ppo.n_envs} with --ppo.n-minibatches {ppo.n_minibatches} leaves "
            f"{slots} slots of {ppo.n_minibatches} environments for {len(bodies)} bodies with "
            f"shares {shares}: some body gets none. Raise --ppo.n-envs to at least "
            f"{ppo.n_minibatches * len(bodies)}, or even out --body-env-shares."
        )
    return [count * ppo.n_minibatches for count in counts]


def loss_weights(config: TrainRunConfig) -> list[float]:
    """Each body's weight in the loss: its `body_loss_shares` (default equal), summing
    to 1."""
    shares = config.body_loss_shares or (1.0,) * len(config.bodies)
    return [share / sum(shares) for share in shares]


def check_env_rewards(env: ModularEnvProtocol) -> None:
    """Raise EnvRewardError unless `env` rewards exactly the modules it observes: each
    module's value head, and each policy head trained on its own module's advantage,
    needs that module's reward stream."""
    rewarded = jax.eval_shape(env.reset, jax.random.key(0)).reward
    missing = [m for m in env.obs_sizes if m not in rewarded]
    unknown = [m for m in rewarded if m not in env.obs_sizes]
    if missing or unknown:
        raise EnvRewardError(
            f"{type(env).__name__}: its State.reward is keyed by {sorted(rewarded)}, but it "
            f"observes modules {sorted(env.obs_sizes)}; missing: {missing or 'none'}, "
            f"unknown: {unknown or 'none'}. Per-module advantages need a reward for every "
            "observed module: give each one a reward (0.0 where it earns none) in reset and "
            "step, and no others."
        )
