"""NetworkConfig: which architecture, how big, and how the policy explores."""

from __future__ import annotations

import dataclasses
import functools
import math
import typing
from typing import Literal

from modular_ppo.networks.errors import NetworkConfigError

Architecture = Literal["separate", "shared", "graph", "attention"]
"""The names of `networks.registry.ARCHITECTURES`, as the command line offers them."""
Activation = Literal["tanh", "relu", "silu", "elu", "gelu"]
Recurrence = Literal["none", "gru", "lstm"]
Distribution = Literal["tanh_gaussian", "clipped_gaussian"]
ModuleIdentity = Literal["index", "none"]
Morphology = Literal["none", "policy_and_value", "value"]
StreamName = Literal["policy", "value"]


@dataclasses.dataclass(frozen=True)
class GraphConfig:
    """The graph architecture: message passing along the module tree."""

    rounds: int = 2
    """Rounds of message passing; information travels one module hop per round, both
    towards the root and away from it."""


@dataclasses.dataclass(frozen=True)
class AttentionConfig:
    """The attention architecture: a transformer over module tokens."""

    heads: int = 4
    """Heads per attention layer; must divide `embedding_size`."""

    layers: int = 2
    """Number of transformer blocks."""

    max_hops: int | None = None
    """A module attends only to modules at most this many hops away in the module tree
    (0 = only itself). None attends to every module."""

    hop_bias: int | None = None
    """A learned bias on the attention logits by module hop distance (Amorpheus / MetaMorph
    style): per block and head, one value for each distance 0..hop_bias; modules further
    apart (or in separate trees) share the value of hop_bias. It starts at zero, and its
    shape does not depend on the body. None: no bias."""


@dataclasses.dataclass(frozen=True)
class NetworkConfig:
    """Module-keyed actor-critic networks (built by `make_network`).

    Frozen, and checked on construction (`NetworkConfigError` naming the field). Every
    architecture (`arch`) has separate policy and value streams, an optional recurrent
    core (`recurrent`) and an optional centralized critic (`centralized_critic`: values
    see all modules' observations, policies stay local). The graph and attention
    settings are nested as `graph` and `attention`.
    """

    arch: Architecture = "separate"
    """The architecture (`networks.registry`). separate: an independent policy MLP and value MLP per module. shared: one policy MLP
    and one value MLP applied to every module's token (homologous modules share weights).
    graph: message passing along the module tree (NerveNet / SMP style). attention: a
    transformer over module tokens, optionally masked to nearby modules."""

    policy_hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer widths of the policy MLP (separate, shared) or of the token encoder in
    front of message passing / attention (graph, attention)."""

    value_hidden_sizes: tuple[int, ...] = (64, 64)
    """Hidden layer widths of the value MLP or value token encoder, as for the policy."""

    activation: Activation = "tanh"
    """Nonlinearity of every hidden layer."""

    embedding_size: int = 64
    """Width of a module's embedding in the graph and attention architectures."""

    graph: GraphConfig = GraphConfig()
    """Settings of the graph architecture (message passing along the module tree)."""

    attention: AttentionConfig = AttentionConfig()
    """Settings of the attention architecture (a transformer over module tokens)."""

    centralized_critic: bool = False
    """Give every value head the observations of all modules while the policies keep
    their local inputs."""

    recurrent: Recurrence = "none"
    """A recurrent core per module between trunk and heads, for policy and value alike:
    none, gru or lstm. Its state is the network state carried through rollouts."""

    recurrent_size: int = 64
    """Hidden size of the recurrent core."""

    distribution: Distribution = "tanh_gaussian"
    """tanh_gaussian: actions are tanh of a Gaussian sample (exact log-likelihood with the
    tanh Jacobian). clipped_gaussian: actions are the Gaussian sample clipped to [-1, 1],
    scored with the Gaussian density of the unclipped sample."""

    state_dependent_std: bool = False
    """If true the policy head outputs the standard deviation; otherwise it is a learned
    parameter per action, independent of the observation."""

    init_log_std: float = -0.5
    """Log of the initial standard deviation of the pre-squash Gaussian."""

    min_std: float = 1e-3
    """Lower bound of the standard deviation (std = min_std + softplus(raw))."""

    entropy_weight: float = 1e-2
    """Weight of the entropy bonus; the network's regularization loss is
    -entropy_weight * (policy entropy summed over actuated modules)."""

    normalize_observations: bool = True
    """Normalize each module's observations with running mean and variance (updated by
    `update_statistics`, outside the gradient step)."""

    observation_clip: float = 10.0
    """Normalized observations are clipped to [-observation_clip, observation_clip]."""

    module_identity: ModuleIdentity = "index"
    """What tells modules apart in the shared, graph and attention architectures: index
    appends a one-hot of the module's position (width `max_modules`); none relies on the
    observations (and, for graph / attention, the module tree) alone."""

    morphology: Morphology = "none"
    """Append each module's morphology features to its token in the shared, graph and
    attention architectures (`modular_ppo.body.morphology`: its place in the module tree,
    its joints' axes, ranges, gears and control ranges, its mass and limb lengths; the same
    width for every body, so the weights still fit any body). policy_and_value: both
    streams' tokens carry them. value: only the value stream's (a morphology-conditioned
    critic; the policy's inputs stay as with none). none: neither."""

    max_modules: int | None = None
    """Width of the module one-hot and of the centralized critic's input in the token
    architectures. None uses the body's module count; set it to share weights between
    bodies with up to this many modules."""

    max_obs_size: int | None = None
    """Observation size every module token is padded to. None uses the body's largest;
    set it to share weights between bodies."""

    max_action_size: int | None = None
    """Action size every module's policy output is padded to. None uses the body's largest;
    set it to share weights between bodies."""

    def __post_init__(self) -> None:
        _check_choices_and_widths(self)
        _check_architecture_settings(self)
        _check_exploration(self)

    def morphology_in(self, stream: StreamName) -> bool:
        """Whether the `stream`'s tokens carry the modules' morphology features."""
        return self.morphology == "policy_and_value" or (
            self.morphology == "value" and stream == "value"
        )


