"""The report's charts, drawn with matplotlib's object API on the Agg canvas (no pyplot: no global state, no GUI
backend, safe in a worker) and returned as PNG bytes for embedding. Each takes plain rows, so the same figures
can be drawn from a CLI run, a stored run or the app's data."""
from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

MAX_ROWS = 40  # an interval chart taller than this is unreadable: the table beside it has every row
WIDTH = 7.5  # inches, at 100 dpi: fits a report column


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return buf.getvalue()


def _figure(height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(WIDTH, height), layout="constrained")


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def interval_chart(rows: Sequence[tuple[str, float, float | None, float | None]], *, title: str, xlabel: str,
                   zero_line: bool = False) -> bytes | None:
    """Points with 95% interval bars, one row per figure (label, estimate, low, high), top to bottom; None when no
    row has a finite estimate. `zero_line`: a dashed line at 0 (a gain: its interval must clear it)."""
    rows = [r for r in rows if finite(r[1])][:MAX_ROWS]
    if not rows:
        return None
    fig = _figure(1.0 + 0.32 * len(rows))
    ax = fig.add_subplot()
    ys = list(range(len(rows)))[::-1]
    for y, (_, est, lo, hi) in zip(ys, rows):
        if finite(lo) and finite(hi):
            ax.plot([lo, hi], [y, y], color="#41448a", linewidth=2, solid_capstyle="butt")
        ax.plot([est], [y], "o", color="#22a884", markersize=6, zorder=3)
    ax.set_yticks(ys, [_short(r[0], 56) for r in rows])
    ax.set_xlabel(xlabel)
    ax.set_title(_short(title, 90), loc="left", fontsize=10)
    if zero_line:
        ax.axvline(0.0, color="#888888", linestyle="--", linewidth=1)
    ax.grid(axis="x", color="#e6e6e6")
    ax.set_ylim(-0.7, len(rows) - 0.3)
    return _png(fig)


def reliability_chart(name: str, rows: Sequence[Mapping[str, Any]]) -> bytes | None:
    """Observed positive rate against the mean predicted probability per bin (marker area ~ count), with the
    diagonal of a perfectly calibrated judge."""
    pts = [(r["mean_predicted"], r["observed_rate"], int(r.get("count") or 0)) for r in rows
           if finite(r.get("mean_predicted")) and finite(r.get("observed_rate"))]
    if not pts:
        return None
    fig = _figure(3.4)
    ax = fig.add_subplot()
    ax.plot([0, 1], [0, 1], color="#888888", linestyle="--", linewidth=1, label="perfectly calibrated")
    most = max(n for _, _, n in pts) or 1
    ax.plot([p for p, _, _ in pts], [o for _, o, _ in pts], color="#41448a", linewidth=1.5)
    ax.scatter([p for p, _, _ in pts], [o for _, o, _ in pts], s=[20 + 180 * n / most for _, _, n in pts],
               color="#22a884", zorder=3, label="bins (area: samples)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted P(positive)")
    ax.set_ylabel("observed positive rate")
    ax.set_title(f"Reliability: {_short(name, 60)}", loc="left", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)
    return _png(fig)


def curve_chart(points: Sequence[tuple[float, float, float | None, float | None]], *, title: str, xlabel: str,
                ylabel: str, target: float | None = None) -> bytes | None:
    """A line with an interval band: (x, y, low, high) points (the learning curve, coverage against agreement);
    `target`: a dashed horizontal line (the agreement a guarantee promises)."""
    pts = sorted(p for p in points if finite(p[0]) and finite(p[1]))
    if not pts:
        return None
    fig = _figure(3.2)
    ax = fig.add_subplot()
    xs = [p[0] for p in pts]
    band = [(p[0], p[2], p[3]) for p in pts if finite(p[2]) and finite(p[3])]
    if band:
        ax.fill_between([b[0] for b in band], [b[1] for b in band], [b[2] for b in band], color="#41448a",
                        alpha=0.18, linewidth=0, label="95% interval")
    ax.plot(xs, [p[1] for p in pts], "o-", color="#41448a", markersize=4)
    if target is not None:
        ax.axhline(target, color="#b5551d", linestyle="--", linewidth=1, label=f"target {target:g}")
    if band or target is not None:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(_short(title, 90), loc="left", fontsize=10)
    ax.grid(color="#e6e6e6")
    return _png(fig)


def _short(label: str, width: int = 48) -> str:
    """Long ids elided in the middle (they share prefixes); the tables beside the chart give them in full. A `$`
    is escaped: matplotlib would read text between two of them as mathtext, and data is plain text."""
    label = str(label).replace("$", r"\$")
    return label if len(label) <= width else label[: width // 2 - 1] + "…" + label[-(width // 2 - 1):]
