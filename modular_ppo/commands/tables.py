"""Rich tables of the commands' results."""

from __future__ import annotations

from rich.table import Table


def table(title: str, rows: list[dict[str, object]]) -> Table:
    """A table with one column per key of the rows (the first left-aligned)."""
    result = Table(title=title)
    for i, column in enumerate(rows[0]):
        result.add_column(str(column), justify="left" if i == 0 else "right")
    for row in rows:
        result.add_row(*(cell(v) for v in row.values()))
    return result


def cell(value: object) -> str:
    """A table cell: floats to 3 significant digits, NaN as "-"."""
    if isinstance(value, float):
        return "-" if value != value else f"{value:.3g}"
    return str(value)
