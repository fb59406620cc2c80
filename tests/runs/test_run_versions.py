"""config.json's "versions": the libraries and modular_ppo's own commit, so a run can be
re-run on the code that made it."""

import re
import subprocess

from modular_ppo.runs.versions import CODE_DIRS, git_state, versions


def _git(directory, *args):
    subprocess.run(["git", "-C", str(directory), *args], check=True, capture_output=True)


def test_a_checkout_gives_its_commit_and_whether_tracked_files_changed(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    _git(tmp_path, "add", "code.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    clean = git_state(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{40}", clean["commit"]) and clean["modified"] is False
    (tmp_path / "notes.txt").write_text("untracked files do not count\n")
    assert git_state(tmp_path)["modified"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_state(tmp_path) == {"commit": clean["commit"], "modified": True}


def test_only_changes_in_the_code_folders_count(tmp_path):
    code, docs = tmp_path / "package", tmp_path / "docs"
    code.mkdir(), docs.mkdir()
    (code / "code.py").write_text("x = 1\n")
    (docs / "notes.md").write_text("one\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (docs / "notes.md").write_text("two\n")
    assert git_state(code, tmp_path / "bodies")["modified"] is False
    assert git_state(code, docs)["modified"] is True


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    assert git_state(tmp_path) == {"commit": None, "modified": None}


def test_versions_name_the_libraries_devices_and_this_code():
    record = versions()
    assert {"python", "jax", "flax", "optax", "mujoco", "devices"} <= set(record)
    assert record["devices"]
    assert record["modular_ppo"] == git_state(*CODE_DIRS)
