"""Markdown table cells for the export's data card (README.md): one module every part of the card imports, so a
scheme's export and the generic export need not import the manifest (which imports the selection, which finds the
export adapters: an import cycle)."""
from __future__ import annotations

from typing import Any


def cell(x: Any) -> str:
    """A Markdown table cell: checker names contain '|', which would split the cell."""
    return str(x).replace("|", "\\|")


def number(x: Any) -> str:
    """A figure in a table: floats to 3 decimals, a missing value as a dash."""
    return f"{x:.3f}" if isinstance(x, float) else ("–" if x is None else str(x))
