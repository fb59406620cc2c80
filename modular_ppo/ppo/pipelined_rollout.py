"""The CPU backend's rollout with both engines busy (`--backend cpu-pipelined`).

`collect_rollout` on the CPU backend calls MuJoCo's C simulator from inside the jitted
rollout, so the device (the networks, observations, rewards) waits while the host steps
the physics, and the host waits while the device computes. Here the rollout is a Python
loop over the environments split in two halves, A and B: while a thread of the host steps
half A's physics (MuJoCo's thread pool, the GIL released), the main thread dispatches half
B's device work, which JAX runs asynchronously: the env step ended (`ModularEnv.end_step`:
rewards, termination, auto-reset, observations), policy and next controls
(`ModularEnv.begin_step`); then the roles swap. So the host's physics waits neither for
the device nor for the Python that feeds it. Only what the physics needs (the state
fields, controls and the fresh-start poses) goes to the host, and what it returns (the
state after the step, and fresh starts) comes back, as one array each way: every array
copied between host and accelerator costs a transfer of its own.

The device share (`device_share` > 0, `--device-share`): the chip is idle most of each
half-step, so a share of the environments is stepped there by MJX, in two parts C and D:
C's whole step (policy and MJX physics, `env.device_twin`: MJX stepping the CPU
backend's state type) is queued on the device behind half A's device work, D's behind
B's. Their states are `CpuData` like the host's, so all parts stay one batch of one env
state; a share too large for the chip's idle time delays the host's next half.

What it computes is a rollout of each part (`part_sizes`): `collect_rollout` of half A
and B on the CPU backend and of C and D on its device twin, joined (`joined_rollouts`),
with one difference from a single rollout of all of them: each part's actions after A's
draw their noise from another random stream of the network (`part_stream`), since a
network call on part of the batch cannot draw the others' share of one draw. Every env's
observations, rewards, dones and log-likelihoods are those of its engine given its
actions.

Several seeds' trainings (`ppo.seeds`) roll out as one: their states carry a leading seed
axis, every device program is vmapped over it, and the host's physics steps every seed's
half as one batch (so the host's threads see seeds x half of the envs at each half-step).
Seed k's rollout is the one it gets alone.

The fresh starts of auto-reset are made on the host for every environment at every step
(`CpuPhysics.step_on_host`): which environments are done is known only on the device,
after the step, and asking the host a second time would make each half wait for the
other engine once more per step. On one TPU v5e machine's host (13 cores) the starts of
2,048 ant envs took 2.3 ms beside 10.5 ms for their control step
(`benchmarks/pipelined_profile.py`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx, struct

from modular_ppo.env.cpu_simulator import CpuPhysics, restart_from
from modular_ppo.env.device_twin import device_twin
from modular_ppo.env.types import ModularEnvProtocol, State, StepRequest
from modular_ppo.networks.contract import NetState, StepOutput
from modular_ppo.ppo.ahead import CompileAhead
from modular_ppo.ppo.errors import BodyGroupError
from modular_ppo.ppo.rollout import (
    Rollout,
    after_step,
    bootstrap_values,
    joined_rollouts,
    rollout_of,
    rollout_step,
)


@struct.dataclass
class Half:
    """One half's device state between two physics steps: the network acted on its
    observations and the env's step is begun (`request`), waiting for the physics. The
    network state travels as its leaves: a list crosses into a jitted call in C++, while
    an `nnx.State` is flattened in Python at every call."""

    network: list[jax.Array]
    env_state: State
    recurrent: NetState
    out: StepOutput
    request: StepRequest
    host_request: jax.Array
    """What the host's physics reads, one row per env (`CpuPhysics.host_request`)."""


def part_stream(network_state: nnx.State, part: int) -> nnx.State:
    """The network state part `part` of the rollout samples with: `network_state` itself
    for part 0 (half A), else every random key folded with `part` (their counters advance
    with half A's, so the streams never meet). Keys with a leading seed axis are folded
    each alike."""
    if part == 0:
        return network_state
    keys, rest = nnx.split_state(network_state, nnx.RngKey, ...)
    fold = jnp.vectorize(lambda key: jax.random.fold_in(key, part), signature="()->()")
    return nnx.merge_state(jax.tree.map(fold, keys), rest)


def cpu_physics(env: ModularEnvProtocol) -> CpuPhysics:
    """The env's C simulator; BodyGroupError, naming the fix, for an env of another."""
    physics = getattr(env, "physics", None)
    if not isinstance(physics, CpuPhysics):
        raise BodyGroupError(
            f"the pipelined rollout (--backend cpu-pipelined) steps MuJoCo's C simulator "
            f"on the host, but this env ({type(env).__name__}) simulates with "
            f"{type(physics).__name__}: build it with make_env(body, config, \"cpu\"), or "
            "use --backend cpu / mjx.")
    return physics


