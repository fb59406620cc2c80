"""Markdown tables for the benchmark scripts' reports."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[object]],
                   numeric: Sequence[int] = ()) -> str:
    """A Markdown table: a header of `columns`, a row per entry of `rows` (cells written with
    str, a "|" in one escaped, as in MABrax's humanoid_9|8), the columns at the indices in
    `numeric` aligned right."""
    def line(cells: Sequence[object]) -> str:
        texts = [str(cell).replace("|", r"\|") for cell in cells]
        return "|" + "|".join(f" {text} " if text else " " for text in texts) + "|"

    align = "|" + "|".join("---:" if i in numeric else "---" for i in range(len(columns))) + "|"
    return "\n".join([line(columns), align, *map(line, rows)])
