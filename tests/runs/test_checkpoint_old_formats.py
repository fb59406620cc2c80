"""Run directories written by earlier checkpoint formats still restore and resume.

format1_runs/ holds two runs of the reliability tests' tiny bodies written before one body
and several became one training path (format 1, commit dc7da1c), trained for 32 steps (CPU
backend, the reliability tests' shapes): "tiny" (one body, its single-body TrainingState)
and "tiny+tiny-two" (two bodies, its MultiBodyState). format2_runs/ holds "tiny" trained
the same way before the optimizer state was raveled (format 2, commit 384ff9a), and
format3_runs/ while it was (format 3, commit ca66584)."""

import json
import shutil
from pathlib import Path

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import orbax.checkpoint as ocp
import pytest

from modular_ppo import cli
from modular_ppo.runs.build import restore_run
from modular_ppo.runs.checkpoint import FORMAT, _keys_to_data, structure_id
from modular_ppo.runs.checkpoint_v1 import v1_layouts
from modular_ppo.runs.checkpoint_v2_v3 import v2_layout, v3_layout

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def no_persistent_compile_cache():
    """Compile here without the reliability tests' persistent cache (a session setting that
    outlives them): these runs' programs are their own."""
    enabled = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    yield
    jax.config.update("jax_enable_compilation_cache", enabled)


@pytest.fixture(params=["format1_runs/tiny", "format1_runs/tiny+tiny-two", "format2_runs/tiny",
                        "format3_runs/tiny"])
def old_run(request, tmp_path) -> Path:
    """A copy of the old run dir whose config.json names the bodies where they are now."""
    folder, name = request.param.split("/")
    run_dir = tmp_path / "runs" / name / "old"
    shutil.copytree(HERE / request.param, run_dir)
    record = json.loads((run_dir / "config.json").read_text())
    record["config"]["body"] = ",".join(
        str(HERE / "format1_runs" / f"{body}.xml") for body in name.split("+"))
    record["config"]["runs_root"] = str(tmp_path / "runs")
    (run_dir / "config.json").write_text(json.dumps(record))
    return run_dir


def test_an_old_checkpoint_restores_the_policy_it_evaluated(old_run):
    """The restored parameters and normalizer statistics evaluate exactly as the old run's
    own final evaluation did (same episodes: the run's evaluation key)."""
    run, step = restore_run(old_run)
    assert step == 32 and int(run.state.steps) == 32 and int(run.state.iteration) == 2
    restored = run.evaluator(run.config.eval)(run.state, jax.random.key(run.config.seed + 1))
    saved = json.loads((old_run / "eval.json").read_text())
    expected = {f"episode/{k.removeprefix('eval/')}": v for k, v in saved.items()
                if k.startswith("eval/")}
    assert set(expected) == set(restored)
    for key, value in expected.items():  # up to the float rounding of another compilation
        np.testing.assert_allclose(restored[key], value, rtol=1e-3, err_msg=key)


def test_every_saved_leaf_is_restored_unchanged(old_run):
    """The upgrade only rearranges: laid out again as its format, the restored state is the
    checkpoint's arrays, leaf for leaf."""
    run, _ = restore_run(old_run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # orbax: no sharding given, it reads the saved one
        saved = ocp.PyTreeCheckpointer().restore(old_run / "checkpoints" / "32" / "state")
    identity = _identity(old_run, 32)
    written = identity.get("format", 1)
    layout, _ = (v3_layout if written == 3 else v2_layout)(run.state)
    if written == 1:
        (layout,) = [layout for layout, _ in v1_layouts(layout)
                     if structure_id(layout) == identity["structure"]]
        layout = layout.replace(steps=jnp.asarray(int(run.state.steps), jnp.int32))
    assert structure_id(layout) == identity["structure"]
    leaves = [np.asarray(leaf) for leaf in jax.tree.leaves(_keys_to_data(layout))]
    restored = {f"{i:05d}": leaf for i, leaf in enumerate(leaves) if leaf.size}
    assert restored.keys() == saved.keys() and len(saved) > 20
    for index, value in saved.items():
        np.testing.assert_array_equal(restored[index], value, err_msg=index)


def _identity(run_dir: Path, step: int) -> dict:
    return json.loads((run_dir / "checkpoints" / str(step) / "identity" / "metadata").read_text())


def test_an_old_run_trains_on_and_saves_the_current_format(old_run, capsys):
    assert cli.main(["train", "--resume", str(old_run), "--ppo.total-steps", "64"]) == 0
    assert "from its checkpoint at step 32" in " ".join(capsys.readouterr().out.split())
    identity = _identity(old_run, 64)
    assert identity["format"] == FORMAT and identity["step"] == 64
    steps = [json.loads(line)["step"] for line in
             (old_run / "metrics.jsonl").read_text().splitlines()]
    assert steps[-1] == 64
