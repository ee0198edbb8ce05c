"""How an estimate with its interval reads in a table: one function for the CLI tables and the GUI panels (agreement,
human ceiling), so a figure reads the same wherever it is shown."""
from __future__ import annotations

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
