"""Tables on the command line: rich tables on a terminal, plain TSV when stdout is a pipe or a file.

Piped output has no terminal width, and rich would squeeze tables into 80 columns and cut long checker names
(`prompt-baseline@1.1.0|gpt-3.5-turbo-0613`) with an ellipsis. TSV keeps every character and is what a script
wants anyway: one `# title` line, a header row, then one row per line, tab-separated, and a blank line after.
"""
from __future__ import annotations

import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from app.names import terminal_safe


def _plain(cell: Any) -> str:
    if isinstance(cell, Text):
        text = cell.plain
    elif isinstance(cell, str):
        text = Text.from_markup(cell).plain
    else:
        text = str(cell)
    return terminal_safe(" ".join(text.replace("\t", " ").split()))  # one line per row, no stray tabs


def _safe(cell: Any) -> Any:
    """A cell whose control/format characters are escaped (app.names.terminal_safe): data in a table (names,
    checker names, ids) can never move the cursor or reorder the line. Control characters are not markup, so a
    markup string stays markup; a Text keeps its style (its spans only if nothing needed escaping)."""
    if isinstance(cell, str):
        return terminal_safe(cell)
    if isinstance(cell, Text):
        safe = terminal_safe(cell.plain)
        return cell if safe == cell.plain else Text(safe, style=cell.style)
    return cell


def table_tsv(table: Table) -> str:
    cols = table.columns
    lines = []
    if table.title:
        lines.append(f"# {_plain(table.title)}")
    if table.show_header:
        lines.append("\t".join(_plain(c.header) for c in cols))
    rows = zip(*(list(c.cells) for c in cols)) if cols else iter(())
    lines.extend("\t".join(_plain(cell) for cell in row) for row in rows)
    return "\n".join(lines) + "\n"


def print_table(console: Console, table: Table) -> None:
    """`table` as rich renders it on a terminal, else as TSV on the console's file."""
    if console.is_terminal:
        table.title = _safe(table.title) if table.title is not None else None
        for column in table.columns:
            column._cells = [_safe(c) for c in column._cells]  # rich keeps a column's cells in this list
        console.print(table)
        return
    out = console.file or sys.stdout
    out.write(table_tsv(table) + "\n")
    out.flush()
