"""Agreement over time (issue #29 item 2): which time window each labelled target falls in, and which windows
dropped.

A window is a calendar day or ISO week (UTC), or N consecutive targets in time order; empty days and weeks are
skipped, so "the previous window" is the previous one that has labels. A drop is flagged when a window's interval
lies wholly below the previous window's (its upper bound under the previous lower bound): the windows hold different
items, so there is no paired difference to bootstrap, and two disjoint 95% intervals are the conservative test.
The over-what is a parameter (`over`): time windows, or guideline versions (issue #29 item 1: a target belongs to
the version its newest label was given under, per scheme; `versions_of`), each version's drop judged against the
same scheme's previous version.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

OVER = ("time", "version")  # what a series can be cut by
WINDOWS = ("day", "week")  # or a positive integer: that many targets per window


def parse_window(text: str) -> str | int:
    """'day', 'week' or N (an integer >= 2, targets per window); ValueError naming what is allowed."""
    if text in WINDOWS:
        return text
    try:
        n = int(text)
    except ValueError:
        raise ValueError(f"expected day, week or a number of labelled units (>= 2), got {text!r}") from None
    if n < 2:
        raise ValueError(f"a window needs at least 2 labelled units, got {n}")
    return n


def _calendar(ts: float, window: str) -> str:
    d = datetime.fromtimestamp(ts, tz=UTC).date()
    if window == "day":
        return d.isoformat()
    year, week, _ = d.isocalendar()
    return f"{year}-W{week:02d}"


def window_of(times: Sequence[float], window: str | int) -> list[tuple[int, str]]:
    """(window number from 0 in time order, label) for each of `times` (epoch seconds, any order)."""
    order = sorted(range(len(times)), key=lambda i: times[i])
    out: list[tuple[int, str]] = [(0, "")] * len(times)
    if isinstance(window, int):
        for rank, i in enumerate(order):
            w = rank // window
            last = min(len(times), (w + 1) * window)
            out[i] = (w, f"units {w * window + 1}-{last}")
        return out
    labels = sorted({_calendar(times[i], window) for i in order})
    number = {label: n for n, label in enumerate(labels)}
    for i in order:
        label = _calendar(times[i], window)
        out[i] = (number[label], label)
    return out


def versions_of(keys: Sequence[tuple[str, int | None]]) -> list[tuple[int, str]]:
    """(group number from 0, label) for each (scheme, guideline version) key: grouped per scheme and version, in
    scheme then version order, labels like "violations v2" (None: "violations before versioning")."""
    order = sorted(set(keys), key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    number = {k: n for n, k in enumerate(order)}
    return [(number[k], f"{k[0]} {'before versioning' if k[1] is None else f'v{k[1]}'}") for k in keys]


def _bounds(ci: Mapping[str, Any] | None) -> tuple[float, float] | None:
    if not ci:
        return None
    lo, hi = ci.get("low"), ci.get("high")
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return None
    return lo, hi


def drops(series: Sequence[Mapping[str, Any] | None]) -> list[bool]:
    """Per window, whether its interval lies wholly below the previous window's (the first never drops; a window
    or a previous window without an interval neither)."""
    out = [False] * len(series)
    for i in range(1, len(series)):
        now, before = _bounds(series[i]), _bounds(series[i - 1])
        out[i] = now is not None and before is not None and now[1] < before[0]
    return out
