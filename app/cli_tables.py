"""Tables on the command line: rich tables on a terminal, plain TSV when stdout is a pipe or a file. Every table a
command prints goes through `print_table`, so the rule holds for all of them.

Piped output has no terminal width, and rich would squeeze tables into 80 columns and cut long checker names
(`prompt-baseline@1.1.0|gpt-3.5-turbo-0613`) with an ellipsis. TSV keeps every character and is what a script
wants anyway: one `# title` line, a header row, then one row per line, tab-separated, and a blank line after.
"""
from __future__ import annotations

import sys
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def _plain(cell: Any) -> str:
    if isinstance(cell, Text):
        text = cell.plain
    elif isinstance(cell, str):
        text = Text.from_markup(cell).plain
    else:
        text = str(cell)
    return " ".join(text.replace("\t", " ").split())  # one line per row, no stray tabs


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


def fit(console: Console, table: Table) -> None:
    """Make a table wider than the terminal fit without cutting a header: a column whose cells are no wider than
    its header gets the width of its longest cell or header word (the header wraps between words: "with" above
    "status"), and no column is narrower than its header's longest word. Left to itself, rich squeezes every column
    alike and cuts short headers to "sch…" in 80 columns."""
    natural = Measurement.get(console, console.options.update(max_width=10**6), table).maximum
    if natural <= console.width:
        return
    for col in table.columns:
        header = _plain(col.header)
        word = max((cell_len(w) for w in header.split()), default=0)
        longest = max((cell_len(_plain(c)) for c in col.cells), default=0)
        if longest <= cell_len(header):
            col.width, col.no_wrap = max(longest, word), False
        else:
            col.min_width = max(col.min_width or 0, word)


def print_table(console: Console, table: Table) -> None:
    """`table` as rich renders it on a terminal (fitted to its width), else as TSV on the console's file."""
    if console.is_terminal:
        fit(console, table)
        console.print(table)
        return
    out = console.file or sys.stdout
    out.write(table_tsv(table) + "\n")
    out.flush()