@dataclasses.dataclass(frozen=True)
class DeviceSteps:
    """The device's parts of the loop for one env and network, jitted with both closed
    over: a call hashes no static argument (an `nnx.GraphDef`'s hash alone took 3 ms)."""

    act: Callable[..., Half]
    """(network leaves, env state, recurrent) -> Half: the network's step on the half's
    observations and the env's step begun."""
    advance: Callable[..., tuple[Half, dict[str, Any]]]
    """(half, host result) -> (next Half, the step's record): the env's step ended on
    the host's physics (`CpuPhysics.step_on_host`'s result), the next begun."""
    advance_last: Callable[..., tuple[tuple, dict[str, Any], dict[str, jax.Array]]]
    """(half, host result) -> ((network leaves, env state, recurrent), the step's
    record, the value estimates of the states reached): the rollout's last step."""


def _jit(function: Callable, seeded: bool) -> Callable:
    """`function` jitted, vmapped over a leading seed axis of every argument if `seeded`."""
    return jax.jit(jax.vmap(function) if seeded else function)


@functools.lru_cache(maxsize=64)  # one per body of a run: a miss compiles them again
def device_steps(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_tree: jax.tree_util.PyTreeDef,
    seeded: bool = False,
) -> DeviceSteps:
    """`DeviceSteps` of `env` and a network of `graphdef` whose state has `network_tree`;
    seeded: for states with a leading seed axis."""

    physics = cpu_physics(env)

    def state_of(leaves: list[jax.Array]) -> nnx.State:
        return jax.tree.unflatten(network_tree, leaves)

    def act(leaves, env_state, recurrent) -> Half:
        network = nnx.merge(graphdef, state_of(leaves))
        out = network(recurrent, env_state.obs)
        request = jax.vmap(env.begin_step)(env_state, out.output.actions)
        host_request = jax.vmap(physics.host_request)(
            env_state.data, request.ctrl, request.start_qpos, request.start_qvel)
        return Half(jax.tree.leaves(nnx.state(network)), env_state, recurrent, out, request,
                    host_request)

    def finish(half: Half, result):
        def end(state, request, row):
            data, fresh = physics.host_result(row)
            return env.end_step(state, request, data, restart_from(fresh))

        env_state = jax.vmap(end)(half.env_state, half.request, result)
        network = nnx.merge(graphdef, state_of(half.network))
        recurrent, record = after_step(network, half.out, half.env_state, env_state)
        return env_state, recurrent, record

    def advance(half, result):
        env_state, recurrent, record = finish(half, result)
        return act(half.network, env_state, recurrent), record

    def advance_last(half, result):
        env_state, recurrent, record = finish(half, result)
        values = bootstrap_values(graphdef, state_of(half.network), recurrent, env_state)
        return (half.network, env_state, recurrent), record, values

    return DeviceSteps(_jit(act, seeded), _jit(advance, seeded), _jit(advance_last, seeded))


@dataclasses.dataclass(frozen=True)
class ShareSteps:
    """The device share's programs: whole env steps on MJX (`env.device_twin`), the
    network acting first, jitted with the env and network closed over. The last step is
    `step` too, then `values`: a second program holding MJX's step would double the
    share's compile (its critical path on a TPU)."""

    step: Callable[..., tuple[tuple, dict[str, Any]]]
    """(network leaves, env state, recurrent) -> (the same after one step, its record)."""
    values: Callable[..., dict[str, jax.Array]]
    """(network leaves, env state, recurrent) -> the value estimates of that state."""


@functools.lru_cache(maxsize=64)
def share_steps(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_tree: jax.tree_util.PyTreeDef,
    seeded: bool = False,
) -> ShareSteps:
    """`ShareSteps` of `env`'s device twin and a network of `graphdef` (seeded: as
    `device_steps`)."""
    twin = device_twin(env)

    def step(leaves, env_state, recurrent):
        (network_state, env_state, recurrent), record = rollout_step(
            twin, graphdef, jax.tree.unflatten(network_tree, leaves), env_state, recurrent)
        return (jax.tree.leaves(network_state), env_state, recurrent), record

    def values(leaves, env_state, recurrent):
        return bootstrap_values(graphdef, jax.tree.unflatten(network_tree, leaves),
                                recurrent, env_state)

    return ShareSteps(_jit(step, seeded), _jit(values, seeded))


def _share_label(label: str) -> str:
    return f"{label} share"


