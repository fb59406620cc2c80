"""A wheel of the package, installed in a fresh virtual environment, trains the bundled ant
from an empty folder: the body files ship inside the wheel (setup.py maps `bodies/` to
`modular_ppo/bodies`).

The wheel is built from a copy of the sources without network (`pip wheel --no-deps
--no-build-isolation`); the fresh environment gets the wheel alone and finds its
dependencies in the test's own environment (a path line, which does not bring in that
environment's editable install of modular_ppo)."""

import json
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
import tyro

from modular_ppo.runs.config import TrainRunConfig
from modular_ppo.runs.config_json import config_to_json
from modular_ppo.runs.resolve import resolve_train_config, train_defaults

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("modular_ppo", "bodies", "pyproject.toml", "setup.py", "README.md")
TRAIN = ("train", "--body", "ant-modular", "--no-video", "--ppo.n-envs", "4",
         "--ppo.n-minibatches", "2", "--ppo.rollout-length", "4", "--ppo.total-steps", "32",
         "--env.episode-length", "8", "--eval.n-envs", "2", "--eval-every-steps", "0",
         "--no-compile-cache")


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The bin folder of a fresh venv with the wheel of this checkout installed."""
    tmp = tmp_path_factory.mktemp("packaging")
    source = tmp / "source"
    for name in SOURCES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy
        copy(ROOT / name, source / name, **(
            {"ignore": shutil.ignore_patterns("__pycache__")} if (ROOT / name).is_dir() else {}))
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp / "wheel"), str(source)], tmp)
    venv.create(tmp / "venv", with_pip=False)
    bin_dir = tmp / "venv" / "bin"
    purelib = Path(run([str(bin_dir / "python"), "-c",
                        "import sysconfig; print(sysconfig.get_path('purelib'))"], tmp).strip())
    deps = [sysconfig.get_path("purelib"), *site.getsitepackages()]
    (purelib / "test_dependencies.pth").write_text("\n".join(dict.fromkeys(deps)) + "\n")
    wheel = next((tmp / "wheel").glob("modular_ppo-*.whl"))
    # The venv's python runs pip from the dependencies' path; --ignore-installed: the
    # dependencies' own modular_ppo is neither taken for this one nor uninstalled.
    run([str(bin_dir / "python"), "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--ignore-installed", str(wheel)], tmp, clean_env())
    return bin_dir


def clean_env() -> dict[str, str]:
    """This process's environment without what would put a checkout on the path."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def test_the_wheel_holds_the_bodies_and_trains_the_ant_from_an_empty_folder(installed,
                                                                             tmp_path):
    where = run([str(installed / "python"), "-c",
                 "import modular_ppo; from modular_ppo.body.library import BODIES_DIR; "
                 "print(modular_ppo.__file__); print(BODIES_DIR)"], tmp_path, clean_env())
    package, bodies = (Path(line) for line in where.split())
    venv_dir = installed.parent
    assert package.is_relative_to(venv_dir) and bodies.is_relative_to(venv_dir)
    assert (bodies / "ant-modular.xml").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    out = run([str(installed / "modular-ppo"), *TRAIN], empty, clean_env())
    assert "final eval at step 32" in out
    run_dir, = (empty / "runs" / "ant-modular").iterdir()
    assert (run_dir / "eval.json").is_file()
    # What the run recorded is its config as resolved once, no stage having rewritten it.
    given = tyro.cli(TrainRunConfig, args=list(TRAIN[1:]), default=train_defaults("ant-modular"))
    recorded = json.loads((run_dir / "config.json").read_text())["config"]
    assert recorded == config_to_json(resolve_train_config(given).config)
