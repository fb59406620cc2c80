"""One throughput measurement per case, run in a process of its own (see throughput.py).

Each case returns a dict of figures: "steps_per_s" (environment steps per wall-clock
second at steady state, from the fastest of the timed calls: the one least slowed by
other processes; "median_steps_per_s" from the median call), "steps_per_cpu_s" (per
second of this process's CPU time, all threads, fastest call),
"compile_s", "first_iteration_s" (from building the env to the end of the first call:
what a user waits for), "peak_rss_gib" (added by throughput.py) and the shape it ran at.

    mujoco-batch/<n_envs>[/policy] MuJoCo's C simulator driven from numpy with random
                                   controls, no JAX: the closed-loop ceiling on CPU; with
                                   /policy, controls from a jitted JAX MLP between steps
    mjx-step/<n_envs>[/warp]       vmapped mjx.step x frame_skip, random controls: MJX's
                                   ceiling (its MuJoCo Warp implementation with /warp)
    split-step/<n_envs>/<host_envs>  both engines at once: the C simulator on the host's
                                   threads steps host_envs envs while MJX steps the rest
    env-step/<backend>/<n_envs>    our env (obs, rewards, auto-reset), random actions,
                                   jit(scan(vmap(env.step)))
    train/<backend>/<shape>[/<arch>]  ppo.train_step with the CLI's default network, or
                                   the architecture named (separate, shared, graph,
                                   attention); shape "default" (PPOConfig()) or "brax"
                                   (Brax's batch shape)
    brax-ppo/<shape>               Brax 0.14.2 PPO on the same MJCF and physics; shape
                                   "brax" (brax_ppo.py's ant shape), "current" (Brax's
                                   current published ant shape) or "smoke" (tiny)
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time
from collections.abc import Callable

BODY = "ant-modular"

BRAX_SHAPE = dict(n_envs=2048, rollout_length=80, n_minibatches=32, n_epochs=4)
"""Brax's MJX ant PPO (2048 envs, batch 1024 x 32 minibatches of unroll 5, 4 epochs) in
PPOConfig terms: 2048 envs x 80 steps = 163,840 env steps per iteration, cut into 32
minibatches of 64 whole 80-step trajectories = 5,120 samples each (Brax: 1,024 x 5),
4 epochs."""

SHAPES: dict[str, dict[str, int]] = {"default": {}, "brax": BRAX_SHAPE}
BRAX_PPO_SHAPES: dict[str, dict[str, int]] = {
    "brax": {},
    "current": dict(num_envs=4096, batch_size=2048),
    "smoke": dict(num_envs=16, batch_size=16, num_minibatches=2, num_updates_per_batch=1),
}
"""Arguments of `brax_ppo_settings`: "brax" the ant shape benchmarks/brax_ppo.py publishes
(2,048 envs, batch 1,024), "current" Brax's current published ant shape (4,096 envs,
batch 2,048; unroll 5, 32 minibatches, 4 epochs as before), "smoke" a tiny one to check
the case runs."""


def _quiet_imports() -> None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import mujoco.mjx  # noqa: F401  (prints a notice about the optional warp backend)


class Clock:
    """Wall and process-CPU seconds of repeated calls."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def time(self, call: Callable[[], object], repeats: int) -> Clock:
        for _ in range(repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            call()
            self.wall.append(time.perf_counter() - wall)
            self.cpu.append(time.process_time() - cpu)
        return self

    def rates(self, steps_per_call: int) -> dict[str, float | None]:
        """From the fastest call (the one least slowed by other processes) and the median,
        timed with `perf_counter`. The process clock moves in 10 ms steps on some hosts
        (the TPU machine's), where a short call's CPU seconds read 0: steps_per_cpu_s is
        then None, not a division by zero."""
        cpu_s = min(self.cpu)
        return dict(steps_per_s=steps_per_call / min(self.wall),
                    median_steps_per_s=steps_per_call / statistics.median(self.wall),
                    steps_per_cpu_s=steps_per_call / cpu_s if cpu_s > 0 else None,
                    call_s=min(self.wall), call_cpu_s=cpu_s)


def mujoco_batch(n_envs: int, controls: str = "random", repeats: int = 10,
                 round_s: float = 0.25) -> dict:
    """Closed loop from numpy: new controls, then frame_skip substeps, per control step;
    timed in rounds of about `round_s` seconds (one control step of few envs takes
    milliseconds, too short to time alone on a busy machine).

    controls "random": uniform in [-1, 1]. "policy": from a jitted JAX MLP (2 x 256, tanh)
    of each environment's qpos and qvel, called between control steps with numpy in and
    out: MuJoCo's own rollout with a policy in the loop, the figure issue 15 compares
    training with (no observation, reward or reset code; no update)."""
    import numpy as np
    from mujoco import batch as mujoco_batch

    from modular_ppo.body import load_body

    started = time.perf_counter()
    body = load_body(BODY)
    sim = mujoco_batch.Batch(body.model, nsim=n_envs)
    sim.reset()
    sim.bind("qpos")[:] = body.init_qpos
    qpos, qvel, ctrl = sim.bind("qpos"), sim.bind("qvel"), sim.bind("ctrl")
    rng = np.random.default_rng(0)
    if controls == "policy":
        policy = _mlp_policy(qpos.shape[-1] + qvel.shape[-1], ctrl.shape[-1])

        def new_controls() -> np.ndarray:
            return np.asarray(policy(np.concatenate([qpos, qvel], axis=-1, dtype=np.float32)))
    elif controls == "random":
        def new_controls() -> np.ndarray:
            return rng.uniform(-1.0, 1.0, ctrl.shape)
    else:
        raise ValueError(f"mujoco-batch controls {controls!r}: 'random' or 'policy'.")

    def call() -> None:
        ctrl[:] = new_controls()
        sim.step(nstep=body.frame_skip)

    call()
    first = time.perf_counter() - started
    per_round = max(1, round(round_s / Clock().time(call, 1).wall[0]))

    def round_of_calls() -> None:
        for _ in range(per_round):
            call()

    rates = Clock().time(round_of_calls, repeats).rates(n_envs * per_round)
    return dict(n_envs=n_envs, **rates, compile_s=0.0, first_iteration_s=first,
                threads=sim.nthread)


def _mlp_policy(n_inputs: int, n_outputs: int) -> Callable:
    """A jitted tanh MLP (2 x 256) from [batch, n_inputs] to controls in [-1, 1]."""
    import jax
    import jax.numpy as jnp

    keys = jax.random.split(jax.random.key(0), 3)
    sizes = [n_inputs, 256, 256, n_outputs]
    weights = [jax.random.normal(k, (a, b)) / jnp.sqrt(a)
               for k, a, b in zip(keys, sizes[:-1], sizes[1:])]

    @jax.jit
    def policy(x):
        for w in weights:
            x = jnp.tanh(x @ w)
        return x

    return policy


def _timed_together(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, Clock]:
    """Time the calls in turn, `repeats` rounds: figures that are compared see the same load."""
    clocks = {name: Clock() for name in calls}
    for _ in range(repeats):
        for name, call in calls.items():
            clocks[name].time(call, 1)
    return clocks


def _compiled_scan(step: Callable, state, steps: int):
    """(compiled run(state, key) -> state: a scan of `steps` step(state, key)), compile s."""
    import jax

    def run(state, key):
        return jax.lax.scan(lambda s, k: (step(s, k), None), state,
                            jax.random.split(key, steps))[0]

    started = time.perf_counter()
    compiled = jax.jit(run, donate_argnums=0).lower(state, jax.random.key(1)).compile()
    return compiled, time.perf_counter() - started


def _chained(compiled, state) -> Callable[[], None]:
    """A call that advances `state` with `compiled` and waits for the result."""
    import jax

    holder = {"state": state, "key": jax.random.key(2)}

    def call() -> None:
        holder["key"], key = jax.random.split(holder["key"])
        holder["state"] = jax.block_until_ready(compiled(holder["state"], key))

    return call


def _random_actions_step(env, n_envs: int) -> Callable:
    import jax

    def step(state, key):
        keys = dict(zip(env.action_sizes, jax.random.split(key, len(env.action_sizes))))
        action = {m: jax.random.uniform(keys[m], (n_envs, k), minval=-1.0, maxval=1.0)
                  for m, k in env.action_sizes.items()}
        return jax.vmap(env.step)(state, action)

    return step


def _mjx_program(n_envs: int, impl: str, steps: int):
    """(compiled run(data, key) -> data: `steps` control steps of vmap(mjx.step) x frame
    skip with uniform random controls, the first data, compile seconds)."""
    _quiet_imports()
    import jax
    from mujoco import mjx

    from modular_ppo.body import load_body
    from modular_ppo.env.warp_physics import put_warp_model

    body = load_body(BODY)
    if impl == "warp":
        model, blank = put_warp_model(body, n_envs)
    else:
        model = mjx.put_model(body.model, impl=impl)
        blank = mjx.make_data(model)
    qpos = jax.numpy.asarray(body.init_qpos)
    data = jax.jit(jax.vmap(lambda _: mjx.forward(model, blank.replace(qpos=qpos))))(
        jax.numpy.arange(n_envs))

    def step(data, key):
        ctrl = jax.random.uniform(key, (n_envs, body.model.nu), minval=-1.0, maxval=1.0)
        data = data.replace(ctrl=ctrl)
        return jax.lax.fori_loop(0, body.frame_skip,
                                 lambda _, d: jax.vmap(lambda x: mjx.step(model, x))(d), data)

    compiled, compile_s = _compiled_scan(step, data, steps)
    return compiled, data, compile_s


def mjx_step(n_envs: int, impl: str = "jax", steps: int = 20, repeats: int = 5) -> dict:
    """vmap(mjx.step) frame_skip times per control step, uniform random controls, on MJX's
    `impl`ementation: "jax", or "warp" (MuJoCo Warp, set up as `--backend warp` does)."""
    started = time.perf_counter()
    compiled, data, compile_s = _mjx_program(n_envs, impl, steps)
    call = _chained(compiled, data)
    call()
    first = time.perf_counter() - started
    rates = Clock().time(call, repeats).rates(n_envs * steps)
    return dict(n_envs=n_envs, impl=impl, **rates, compile_s=compile_s, first_iteration_s=first,
                **program_memory(compiled))


def split_step(n_envs: int, host_envs: int, steps: int = 20, repeats: int = 5) -> dict:
    """Both engines at once, raw physics (a draft of issue 42's split): each call hands the
    device `steps` control steps of vmap(mjx.step) on n_envs - host_envs environments (JAX
    returns at once), steps MuJoCo's C simulator on the host's threads for the same control
    steps on host_envs environments meanwhile, then waits for the device. Random controls on
    both. Env steps/s of the two together; each engine's own seconds per call beside them,
    timed alone in the same process, say how much the overlap hides."""
    import jax
    import numpy as np
    from mujoco import batch as mujoco_batch

    from modular_ppo.body import load_body

    if not 0 < host_envs < n_envs:
        raise ValueError(f"split-step/{n_envs}/{host_envs}: the host's share must be between 0 "
                         f"and {n_envs} envs.")
    started = time.perf_counter()
    compiled, data, compile_s = _mjx_program(n_envs - host_envs, "jax", steps)
    body = load_body(BODY)
    sim = mujoco_batch.Batch(body.model, nsim=host_envs)
    sim.reset()
    sim.bind("qpos")[:] = body.init_qpos
    ctrl, rng = sim.bind("ctrl"), np.random.default_rng(0)
    device = _chained(compiled, jax.tree.map(jax.numpy.copy, data))  # the program donates data
    holder = {"data": data, "key": jax.random.key(2)}

    def host() -> None:
        for _ in range(steps):
            ctrl[:] = rng.uniform(-1.0, 1.0, ctrl.shape)
            sim.step(nstep=body.frame_skip)

    def both() -> None:
        holder["key"], key = jax.random.split(holder["key"])
        holder["data"] = compiled(holder["data"], key)  # dispatched; runs while the host steps
        host()
        jax.block_until_ready(holder["data"])

    both()
    first = time.perf_counter() - started
    clocks = _timed_together({"both": both, "device": device, "host": host}, repeats)
    return dict(n_envs=n_envs, host_envs=host_envs, **clocks["both"].rates(n_envs * steps),
                device_call_s=min(clocks["device"].wall), host_call_s=min(clocks["host"].wall),
                compile_s=compile_s, first_iteration_s=first, threads=sim.nthread)


def program_memory(compiled) -> dict[str, int | None]:
    """The device memory a compiled program needs (XLA's memory analysis: arguments,
    outputs and temporaries, less what outputs reuse of donated arguments) and the
    device's limit; each None where the backend reports none (the limit on CPU)."""
    import jax

    analysis = compiled.memory_analysis()  # None where the backend gives none
    needed = None if analysis is None else int(
        analysis.argument_size_in_bytes + analysis.output_size_in_bytes
        + analysis.temp_size_in_bytes - analysis.alias_size_in_bytes)
    stats = jax.devices()[0].memory_stats() or {}
    return dict(program_bytes=needed, device_bytes_limit=stats.get("bytes_limit"))


def env_step(backend: str, n_envs: int, steps: int = 20, repeats: int = 5) -> dict:
    """Our env with uniform random actions in [-1, 1]."""
    _quiet_imports()
    import jax

    from modular_ppo.body import load_body
    from modular_ppo.env import EnvConfig
    from modular_ppo.env import make_env

    started = time.perf_counter()
    env = make_env(load_body(BODY), EnvConfig(), backend)
    state = jax.jit(jax.vmap(env.reset))(jax.random.split(jax.random.key(0), n_envs))
    compiled, compile_s = _compiled_scan(_random_actions_step(env, n_envs), state, steps)
    call = _chained(compiled, state)
    call()
    first = time.perf_counter() - started
    rates = Clock().time(call, repeats).rates(n_envs * steps)
    return dict(n_envs=n_envs, **rates, compile_s=compile_s, first_iteration_s=first)


def train(backend: str, shape: str, arch: str = "separate", repeats: int | None = None) -> dict:
    """ppo.train_step with the CLI's default network ("separate" MLPs per module) or the
    architecture `arch`, the rest of its NetworkConfig at the defaults.

    Times, in turn and in this one process: the training iteration; its rollout alone
    (`ppo.collect_rollout`: env steps and policy); and raw stepping of the same env and
    batch with random actions, as many steps as one rollout. So training / raw stepping
    and the rollout / update split are measured under the same load.
    """
    _quiet_imports()
    import jax
    from flax import nnx

    from modular_ppo.body import load_body
    from modular_ppo.env import EnvConfig
    from modular_ppo.env import make_env
    from modular_ppo.networks import NetworkConfig, make_network
    from modular_ppo.ppo import PPOConfig, collect_rollout, new_training_state, train_step

    config = PPOConfig(**SHAPES[shape])
    repeats = repeats or (3 if config.steps_per_iteration > 50_000 else 20)
    started = time.perf_counter()
    body = load_body(BODY)
    env = make_env(body, EnvConfig(), backend)
    network = make_network(body, env.obs_sizes, NetworkConfig(arch=arch),
                           rngs=nnx.Rngs(0))
    groups, state = new_training_state([(env, network)], config, seed=0)
    (group,) = groups
    wall, cpu = time.perf_counter(), time.process_time()
    step = train_step.lower(groups, config, state).compile()
    compile_s, compile_cpu_s = time.perf_counter() - wall, time.process_time() - cpu
    holder = {"state": jax.block_until_ready(step(state)[0])}
    first = time.perf_counter() - started

    def iteration() -> None:
        holder["state"] = jax.block_until_ready(step(holder["state"])[0])

    def own(s):
        return s.groups[group.name]

    rollout = jax.jit(lambda s: collect_rollout(
        env, group.graphdef, s.network_state(), own(s).env_state, own(s).recurrent,
        config.rollout_length)[3])
    rollout = rollout.lower(holder["state"]).compile()
    raw, _ = _compiled_scan(_random_actions_step(env, config.n_envs),
                            own(holder["state"]).env_state, config.rollout_length)
    raw_state = jax.tree.map(jax.numpy.copy, own(holder["state"]).env_state)
    clocks = _timed_together({
        "train": iteration,
        "rollout": lambda: jax.block_until_ready(rollout(holder["state"])),
        "raw": _chained(raw, raw_state),
    }, repeats)
    steps = config.steps_per_iteration
    rates = {name: clock.rates(steps) for name, clock in clocks.items()}
    return dict(arch=arch, n_envs=config.n_envs, rollout_length=config.rollout_length,
                n_minibatches=config.n_minibatches, n_epochs=config.n_epochs,
                **rates["train"], raw_steps_per_s=rates["raw"]["steps_per_s"],
                raw_steps_per_cpu_s=rates["raw"]["steps_per_cpu_s"],
                rollout_s=rates["rollout"]["call_s"], raw_s=rates["raw"]["call_s"],
                rollout_cpu_s=rates["rollout"]["call_cpu_s"],
                raw_cpu_s=rates["raw"]["call_cpu_s"],
                compile_s=compile_s, compile_cpu_s=compile_cpu_s, first_iteration_s=first)


def brax_ppo(shape: dict[str, int], epochs: int = 3) -> dict:
    """Brax's PPO (its own networks: policy 4x32, value 5x256) on bodies/ant-modular.xml.
    One epoch = one training step of Brax's batch shape; the first includes compiling."""
    _quiet_imports()
    from brax.training.agents.ppo import train as brax_train
    from brax_ppo import brax_ppo_settings, install_jax_compatibility, make_env

    install_jax_compatibility()
    settings = brax_ppo_settings(**shape)
    per_epoch = settings["batch_size"] * settings["num_minibatches"] * settings["unroll_length"]
    started = time.perf_counter()
    marks = [(started, time.process_time())]

    def progress(num_steps: int, metrics: dict) -> None:
        marks.append((time.perf_counter(), time.process_time()))

    brax_train.train(environment=make_env(), num_timesteps=epochs * per_epoch,
                     num_evals=epochs + 1, run_evals=False, progress_fn=progress, **settings)
    clock = Clock()
    for (wall0, cpu0), (wall1, cpu1) in zip(marks[1:], marks[2:]):
        clock.wall.append(wall1 - wall0)
        clock.cpu.append(cpu1 - cpu0)
    rates = clock.rates(per_epoch)
    first = marks[1][0] - started
    return dict(n_envs=settings["num_envs"], **rates, compile_s=first - rates["call_s"],
                first_iteration_s=first)


CASES: dict[str, Callable[..., dict]] = {
    "mujoco-batch": lambda n, controls="random": mujoco_batch(int(n), controls),
    "mjx-step": lambda n, impl="jax": mjx_step(int(n), impl),
    "split-step": lambda n, host: split_step(int(n), int(host)),
    "env-step": lambda backend, n: env_step(backend, int(n)),
    "train": train,
    "brax-ppo": lambda shape: brax_ppo(BRAX_PPO_SHAPES[shape]),
}


def run_case(name: str) -> dict:
    """Run the case called `name` (see the module docstring)."""
    kind, *args = name.split("/")
    if kind not in CASES:
        raise ValueError(f"unknown case {name!r}; the kinds are {', '.join(CASES)}.")
    return CASES[kind](*args)
