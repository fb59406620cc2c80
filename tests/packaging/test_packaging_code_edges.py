"""The edges of the code: importing the package does no work, no file edits the import
path, no private tyro API, no branch on an architecture's name outside the registry, and
no function in the package, the benchmarks, the examples or cli.py over 50 lines of code."""

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 50


def python_files(*folders: str) -> list[Path]:
    return [path for folder in folders for path in sorted((ROOT / folder).rglob("*.py"))]


def matches(pattern: str, files: list[Path]) -> list[str]:
    found = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(pattern, line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    return found


def test_importing_the_package_does_no_work():
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYTHONPATH")}
    code = ("import os, sys; import modular_ppo; "
            "print(sorted(m for m in ('mujoco', 'jax') if m in sys.modules), "
            "os.environ.get('MUJOCO_GL'))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "[] None"


def test_no_file_edits_the_import_path():
    edit = "sys" + r"\.path\s*(\.(insert|append|extend)\(|\+?=)"
    assert matches(edit, python_files("modular_ppo", "tests", "benchmarks", "examples")) == []
    assert (ROOT / "cli.py").read_text().count("sys" + ".path") == 0


def test_no_private_tyro_api():
    private = r"\btyro\._|from tyro\._|import tyro\._"
    assert matches(private, python_files("modular_ppo") + [ROOT / "cli.py"]) == []


def test_no_branch_on_an_architectures_name_outside_the_registry():
    assert matches(r"\barch\s*[!=]=|\barch\s+(not\s+)?in\s*[(\[{]",
                   python_files("modular_ppo")) == []


def _code_lines(function: ast.AST, lines: list[str]) -> int:
    """Lines of a function that hold code: not its docstring, blank or comment lines."""
    body = function.body
    docstring = set()
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        docstring = set(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for number in range(function.lineno, function.end_lineno + 1)
               if number not in docstring and lines[number - 1].strip()
               and not lines[number - 1].strip().startswith("#"))


def _functions(tree: ast.AST, prefix: str = ""):
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")


def test_no_function_over_50_lines():
    long = {}
    scripts = sorted((ROOT / "benchmarks").glob("*.py")) + sorted((ROOT / "examples").glob("*.py"))
    for path in python_files("modular_ppo") + scripts + [ROOT / "cli.py"]:
        source = path.read_text()
        for name, function in _functions(ast.parse(source)):
            n = _code_lines(function, source.splitlines())
            if n > MAX_LINES:
                long[f"{path.relative_to(ROOT)}:{name}"] = n
    assert long == {}


def _tracked(*args: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", *args],
                          capture_output=True, text=True, check=True)
    return [name for name in done.stdout.split("\0") if name]


def test_the_tree_keeps_summaries_not_records():
    """Raw metrics, checkpoints and event files stay out of git: nothing tracked that
    .gitignore names, and the tracked run summaries under 5 MB in all."""
    assert _tracked("-ci", "--exclude-standard") == []
    results = _tracked("benchmarks/results")
    assert [name for name in results if name.endswith(".gz")] == []
    assert sum((ROOT / name).stat().st_size for name in results) < 5_000_000
    assert len((ROOT / "BENCHMARKS.md").read_bytes()) <= 25_000
