"""README.md and docs/*.md say what is true: their Python examples run (and print what their
comments say), their MJCF annotation examples give the modules and task they name, their
command lines use only options the commands have, and the README's quick start is what
.ci/run runs."""

from __future__ import annotations

import contextlib
import functools
import io
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import mujoco
import pytest

from modular_ppo import cli
from modular_ppo.body import BodyGraph

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
TINY_RUN = ROOT / "tests" / "runs" / "format1_runs" / "tiny"
"""A committed run directory (metrics.jsonl, config.json) for examples that read a run."""
RUN_PLACEHOLDER = "runs/ant-modular/<timestamp>"


def code_blocks(page: Path, language: str) -> list[str]:
    return [code for lang, code in FENCE.findall(page.read_text()) if lang == language]


def blocks(language: str) -> list[tuple[str, int, str]]:
    """(page name, index on its page, code) of every `language` block of README and docs."""
    return [(page.name, i, code) for page in PAGES
            for i, code in enumerate(code_blocks(page, language))]


def test_the_readme_is_small_and_its_images_and_links_exist():
    text = README.read_text()
    assert len(text.encode()) <= 12_500
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), f"README links to {target}, which is missing"
    for page in PAGES[1:]:
        for target in re.findall(r"\]\(([^)#]+)\)", page.read_text()):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links to {target}"
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", text):
        assert (ROOT / image).stat().st_size < 200_000


def test_quick_start_commands_are_what_ci_runs():
    train, tests = (code.strip() for code in code_blocks(README, "bash")
                    if code.startswith("python3 -m venv"))
    ci_command = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert tests == ci_command
    setup = "python3 -m venv .venv && . .venv/bin/activate && pip install"
    assert ci_command.startswith(setup) and train.startswith(setup)
    assert train.endswith("&& python cli.py train --body ant-modular")


# --- Python examples ------------------------------------------------------------------------

COMPILES_A_STEP = ("train_from_scratch", "train_seeds", "ppo.train(", "jax.jit")
"""Examples that compile a training step or an MJX step (about a minute each on 2 busy
cores) run with the slow checks, `pytest -m benchmark tests/docs`; the others in CI."""
PYTHON_BLOCKS = [
    pytest.param(page, i, code, id=f"{page}-{i}",
                 marks=[pytest.mark.benchmark] if any(w in code for w in COMPILES_A_STEP) else [])
    for page, i, code in blocks("python")
]


def expected_prints(code: str) -> list[str]:
    """The comments of top-level `print(...)  # output` lines: what each prints."""
    return re.findall(r"^print\(.*\)\s+# (.*)$", code, re.M)


@pytest.mark.parametrize("page, index, code", PYTHON_BLOCKS)
def test_python_example_runs_and_prints_what_it_says(page, index, code, tmp_path, monkeypatch):
    if RUN_PLACEHOLDER in code:
        run = shutil.copytree(TINY_RUN, tmp_path / "run")
        code = code.replace(RUN_PLACEHOLDER, str(run))
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"{page} python block {index}", "exec"), {"__name__": "__example__"})
    lines = iter(out.getvalue().splitlines())
    for expected in expected_prints(code):
        assert expected in lines, f"{page}: no line '{expected}' in {out.getvalue()!r}"


def test_the_readme_python_body_is_shown_by_the_cli(tmp_path, monkeypatch):
    """The README's generated body, written to its file, is what `bodies show` then reads."""
    code = next(c for c in code_blocks(README, "python") if "MjSpec()" in c)
    monkeypatch.chdir(tmp_path)
    with contextlib.redirect_stdout(io.StringIO()):
        exec(code, {})
        assert cli.main(["bodies", "show", "snake-3.xml"]) == 0
    assert BodyGraph.from_mjcf(tmp_path / "snake-3.xml").module_names == ("head", "middle", "tail")


# --- MJCF annotations -----------------------------------------------------------------------

CUSTOM_BLOCKS = [b for b in blocks("xml") if "<custom>" in b[2]]


def ant_with_annotations(entries: list[ET.Element]) -> BodyGraph:
    """The bundled ant with its own `modular_ppo:` annotations replaced by `entries`."""
    spec = mujoco.MjSpec.from_file(str(ROOT / "bodies" / "ant-modular.xml"))
    for element in [*spec.texts, *spec.numerics]:
        if element.name.startswith("modular_ppo:"):
            spec.delete(element)
    for entry in entries:
        if entry.tag == "text":
            spec.add_text(name=entry.get("name"), data=entry.get("data"))
        else:
            values = [float(v) for v in entry.get("data").split()]
            spec.add_numeric(name=entry.get("name"), data=values, size=len(values))
    return BodyGraph.from_mjcf(spec)


