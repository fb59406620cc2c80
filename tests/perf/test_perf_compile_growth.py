"""benchmarks/compile_growth.py: its counts are the programs' own (nested jaxprs included),
and a run on the tiny body stages every program a run compiles and writes them as JSON.

What the training step and the evaluation compile grows linearly in a body's module count,
never faster: each module of the same kind adds the same traced equations (its policy and
value, its GAE, loss and metrics), so nothing in them is quadratic in the modules (a
per-module loop over all modules, say). How many seconds XLA then takes is the script's
to measure, not a test's.
"""

import json

import compile_growth
import jax
import jax.numpy as jnp
import pytest
from tiny_body import tiny_xml

from modular_ppo.ppo import EvalConfig
from modular_ppo.ppo.evaluate import run_episodes
from modular_ppo.ppo.step import train_step

GROWING = ("centipede-4", "centipede-6", "centipede-8")
"""6, 9 and 12 modules: each body adds two legs and a torso segment to the one before."""
STACK_SLACK = 4
"""Equations the training step may add beyond the module before's, for its stacks."""


def _scanned(x):
    return jax.lax.scan(lambda c, _: (jnp.sin(c) * 2.0, None), x, length=3)[0] + 1.0


def test_equations_count_the_scanned_body_and_the_program_its_operations():
    traced = jax.jit(_scanned).trace(jnp.ones(4))
    # scan (1) holding sin and mul (2), then add (1).
    assert compile_growth.count_equations(traced.jaxpr) == 4
    lowered = traced.lower()
    ops = compile_growth.count_stablehlo_ops(lowered.as_text())
    assert ops >= 4  # sine, multiply and add at least, besides the loop's own operations
    assert compile_growth.count_fusions(lowered.compile().as_text()) >= 1


def test_equations_by_file_name_the_file_that_traced_them():
    traced = jax.jit(_scanned).trace(jnp.ones(4))
    by_file = compile_growth.equations_by_file(traced.jaxpr)
    (name, count), = by_file.items()  # _scanned, above: all four from this file
    assert name.endswith("tests/perf/test_perf_compile_growth.py") and count == 4


def test_growth_by_file_is_per_added_module_from_the_first_body_to_the_last():
    def body(name, modules, by_file):
        return {"body": name, "modules": modules,
                "programs": {"train_step": {"equations_by_file": by_file}}}

    results = {"bodies": [body("a", 2, {"x.py": 10, "y.py": 5}),
                          body("b", 4, {"x.py": 30, "y.py": 5}),
                          body("c", 6, {"x.py": 50, "y.py": 9, "z.py": 4})]}
    table = compile_growth.growth_by_file(results).splitlines()
    assert table[0] == "train_step: equations added per module, a -> c (12 in all):"
    rows = [line.split(" | ") for line in table[4:]]
    assert [(r[0].strip("| "), r[1]) for r in rows] == [("x.py", "10"), ("y.py", "1"),
                                                       ("z.py", "1")]
    assert compile_growth.growth_by_file({"bodies": results["bodies"][:1]}) == ""


def test_a_tiny_body_stages_reset_training_step_and_evaluation(tmp_path):
    body = tmp_path / "tiny.xml"
    body.write_text(tiny_xml())
    out = tmp_path / "growth.json"
    results = compile_growth.main(["--bodies", str(body), str(body), "--n-envs", "4",
                                   "--budget-s", "0", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(results))
    (measured,) = results["bodies"]  # the budget (0 s) was spent once the first was done
    assert results["skipped"] == [str(body)] and results["n_envs"] == 4
    assert measured["modules"] == 2
    assert set(measured["programs"]) == {"reset", "train_step", "evaluate"}
    for program in measured["programs"].values():
        assert program["compile_s"] > 0 and program["equations"] > 0
        assert program["stablehlo_ops"] > 0 and program["fusions"] > 0
    train, evaluate = measured["programs"]["train_step"], measured["programs"]["evaluate"]
    assert train["equations"] > evaluate["equations"]  # updates besides a rollout
    table = compile_growth.markdown(results).splitlines()
    assert len(table) == 2 + 3 and table[3].split(" | ")[3] == "train_step"
    reset_only = compile_growth.main(["--bodies", str(body), "--n-envs", "4", "--programs",
                                      "reset", "--out", str(out)])
    assert list(reset_only["bodies"][0]["programs"]) == ["reset"]
    assert compile_growth.report([out]).splitlines()[4].split(" | ")[3] == "reset"


def equations(body: str, arch: str) -> tuple[int, int, int]:
    """Modules, and the traced equations of the training step and of the evaluation."""
    config = compile_growth.run_config(body, "cpu", arch, n_envs=4)
    run = compile_growth.build_run(config)
    group = run.groups[0]
    step = train_step.trace(run.groups, config.ppo, run.state)
    evaluation = run_episodes.trace(group.env, group.graphdef, EvalConfig(n_envs=2),
                                    run.state.network_state(group.name), jax.random.key(0))
    return (len(group.env.obs_sizes), compile_growth.count_equations(step.jaxpr),
            compile_growth.count_equations(evaluation.jaxpr))


@pytest.mark.parametrize("arch", ["separate", "shared"])
def test_each_module_of_the_same_kind_adds_the_same_equations(arch):
    (m1, step1, eval1), (m2, step2, eval2), (m3, step3, eval3) = (
        equations(body, arch) for body in GROWING)
    assert m2 - m1 == m3 - m2 == 3
    # The optimizer works per stack of same-shaped parameters: a stack of one array traces
    # a little shorter than a stack of several, so the step may differ by a few equations.
    assert 0 < step3 - step2 <= step2 - step1 + STACK_SLACK
    assert 0 < eval3 - eval2 <= eval2 - eval1
