"""Tables on the command line: rich tables on a terminal, plain TSV when stdout is a pipe or a file. Every table a
command prints goes through `print_table`, so the rule holds for all of them.

Piped output has no terminal width, and rich would squeeze tables into 80 columns and cut long checker names
(`prompt-baseline@1.1.0|gpt-3.5-turbo-0613`) with an ellipsis. TSV keeps every character and is what a script
wants anyway: one `# title` line, a header row, then one row per line, tab-separated, and a blank line after.
"""
from __future__ import annotations

import sys
from typing import Any

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
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


MIN_FOLD = 10  # a column of long unbreakable values (checker ids) is folded no narrower than this


def _words(text: str) -> int:
    return max((cell_len(w) for w in text.split()), default=0)


def _widths(table: Table, width: int) -> tuple[list[int], set[int]] | None:
    """Column widths that fit `width` with the table's current borders and padding (and the columns to fold), or
    None when even the narrowest uncut layout does not fit."""
    cols = table.columns
    headers = [_plain(c.header) if table.show_header else "" for c in cols]
    cells = [[_plain(x) for x in c.cells] for c in cols]
    ideal = [max([cell_len(h), *(cell_len(x) for x in xs)]) for h, xs in zip(headers, cells)]
    _, right, _, left = table.padding
    avail = width - table._extra_width - len(cols) * (left + right)
    floor = [_words(h) for h in headers]
    need = [max(f, max((cell_len(x) for x in xs), default=0) if c.no_wrap else max(map(_words, xs), default=0))
            for f, xs, c in zip(floor, cells, cols)]
    fold = set()
    for i in sorted(range(len(cols)), key=lambda i: -need[i]):  # fold the widest unbreakable columns first
        if sum(need) <= avail:
            break
        narrower = max(floor[i], MIN_FOLD, avail - (sum(need) - need[i]))
        if narrower < need[i]:
            need[i] = narrower
            fold.add(i)
    if sum(need) > avail:
        return None
    lack = [ideal[i] - need[i] for i in range(len(cols))]
    spare, total = avail - sum(need), sum(lack)
    return [min(ideal[i], need[i] + (spare * lack[i] // total if total else 0)) for i in range(len(cols))], fold


def fit(console: Console, table: Table) -> None:
    """Widths for a table wider than the terminal, so that no header is cut: every column gets at least its header's
    longest word (headers wrap between words: "with" above "status") and its cells' longest word (values wrap at
    spaces, never inside a number); when even that is too wide, the columns of long unbreakable values (checker ids)
    fold, and then the borders between columns give way to spaces; the room left goes to the columns in proportion
    to what they lack. Left to itself, rich squeezes columns to a character and cuts headers to "s…" in 80 columns."""
    if not table.columns:
        return
    natural = Measurement.get(console, console.options.update(max_width=10**6), table).maximum
    if natural <= console.width:
        return
    found = _widths(table, console.width)
    if found is None:  # compact: no vertical borders, one space between columns
        table.box, table.padding, table.show_edge = box.SIMPLE_HEAD, (0, 0, 0, 0), False
        found = _widths(table, console.width)
    if found is None:
        return  # a terminal this narrow: rich's own squeezing is all there is
    widths, fold = found
    for i, col in enumerate(table.columns):
        col.width, col.no_wrap = widths[i], False
        if i in fold:
            col.overflow = "fold"


def print_table(console: Console, table: Table) -> None:
    """`table` as rich renders it on a terminal (fitted to its width), else as TSV on the console's file."""
    if console.is_terminal:
        table.title = _safe(table.title) if table.title is not None else None
        for column in table.columns:
            column._cells = [_safe(c) for c in column._cells]  # rich keeps a column's cells in this list
        fit(console, table)
        console.print(table)
        return
    out = console.file or sys.stdout
    out.write(table_tsv(table) + "\n")
    out.flush()
