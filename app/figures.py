"""How an estimate with its interval reads in a table: one function for the CLI tables and the GUI panels (agreement,
human ceiling), so a figure reads the same wherever it is shown."""
from __future__ import annotations

import math
from typing import Any


def fmt_estimate(ci: Any) -> str:
    """estimate [low, high] from `{"estimate", "low", "high"}` (a number as itself), or '-' when undefined."""
    if ci is None:
        return "-"
    if not isinstance(ci, dict):
        return f"{ci:.3f}" if isinstance(ci, float) else str(ci)
    est, lo, hi = ci.get("estimate"), ci.get("low"), ci.get("high")
    if est is None:
        return "-"
    return f"{est:.3f}" if lo is None or hi is None else f"{est:.3f} [{lo:.3f}, {hi:.3f}]"


def fmt_cell(value: Any) -> str:
    """A cell of a report table as text: a float to 3 decimals, NaN and None as a dash, anything else as itself."""
    if isinstance(value, float):
        return "–" if math.isnan(value) else f"{value:.3f}"
    return "–" if value is None else str(value)


def empty_table(rows: Any) -> bool:
    """No rows, or nothing but dashes and zero counts beyond the first column (e.g. every figure against humans
    before anyone labeled): such a table says less than the sentence shown instead."""
    def blank(c: Any) -> bool:
        if type(c) is int:  # a count: 0 is "nothing"; a figure of 0.0 is a result and keeps its table
            return c == 0
        return c is None or (isinstance(c, float) and math.isnan(c)) or str(c).strip() in ("", "–", "-", "—")

    return all(blank(c) for row in rows for c in row[1:])