def part_sizes(n_envs: int, device_share: float = 0.0) -> tuple[int, ...]:
    """The rollout's parts: the host's halves A and B, then (with `device_share` > 0) the
    device's shares C and D, together about `device_share` of the environments, in whole
    pairs. BodyGroupError where a part would be empty."""
    device = 2 * round(n_envs * device_share / 2)
    host = n_envs - device
    sizes = (host // 2, host - host // 2) + ((device // 2,) * 2 if device else ())
    if min(sizes) < 1 or (device_share > 0 and not device):
        parts = "two halves" + (" and the device's two shares" if device_share else "")
        raise BodyGroupError(
            f"the pipelined rollout splits {n_envs} environments into the host's {parts} "
            f"(--device-share {device_share}): some part gets none. Give more environments "
            "(--ppo.n-envs), or a --device-share that leaves every part some.")
    return sizes


def _physics(physics: CpuPhysics, half: Half) -> np.ndarray:
    """The host's part of a half-step (run on the physics thread): wait for the half's
    request, step it and make the fresh starts; every seed's rows as one batch. The main
    thread copies the result onto the device when it dispatches the half's next step
    (2.5 ms for 2,048 ant envs on a TPU v5e host: on the physics thread, it delayed the
    next half's physics)."""
    request = np.asarray(half.host_request)
    result = physics.step_on_host(request.reshape(-1, request.shape[-1]))
    return result.reshape(*request.shape[:-1], result.shape[-1])


@functools.partial(jax.jit, static_argnums=(0, 1))
def _split(sizes: tuple[int, ...], seeded: bool, tree: Any) -> tuple[Any, ...]:
    ends, axis = np.cumsum(sizes), int(seeded)
    return tuple(jax.tree.map(lambda x: jax.lax.slice_in_dim(x, end - size, end, axis=axis),
                              tree)
                 for size, end in zip(sizes, ends))


def _joined(finals: tuple, records: tuple, values: tuple) -> tuple[Any, Any, Rollout]:
    """Env and recurrent states of the parts joined, and the rollout of all."""
    rollouts = [rollout_of(jax.tree.map(lambda *xs: jnp.stack(xs), *steps), last)
                for steps, last in zip(records, values)]
    joined = functools.partial(jax.tree.map, lambda *xs: jnp.concatenate(xs))
    return (joined(*(env for _, env, _ in finals)), joined(*(rec for _, _, rec in finals)),
            functools.reduce(joined_rollouts, rollouts))


_JOINED = {seeded: _jit(_joined, seeded) for seeded in (False, True)}
"""`_joined` jitted, for states without and with a leading seed axis."""


def _seeded(env_state: State) -> tuple[int, bool]:
    """The envs per seed, and whether the states carry a leading seed axis."""
    return env_state.done.shape[-1], env_state.done.ndim == 2


@dataclasses.dataclass(frozen=True)
class RolloutPrograms:
    """The device programs of `collect_pipelined` for one body: jitted
    (`jitted_programs`), or compiled ahead for one set of shapes (`compile_rollout`)."""

    split: Callable[..., tuple]
    """(env state, recurrent) -> each part's (env state, recurrent) (`part_sizes`)."""
    halves: tuple[DeviceSteps, DeviceSteps]
    shares: tuple[ShareSteps, ...]
    """The device shares' programs: none, or two."""
    joined: Callable[..., tuple]
    """`_joined`."""


def jitted_programs(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_state: nnx.State,
    env_state: State, device_share: float = 0.0,
) -> RolloutPrograms:
    """`RolloutPrograms` jitted, compiled at their first call for the shapes they meet."""
    n_envs, seeded = _seeded(env_state)
    sizes = part_sizes(n_envs, device_share)
    tree = jax.tree.structure(network_state)
    steps = device_steps(env, graphdef, tree, seeded)
    shares = (share_steps(env, graphdef, tree, seeded),) * (len(sizes) - 2)
    return RolloutPrograms(functools.partial(_split, sizes, seeded), (steps, steps), shares,
                           _JOINED[seeded])


def compile_rollout(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_state: nnx.State,
    env_state: State, recurrent: NetState, length: int, ahead: CompileAhead,
    device_share: float = 0.0, label: str = "",
) -> tuple[Callable[[], RolloutPrograms], tuple]:
    """The programs of `collect_pipelined` for these shapes, submitted to `ahead`: a
    function returning them compiled (waiting for their compiles), and the shapes of
    `collect_pipelined`'s results. label: the body's among the run's (`CompileAhead`)."""
    physics = cpu_physics(env)
    n_envs, seeded = _seeded(env_state)
    sizes = part_sizes(n_envs, device_share)
    seeds = env_state.done.shape[:-1]  # (n_seeds,) or ()
    network_tree = jax.tree.structure(network_state)
    steps = device_steps(env, graphdef, network_tree, seeded)
    leaves = jax.tree.leaves(network_state)
    split, parts = ahead.submit(_split, sizes, seeded, (env_state, recurrent), n_static=2,
                                label=f"{label} {sizes}{' seeded' if seeded else ''}")
    halves, shares, outputs = [], [], {}
    # the shares' MJX step first: its trace and compile are the critical path
    for k in sorted(range(len(parts)), key=lambda k: k < 2):
        part_env, part_recurrent = parts[k]
        if k < 2:
            act, half = ahead.submit(steps.act, leaves, part_env, part_recurrent, label=label)
            result = jax.ShapeDtypeStruct((*seeds, sizes[k], physics.result_width),
                                          jnp.float32)
            advance, (_, record) = ahead.submit(steps.advance, half, result, label=label)
            last, (final, _, value) = ahead.submit(steps.advance_last, half, result,
                                                   label=label)
            halves.append((act, advance, last))
        else:
            shared = share_steps(env, graphdef, network_tree, seeded)
            step, (final, record) = ahead.submit(shared.step, leaves, part_env,
                                                 part_recurrent, label=_share_label(label))
            values_of, value = ahead.submit(shared.values, *final, label=_share_label(label))
            shares.append((step, values_of))
        outputs[k] = final, [record] * length, value
    finals, records, values = zip(*(outputs[k] for k in range(len(parts))))
    joined, (env_out, recurrent_out, rollout) = ahead.submit(
        _JOINED[seeded], finals, tuple(records), values, label=label)

    def compiled() -> RolloutPrograms:
        return RolloutPrograms(
            split.result(),
            tuple(DeviceSteps(*(future.result() for future in half)) for half in halves),
            tuple(ShareSteps(*(future.result() for future in share)) for share in shares),
            joined.result())

    network_out = jax.tree.unflatten(network_tree, finals[0][0])
    return compiled, (network_out, env_out, recurrent_out, rollout)


def collect_pipelined(
    env: ModularEnvProtocol, graphdef: nnx.GraphDef, network_state: nnx.State,
    env_state: State, recurrent: NetState, length: int,
    programs: RolloutPrograms | None = None, device_share: float = 0.0,
) -> tuple[nnx.State, State, NetState, Rollout]:
    """`collect_rollout` of a CPU-backend env with the host's physics and the device's
    work overlapped (module docstring): the network state after the rollout (half A's:
    its RNG counters advanced), env and recurrent states, and the rollout of all
    environments, in the order of `part_sizes(n_envs, device_share)`'s parts.
    programs: compiled for these shapes and share (`compile_rollout`); None: jitted."""
    physics = cpu_physics(env)
    if programs is None:
        programs = jitted_programs(env, graphdef, network_state, env_state, device_share)
    network_tree = jax.tree.structure(network_state)
    parts = programs.split((env_state, recurrent))
    leaves = [jax.tree.leaves(part_stream(network_state, k)) for k in range(len(parts))]
    halves = [steps.act(leaves[k], *parts[k]) for k, steps in enumerate(programs.halves)]
    shares = [(leaves[k], *parts[k]) for k in range(2, len(parts))]
    for half in halves:
        half.host_request.copy_to_host_async()
    records: tuple[list, ...] = tuple([] for _ in parts)
    finals, values = [None] * len(parts), [None] * len(parts)
    order = [(t, i) for t in range(length) for i in (0, 1)]
    with ThreadPoolExecutor(1, thread_name_prefix="mujoco") as pool:
        pending = pool.submit(_physics, physics, halves[0])
        for k, (t, i) in enumerate(order):
            result = pending.result()
            if k + 1 < len(order):  # the other half's physics runs while this one dispatches
                pending = pool.submit(_physics, physics, halves[order[k + 1][1]])
            steps = programs.halves[i]
            if t < length - 1:
                halves[i], record = steps.advance(halves[i], result)
                halves[i].host_request.copy_to_host_async()
            else:
                finals[i], record, values[i] = steps.advance_last(halves[i], result)
            records[i].append(record)
            if shares:  # queued on the device behind the half's step, whose request goes first
                shares[i], record = programs.shares[i].step(*shares[i])
                records[2 + i].append(record)
    for i, share in enumerate(shares):
        finals[2 + i], values[2 + i] = share, programs.shares[i].values(*share)
    env_state, recurrent, rollout = programs.joined(tuple(finals), tuple(records), tuple(values))
    return jax.tree.unflatten(network_tree, finals[0][0]), env_state, recurrent, rollout
