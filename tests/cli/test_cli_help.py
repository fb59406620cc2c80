"""`--help`: field docstrings flow into full lines at the terminal's width."""

from __future__ import annotations

import contextlib
import io
import re

import pytest

from modular_ppo import cli
from modular_ppo.cli_help import help_text


def test_help_text_joins_the_lines_of_a_paragraph_and_keeps_items_and_examples():
    docstring = """First line of a paragraph,
        its continuation (indented in the source).

        - an item
        - another item,
          continued

        An indented example follows:

            python cli.py train --body ant-modular
            python cli.py eval --run RUN
        """
    assert help_text(docstring) == (
        "First line of a paragraph, its continuation (indented in the source).\n"
        "\n"
        "- an item\n"
        "- another item, continued\n"
        "\n"
        "An indented example follows:\n"
        "\n"
        "    python cli.py train --body ant-modular\n"
        "    python cli.py eval --run RUN"
    )


@pytest.mark.parametrize("command", ["train", "eval"])
def test_every_option_help_fills_its_lines_at_80_columns(command, monkeypatch):
    """Each option's help wraps at the width only: no line of it ends where the next line's
    first word would still have fitted (what a line break kept from the docstring's source
    looks like)."""
    monkeypatch.setenv("COLUMNS", "80")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main([command, "--help"]) == 0
    helps: list[list[str]] = []  # each option's help, as the lines it is shown on
    for line in out.getvalue().rstrip().split("\n\n")[-1].splitlines():
        if line.startswith("  -"):  # an option, with its help beside it or below
            helps.append([line.rstrip()] if re.search(r"\S {2,}\S", line.strip()) else [])
        elif helps and line.startswith("      ") and line.strip():
            helps[-1].append(line.rstrip())
    assert len(helps) >= 8
    width = max(len(line) for help_lines in helps for line in help_lines)
    assert width > 70
    for help_lines in helps:
        for line, next_line in zip(help_lines, help_lines[1:]):
            next_word = next_line.split()[0]
            assert len(line) + 1 + len(next_word) > width, "\n".join(help_lines)
