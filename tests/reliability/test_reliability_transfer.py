"""Transfer from the CLI. Fine-tuning with `train --init-from RUN_DIR`: a new run on a body
the source run never trained on starts from the source's parameters (its network
settings), a fresh optimizer (or the source's, `--init-optimizer source`) and normalizer
statistics for the new body; runs whose parameters cannot fit are refused. `--held-out BODY`: evaluated zero-shot at every
evaluation, never trained on."""

import dataclasses
import json

import jax
import numpy as np
import pytest
from flax import nnx
from reliability_tools import TINY, TINY_ACTUATORS, cli_main, plain, tiny_xml

from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, observation_layout
from modular_ppo.networks import NetworkConfig, make_network
from modular_ppo.ppo import EvalConfig, make_evaluator
from modular_ppo.runs.build import build_run, restore_run
from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import config_to_json, load_run_config
from modular_ppo.runs.errors import RunConfigError
from modular_ppo.runs.held_out import evaluator_with_held_out
from modular_ppo.runs.init_from import start_from
from modular_ppo.runs.metrics_log import to_floats
from modular_ppo.runs.source_settings import with_source_settings
from modular_ppo.runs.transfer import matching_modules, policy_on_body


@pytest.fixture(scope="module")
def third_body(tmp_path_factory):
    path = tmp_path_factory.mktemp("bodies") / "tiny-three.xml"
    path.write_text(tiny_xml(name="tiny-three", actuators=TINY_ACTUATORS.replace(
        'gear="10"', 'gear="7"')))
    return path


@pytest.fixture(scope="module")
def fine_tuned(compile_cache, straight_runs, third_body, runs_root):
    source = straight_runs("two bodies")  # shared network on tiny and tiny-two
    code, out = cli_main("train", "--body", third_body, *TINY, "--backend", "cpu",
                         "--init-from", source, "--ppo.total-steps", 16,
                         "--runs-root", runs_root, "--run-name", "fine-tuned")
    assert code == 0, out
    return source, runs_root / "tiny-three" / "fine-tuned", plain(out)


def test_the_new_run_takes_the_source_network_and_says_so(fine_tuned):
    source, run_dir, out = fine_tuned
    assert f"starting from the parameters of {source}" in out
    record = json.loads((run_dir / "config.json").read_text())
    assert record["config"]["network"] == json.loads(
        (source / "config.json").read_text())["config"]["network"]
    assert record["config"]["init_from"] == str(source)