@pytest.mark.parametrize("page, index, code", CUSTOM_BLOCKS,
                         ids=[f"{page}-{i}" for page, i, _ in CUSTOM_BLOCKS])
def test_annotation_example_gives_its_modules_and_task(page, index, code):
    entries = list(ET.fromstring(code))
    body = ant_with_annotations(entries)
    annotations = {e.get("name").removeprefix("modular_ppo:"): e.get("data") for e in entries}
    modules = [part.split("=")[0].strip() for part in annotations.pop("partition").split(";")]
    assert sorted(body.module_names) == sorted(modules)
    for key, data in annotations.items():
        values = tuple(float(v) for v in data.split())
        task_value = getattr(body.task, key)
        assert (tuple(task_value) if isinstance(task_value, tuple) else (task_value,)) == values


# --- command lines --------------------------------------------------------------------------

@functools.cache
def help_of(*command: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main([*command, "--help"]) == 0, command
    return out.getvalue()


def command_lines() -> list[tuple[str, str, str]]:
    """(page name, line, its paragraph) of every command line in a bash block and every
    inline code span of the prose; the paragraph (a list item counts as one) names the
    scripts whose options a bare `--flag` span may be."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for code in code_blocks(page, "bash"):
            found += [(page.name, line, "") for line in code.replace("\\\n", " ").splitlines()]
        for paragraph in re.split(r"\n\s*\n|\n(?=- )", FENCE.sub("", text)):
            found += [(page.name, span, paragraph)
                      for span in re.findall(r"`([^`]+)`", paragraph.replace("\n", " "))]
    return [(name, line.split(" #")[0], paragraph) for name, line, paragraph in found]


CLI = ("cli.py", "modular-ppo")
SUBCOMMANDS = ("train", "eval", "render", "analyze", "analyse", "bodies")


def cli_command(words: list[str]) -> tuple[str, ...] | None:
    """The subcommand (with `bodies`' own subcommand) a line runs, if it runs the CLI: a
    line with `cli.py` or `modular-ppo`, or a span of prose that starts with a subcommand
    and an option (`train --init-from RUN_DIR`)."""
    if len(words) > 1 and words[0] in SUBCOMMANDS and words[1].startswith("--"):
        words = ["cli.py", *words]
    for i, word in enumerate(words):
        if word in CLI and i + 1 < len(words):
            sub = words[i + 1]
            if sub == "bodies" and i + 2 < len(words):
                return (sub, words[i + 2])
            return (sub,) if not sub.startswith("-") else None
    return None


def flags(line: str) -> list[str]:
    """The options a line gives (those after `cli.py` where it runs the CLI: not srun's)."""
    words = line.split()
    after = next((i for i, w in enumerate(words) if w in CLI), -1)
    return [f for f in re.findall(r"(?<![\w=])--[a-z][\w.-]*", " ".join(words[after + 1:]))
            if not f.endswith(".")]


def mentioned(flag: str, text: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(flag)}(?![\w.-])", text) is not None


def test_every_command_line_uses_options_its_command_has(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    all_help = "".join(help_of(*c) for c in
                       [("train",), ("eval",), ("render",), ("analyze",), ("bodies", "show")])
    wrong = []
    for page, line, paragraph in command_lines():
        command = cli_command(line.split())
        script = re.search(r"benchmarks/\w+\.(?:py|sh)", line)
        if command is not None:
            text = help_of(*command)
        elif script is not None:
            text = (ROOT / script.group()).read_text()
        elif line.startswith("--"):  # an option named in prose: the CLI's or a script's
            text = all_help + "".join((ROOT / name).read_text() for name in
                                      re.findall(r"benchmarks/\w+\.(?:py|sh)", paragraph))
        else:
            continue
        wrong += [f"{page}: {flag} in `{line}`" for flag in flags(line)
                  if not mentioned(flag, text)]
    assert not wrong, "\n".join(wrong)


def test_every_benchmarks_section_named_exists():
    """`BENCHMARKS.md "Title"` in README and docs names a heading of BENCHMARKS.md (its
    start), so a rewritten report leaves no reference behind."""
    headings = [re.sub(r"^#+\s*", "", line) for line in
                (ROOT / "BENCHMARKS.md").read_text().splitlines() if line.startswith("#")]
    missing = []
    for page in PAGES:
        for title in re.findall(r"BENCHMARKS\.md`?(?:'s)?\s*\(?\"([^\"]+)\"", page.read_text()):
            title = " ".join(title.split())
            if not any(heading.startswith(title) for heading in headings):
                missing.append(f"{page.name}: {title}")
    assert not missing, "\n".join(missing)