def _check_choices_and_widths(config: NetworkConfig) -> None:
    """Fail on a name that is no choice of its field, or a width that is not positive."""
    for name, choices in (
        ("arch", Architecture),
        ("activation", Activation),
        ("recurrent", Recurrence),
        ("distribution", Distribution),
        ("module_identity", ModuleIdentity),
        ("morphology", Morphology),
    ):
        allowed = typing.get_args(choices)
        if getattr(config, name) not in allowed:
            _fail(name, f"is {getattr(config, name)!r}; choose one of {', '.join(allowed)}")
    for name in ("policy_hidden_sizes", "value_hidden_sizes"):
        sizes = getattr(config, name)
        if not sizes or any(not isinstance(s, int) or s < 1 for s in sizes):
            _fail(name, f"is {sizes!r}; give one or more positive layer widths, e.g. (64, 64)")
    for name in ("embedding_size", "recurrent_size", "attention.heads", "attention.layers"):
        _check_positive(config, name)
    for name in ("max_modules", "max_obs_size", "max_action_size"):
        if getattr(config, name) is not None:
            _check_positive(config, name)


def _check_architecture_settings(config: NetworkConfig) -> None:
    """Fail on graph, attention or morphology settings the architecture cannot use."""
    # The registry builds networks from this module's config: imported here, not above.
    from modular_ppo.networks.registry import acting_on_any_body, architecture

    if config.graph.rounds < 0:
        _fail("graph.rounds", f"is {config.graph.rounds}; it must be >= 0")
    if config.embedding_size % config.attention.heads:
        _fail(
            "attention.heads",
            f"({config.attention.heads}) must divide embedding_size ({config.embedding_size}); "
            "give a divisor of it, or change embedding_size",
        )
    for name in ("max_hops", "hop_bias"):
        value = getattr(config.attention, name)
        if value is not None and (not isinstance(value, int) or value < 0):
            _fail(f"attention.{name}", f"is {value!r}; it must be an integer >= 0, or None")
    if architecture(config.arch).per_module_weights and config.morphology != "none":
        _fail(
            "morphology",
            f"is {config.morphology!r}, but arch {config.arch!r} gives every module its own "
            "weights, to which a module's constant features add nothing; use arch "
            f"{acting_on_any_body()}, or morphology 'none'",
        )


def _check_exploration(config: NetworkConfig) -> None:
    """Fail on a standard deviation, entropy weight or observation clip out of range."""
    if not config.min_std > 0:
        _fail("min_std", "must be > 0")
    if not config.init_log_std > math.log(config.min_std):  # exp() would overflow past 709
        _fail(
            "init_log_std",
            f"gives std exp({config.init_log_std}) <= min_std ({config.min_std}); raise it",
        )
    if not config.entropy_weight >= 0:
        _fail("entropy_weight", "must be >= 0")
    if not config.observation_clip > 0:
        _fail("observation_clip", "must be > 0")


def _check_positive(config: NetworkConfig, path: str) -> None:
    """Fail unless the field at `path` ("embedding_size", "attention.heads") is an int >= 1."""
    value = functools.reduce(getattr, path.split("."), config)
    if not isinstance(value, int) or value < 1:
        _fail(path, f"is {value!r}; it must be a positive integer")


def _fail(field: str, problem: str) -> typing.NoReturn:
    raise NetworkConfigError(f"NetworkConfig.{field} {problem}.")
