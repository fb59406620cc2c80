"""Markdown tables for the benchmark scripts' reports."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[object]],
                   numeric: Sequence[int] = ()) -> str:
    """A Markdown table: a header of `columns`, a row per entry of `rows` (cells written with
    str), the columns at the indices in `numeric` aligned right."""
    def line(cells: Sequence[object]) -> str:
        return "|" + "|".join(f" {cell} " if str(cell) else " " for cell in cells) + "|"

    align = "|" + "|".join("---:" if i in numeric else "---" for i in range(len(columns))) + "|"
    return "\n".join([line(columns), align, *map(line, rows)])