def test_it_starts_from_the_source_parameters_with_a_fresh_optimizer(fine_tuned):
    source, run_dir, _ = fine_tuned
    config = dataclasses.replace(load_run_config(run_dir), resume=None)
    started = start_from(build_run(config), source)
    trained, _ = restore_run(source)
    for got, want in zip(jax.tree.leaves(started.state.params),
                         jax.tree.leaves(trained.state.params), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    counts = [int(np.asarray(leaf)) for path, leaf in
              jax.tree_util.tree_flatten_with_path(started.state.opt_state)[0]
              if "count" in jax.tree_util.keystr(path)]
    assert counts and all(count == 0 for count in counts)
    (group,) = started.groups
    normalizer = nnx.merge(group.graphdef, started.state.network_state(group.name)).normalizer
    normalizer_counts = [float(stats.count[...]) for stats in normalizer.statistics.values()]
    assert normalizer_counts and min(normalizer_counts) > 0  # the source's, pooled


def test_init_optimizer_source_continues_the_source_optimizer(fine_tuned):
    """`--init-optimizer source`: Adam's moments and step count come from the source's
    checkpoint, so the first update is sized as the source's last ones were."""
    source, run_dir, _ = fine_tuned
    config = dataclasses.replace(load_run_config(run_dir), resume=None, init_optimizer="source")
    started = start_from(build_run(config), source)
    trained, _ = restore_run(source)
    got, want = (jax.tree_util.tree_flatten_with_path(state.opt_state)[0]
                 for state in (started.state, trained.state))
    assert [path for path, _ in got] == [path for path, _ in want]
    for (path, leaf), (_, expected) in zip(got, want, strict=True):
        np.testing.assert_array_equal(np.asarray(leaf), np.asarray(expected),
                                      err_msg=jax.tree_util.keystr(path))
    counts = [int(np.asarray(leaf)) for path, leaf in got if "count" in jax.tree_util.keystr(path)]
    assert counts and min(counts) > 0


def test_init_optimizer_source_needs_the_source_optimizer(straight_runs, third_body, runs_root):
    """An optimizer of another structure (here no gradient clipping, where the source clips)
    cannot take the source's state: exit 2, the flags and the fix named, nothing written."""
    source = straight_runs("two bodies")
    code, out = cli_main("train", "--body", third_body, *TINY, "--backend", "cpu",
                         "--init-from", source, "--init-optimizer", "source",
                         "--ppo.gradient-clipping", "None", "--runs-root", runs_root,
                         "--run-name", "other-optimizer")
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    assert (f"--init-from {source} --init-optimizer source: that run's optimizer "
            "(--ppo.gradient-clipping 1.0") in out and "--init-optimizer fresh" in out, out
    assert not (runs_root / "tiny-three" / "other-optimizer").exists()


def test_the_new_run_observes_its_bodies_as_the_source_did(tmp_path):
    """What the inputs mean (body frame, hops, features) comes with the parameters; the task
    and episode stay the new run's. A flag that contradicts the source is refused."""
    source_config = TrainRunConfig(
        body="centipede-3..7", network=NetworkConfig(arch="shared"),
        env=EnvConfig(body_frame="parent", neighbor_hops=2, previous_action=True,
                      episode_length=500))
    (tmp_path / "config.json").write_text(json.dumps({"config": config_to_json(source_config)}))
    new = with_source_settings(TrainRunConfig(
        body="centipede-8", init_from=tmp_path, env=EnvConfig(episode_length=300)))
    assert new.network == source_config.network
    assert (new.env.body_frame, new.env.neighbor_hops, new.env.previous_action) == (
        "parent", 2, True)
    assert new.env.episode_length == 300
    same = with_source_settings(TrainRunConfig(
        body="centipede-8", init_from=tmp_path, env=EnvConfig(neighbor_hops=2)))
    assert dataclasses.replace(same.env, episode_length=300) == new.env
    with pytest.raises(RunConfigError, match="--env.neighbor-hops. Drop them"):
        with_source_settings(TrainRunConfig(body="centipede-8", init_from=tmp_path,
                                            env=EnvConfig(neighbor_hops=3)))
    with pytest.raises(RunConfigError, match="network settings differ from it: --arch"):
        with_source_settings(TrainRunConfig(body="centipede-8", init_from=tmp_path,
                                            network=NetworkConfig(arch="graph")))


def test_parameters_that_cannot_fit_are_refused(straight_runs, runs_root):
    """--arch separate keeps weights per module name: the hopper's modules are not the
    tiny body's."""
    code, out = cli_main("train", "--body", "hopper-modular", *TINY,
                         "--init-from", straight_runs("cpu"), "--runs-root", runs_root,
                         "--run-name", "refused")
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    assert "do not fit a network for hopper-modular" in out and "--arch separate" in out
    assert not (runs_root / "hopper-modular" / "refused").exists()


def test_a_body_larger_than_the_source_network_is_refused(straight_runs, runs_root):
    """The source's max sizes fix its parameters' shapes: a body with more modules than
    they hold names the source run, its size and the size a source needs."""
    source = straight_runs("two bodies")  # max_modules 4: twice the tiny bodies' 2
    code, out = cli_main("train", "--body", "ant-modular", *TINY, "--backend", "cpu",
                         "--init-from", source, "--runs-root", runs_root,
                         "--run-name", "too-large")
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    assert (f"--init-from {source}: that run's network was built with --max-modules 4, but "
            "body 'ant-modular' has 5 modules. Train a run with --max-modules 5 or more") in out
    assert not (runs_root / "ant-modular").exists()


@pytest.mark.parametrize("flags, expected", [
    (["--init-from", "{tmp}/nothing"], ["{tmp}/nothing", "not a run directory"]),
    (["--init-from", "{tmp}/a", "--resume", "{tmp}/b"], ["--init-from", "--resume",
                                                        "Give one of them"]),
    (["--init-optimizer", "source"], ["--init-optimizer source without --init-from",
                                      "Give --init-from RUN_DIR, or drop --init-optimizer"]),
])
def test_bad_init_from(flags, expected, tmp_path, tiny_body):
    code, out = cli_main("train", "--body", tiny_body, *TINY,
                         *[f.format(tmp=tmp_path) for f in flags])
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    for fragment in expected:
        assert fragment.format(tmp=tmp_path) in out, (fragment, out)


@pytest.fixture(scope="module")
def with_held_out(compile_cache, tiny_body, third_body, runs_root):
    code, out = cli_main("train", "--body", tiny_body, *TINY, "--backend", "cpu",
                         "--arch", "shared", "--held-out", third_body,
                         "--ppo.total-steps", 32, "--eval-every-steps", 16,
                         "--runs-root", runs_root, "--run-name", "held-out")
    assert code == 0, out
    return runs_root / "tiny" / "held-out"


def test_held_out_bodies_are_evaluated_at_every_evaluation(with_held_out):
    rows = [json.loads(line) for line in
            (with_held_out / "metrics.jsonl").read_text().splitlines()]
    evaluations = [row for row in rows if "eval/team_return" in row]
    assert [row["step"] for row in evaluations] == [16, 32, 32]  # every 16 steps, final
    for row in evaluations:
        held_out = {k for k in row if k.endswith("/tiny-three")}
        assert {"eval/team_return/tiny-three", "eval/length/tiny-three"} <= held_out, row
        assert np.isfinite(row["eval/team_return/tiny-three"])
    final = json.loads((with_held_out / "eval.json").read_text())
    assert "eval/team_return/tiny-three" in final and "eval/team_return" in final
    losses = [k for row in rows for k in row if k.startswith("losses/critic/")]
    assert losses and not any("tiny-three" in k for k in losses)  # never trained on


def test_trained_body_statistics_pool_the_modules_of_the_same_name(straight_runs, third_body):
    """`eval --new-body-statistics trained-bodies`: a new body's normalizer is the trained bodies'
    statistics of its modules' namesakes pooled (the tiny bodies share module names and
    observation layouts), no warm-up."""
    source = straight_runs("two bodies")
    run, _ = restore_run(source)
    policy = policy_on_body(run, str(source), str(third_body), 4096, jax.random.key(0),
                            "trained-bodies")
    got = nnx.merge(policy.graphdef, policy.network_state).normalizer.statistics
    trained = [nnx.merge(g.graphdef, run.state.network_state(g.name)).normalizer.statistics
               for g in run.groups]
    assert len(trained) == 2 and set(got) == set(trained[0])
    for module, stats in got.items():
        counts = [float(t[module].count[...]) for t in trained]
        means = [np.asarray(t[module].mean[...]) for t in trained]
        assert float(stats.count[...]) == sum(counts) > 0
        np.testing.assert_allclose(np.asarray(stats.mean[...]),
                                   np.average(means, axis=0, weights=counts), rtol=1e-5)


def test_modules_match_trained_ones_that_observe_the_same_blocks():
    """Name first, then the name with digits ignored, then any module with the same blocks;
    centipede-8's torso_2 has four neighbors in an order no torso of centipede-4 or -6 has."""
    config = EnvConfig()
    trained = {name: observation_layout(load_body(name), config)
               for name in ("centipede-4", "centipede-6")}
    matches = matching_modules(observation_layout(load_body("centipede-8"), config), trained)
    assert matches["leg_0_left"] == [("centipede-4", "leg_0_left"), ("centipede-6", "leg_0_left")]
    assert matches["leg_2_right"] == [("centipede-6", "leg_2_right")]
    assert matches["leg_3_left"] == [("centipede-4", "leg_1_left"), ("centipede-6", "leg_1_left"),
                                     ("centipede-6", "leg_2_left")]
    assert matches["torso_3"] == [("centipede-6", "torso_2")]  # the last torso
    assert matches["torso_2"] == []


def test_new_body_statistics_reach_fine_tuning_and_held_out_evaluation(
    fine_tuned, straight_runs, third_body
):
    """--new-body-statistics trained-bodies: `--init-from` starts the new body with the
    source's pooled statistics (no warm-up: every module matches), and `--held-out`
    evaluates with the statistics `eval --new-body-statistics trained-bodies` uses."""
    source, run_dir, _ = fine_tuned
    trained, _ = restore_run(source)
    expected = policy_on_body(trained, str(source), str(third_body), 4096, jax.random.key(0),
                              "trained-bodies")
    config = dataclasses.replace(load_run_config(run_dir), resume=None,
                                 new_body_statistics="trained-bodies")
    started = start_from(build_run(config), source)
    (group,) = started.groups
    got = nnx.merge(group.graphdef, started.state.network_state(group.name)).normalizer
    want = nnx.merge(expected.graphdef, expected.network_state).normalizer
    for module, stats in want.statistics.items():
        for name in ("count", "mean", "m2"):
            np.testing.assert_array_equal(np.asarray(getattr(got.statistics[module], name)[...]),
                                          np.asarray(getattr(stats, name)[...]))

    held_out = dataclasses.replace(trained, config=dataclasses.replace(
        trained.config, held_out=(str(third_body),), new_body_statistics="trained-bodies"))
    eval_config = EvalConfig(n_envs=2, episode_length=4)
    key = jax.random.key(5)
    metrics = evaluator_with_held_out(held_out, eval_config)(trained.state, key)
    _, eval_key = jax.random.split(key)
    want = to_floats(make_evaluator(expected.env, expected.graphdef, eval_config)(
        expected.network_state, eval_key))
    name = expected.body.name
    assert metrics[f"episode/team_return/{name}"] == want["episode/team_return"]


def test_warm_up_statistics_come_from_the_warm_up_alone(straight_runs, third_body):
    """`--new-body-statistics warm-up`: 64 warm-up steps (4 rounds of 16 environments, one
    step each) are all each module's statistics have seen; nothing of the trained bodies'."""
    source = straight_runs("two bodies")
    run, _ = restore_run(source)
    policy = policy_on_body(run, str(source), str(third_body), 64, jax.random.key(0), "warm-up")
    statistics = nnx.merge(policy.graphdef, policy.network_state).normalizer.statistics
    assert statistics and {float(s.count[...]) for s in statistics.values()} == {64.0}


def test_eval_output_writes_the_figures_and_never_over_a_file(straight_runs, third_body,
                                                              tmp_path):
    source = straight_runs("two bodies")
    output = tmp_path / "zero-shot.json"
    flags = ["eval", "--run", source, "--body", third_body, "--episodes", 2]
    code, out = cli_main(*flags, "--output", output)
    assert code == 0, out
    record = json.loads(output.read_text())
    assert (record["step"], record["episodes"], record["new_body_statistics"]) == (
        64, 2, "trained-bodies")
    (figures,) = record["results"].values()
    assert np.isfinite(figures["deterministic"]["episode/team_return"])
    assert np.isfinite(figures["stochastic"]["episode/team_return"])

    written = output.read_text()
    code, out = cli_main(*flags, "--output", output)
    assert code == 2 and "the file exists" in plain(out), out
    assert output.read_text() == written
    code, out = cli_main(*flags, "--output", tmp_path / "missing" / "out.json")
    assert code == 2 and "no directory" in plain(out), out
    code, out = cli_main(*flags, "--output", tmp_path)
    assert code == 2 and "is a directory" in plain(out), out


def test_a_single_body_run_records_the_sizes_its_network_has(tiny_body):
    """A shared network trained on one body is sized to that body; the run's config says
    so (max sizes unset build the same network), and with --held-out it gets the headroom
    a run of several bodies gets."""
    config = TrainRunConfig(body=str(tiny_body), backend="cpu",
                            network=NetworkConfig(arch="shared"))
    run = build_run(config)
    network = run.config.network
    assert (network.max_modules, network.max_obs_size, network.max_action_size) == (
        2, max(run.groups[0].env.obs_sizes.values()), 1)
    unset = make_network(run.bodies["tiny"], run.groups[0].env.obs_sizes, config.network,
                         rngs=nnx.Rngs(0))
    recorded = make_network(run.bodies["tiny"], run.groups[0].env.obs_sizes, network,
                            rngs=nnx.Rngs(0))
    for got, want in zip(jax.tree.leaves(nnx.state(recorded, nnx.Param)),
                         jax.tree.leaves(nnx.state(unset, nnx.Param)), strict=True):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    held_out = build_run(dataclasses.replace(config, held_out=("centipede-4",))).config.network
    assert held_out.max_modules == 4 and held_out.max_action_size == 2


def test_a_held_out_body_too_large_is_refused_before_anything_is_written(tiny_body, runs_root):
    code, out = cli_main("train", "--body", tiny_body, *TINY, "--backend", "cpu",
                         "--arch", "shared", "--held-out", "ant-modular",
                         "--runs-root", runs_root, "--run-name", "held-out-too-large")
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    assert ("--held-out cannot act on body 'ant-modular': this run's network is built with "
            "--max-modules 4, but body 'ant-modular' has 5 modules. Give --max-modules 5 or "
            "more.") in out, out
    assert not (runs_root / "tiny" / "held-out-too-large").exists()


def test_eval_of_a_body_the_run_cannot_hold_names_the_size(with_held_out):
    code, out = cli_main("eval", "--run", with_held_out, "--body", "ant-modular",
                         "--episodes", 2)
    out = plain(out)
    assert code == 2 and "Traceback" not in out, out
    assert "--max-modules 4, but body 'ant-modular' has 5 modules" in out, out


def test_fine_tuning_on_a_body_the_source_trained_on_keeps_its_statistics(
        straight_runs, tiny_body):
    source = straight_runs("two bodies")
    trained, _ = restore_run(source)
    config = with_source_settings(TrainRunConfig(body=str(tiny_body), backend="cpu",
                                                 init_from=source))
    started = start_from(build_run(config), source)
    (group,) = started.groups
    got = nnx.merge(group.graphdef, started.state.network_state(group.name)).normalizer
    want = nnx.merge(group.graphdef, trained.state.network_state("tiny")).normalizer
    for module, stats in want.statistics.items():
        for name in ("count", "mean", "m2"):
            np.testing.assert_array_equal(np.asarray(getattr(got.statistics[module], name)[...]),
                                          np.asarray(getattr(stats, name)[...]))


def test_a_warm_up_shorter_than_one_round_still_warms_up(straight_runs, third_body):
    source = straight_runs("two bodies")
    run, _ = restore_run(source)
    policy = policy_on_body(run, str(source), str(third_body), 63, jax.random.key(0), "warm-up")
    statistics = nnx.merge(policy.graphdef, policy.network_state).normalizer.statistics
    assert {float(s.count[...]) for s in statistics.values()} == {64.0}


def test_a_fine_tuned_run_may_set_its_own_entropy_weight(tmp_path):
    source = TrainRunConfig(body="centipede-3..7", network=NetworkConfig(arch="graph"))
    (tmp_path / "config.json").write_text(json.dumps({"config": config_to_json(source)}))
    new = with_source_settings(TrainRunConfig(
        body="centipede-8", init_from=tmp_path,
        network=dataclasses.replace(TrainRunConfig().network, entropy_weight=1e-3)))
    assert new.network == dataclasses.replace(source.network, entropy_weight=1e-3)
