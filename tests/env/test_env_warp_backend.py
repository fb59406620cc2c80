"""`--backend warp` (MJX's MuJoCo Warp implementation) where warp-lang or a CUDA GPU is
missing: one error that names what is missing and how to get it, from `make_env` and from
the CLI (no traceback, no run directory). CI machines have neither; the test of each
message takes the other away or gives it (`WARP_INSTALLED`)."""

import contextlib
import io

import pytest
from mujoco.mjx import warp as mjx_warp

from modular_ppo import cli
from modular_ppo.body import load_body
from modular_ppo.env import EnvConfig, EnvError, make_env

MISSING = {
    False: ["--backend warp: MuJoCo Warp is not installed", "warp-lang",
            "pip install 'mujoco-mjx[warp]'", "pip install -e '.[warp]'"],
    True: ["--backend warp: MuJoCo Warp runs on NVIDIA GPUs and JAX sees none here "
           "(its devices: cpu)", "pip install 'jax[cuda12]'", "use --backend mjx or cpu"],
}
"""warp-lang installed -> what the error says on a machine whose JAX has no GPU."""


@pytest.mark.parametrize("installed", [False, True])
def test_make_env_names_what_the_warp_backend_lacks(installed, monkeypatch):
    monkeypatch.setattr(mjx_warp, "WARP_INSTALLED", installed)
    with pytest.raises(EnvError) as error:
        make_env(load_body("ant-modular"), EnvConfig(), "warp")
    for part in MISSING[installed]:
        assert part in str(error.value), str(error.value)


def test_train_with_the_warp_backend_refuses_before_making_a_run(tmp_path, monkeypatch):
    monkeypatch.setattr(mjx_warp, "WARP_INSTALLED", False)
    monkeypatch.setenv("COLUMNS", "400")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli.main(["train", "--body", "ant-modular", "--backend", "warp",
                         "--runs-root", str(tmp_path / "runs")])
    text = " ".join(out.getvalue().split())
    assert code == 2, text
    assert "error: --backend warp: MuJoCo Warp is not installed" in text
    assert "Traceback" not in text
    assert not (tmp_path / "runs").exists()
