"""The agreement panel's issue #29 tabs: a table per annotator (agreement with the adjudicated or majority label of
the others, drift, seconds per decision, flags) and agreement per time window (a chart with drops flagged, and the
same figures as a table) with a dashed line where a guideline version came into force, and agreement per guideline
version. The figures are `concord agreement --annotators --over time|version`'s, shown as plain text."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtWidgets import QComboBox, QHBoxLayout, QVBoxLayout, QWidget

from app.figures import fmt_estimate as fmt
from app.gui.charts import IntervalChart
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table


def _share(v: Any) -> str:
    return "" if v is None else f"{v:.0%}"


def _secs(s: dict[str, Any] | None) -> str:
    if not s or s.get("median") is None:
        return "-"
    return f"{s['median']:.1f} ({s['p10']:.1f}–{s['p90']:.1f}) from {s['source'].replace('_', ' ')}"


QUALITY_COLUMNS = (
    Column("annotator", "Annotator"), Column("n_compared", "Compared items", align_right=True),
    Column("agreement", "Agreement", fmt, tip="share of items equal to the reference [95% interval over samples]"),
    Column("kappa", "Kappa", fmt, tip="Cohen's kappa against the reference [95% interval]"),
    Column("drift", "Drift", lambda d: "-" if d is None else fmt(d["change"]),
           tip="agreement in the last half of their decisions minus the first half [95% paired interval]"),
    Column("accept_share", "Accepted", _share, tip="share of their status decisions that accept the machine's proposal"),
    Column("seconds", "Seconds per decision", _secs, tip="median (10th–90th percentile)"),
    Column("flags", "Worth a look", lambda fs: "; ".join(f["detail"] for f in fs or ()) or ""),
)
WINDOW_COLUMNS = (
    Column("window", "Window"), Column("n_items", "Items", align_right=True),
    Column("kappa", "Fleiss' kappa", fmt), Column("alpha", "Krippendorff's alpha", fmt),
    Column("span_f1", "Span F1", fmt), Column("drops", "Drop", lambda d: ", ".join(d or ())),
)
STATISTICS = (("kappa", "Fleiss' kappa"), ("alpha", "Krippendorff's alpha"), ("span_f1", "Span F1"))


class QualityPage(QWidget):
    """One row per annotator; a flagged annotator's row is tinted (nobody is excluded)."""

    def __init__(self) -> None:
        super().__init__()
        lay = QVBoxLayout(self)
        lay.addWidget(plain_label("Each annotator against the newest adjudicated label of someone else, else the "
                                  "majority of the others (themselves left out). Flags ask for a look; they exclude "
                                  "nothing.", wrap=True))
        self.model = RecordTableModel(QUALITY_COLUMNS, self)
        self.table = make_table(self.model)
        self.table.setObjectName("agreement_quality")
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table, 1)

    def set_rows(self, rows: list[dict[str, Any]] | None) -> None:
        self.model.set_records([{**r, "_bg": "#fff3e0" if r["flags"] else None,
                                 "_tip_flags": "\n".join(f["detail"] for f in r["flags"]) or None} for r in rows or ()])


def version_markers(windows: Sequence[Mapping[str, Any]], history: Mapping[str, Sequence[Mapping[str, Any]]]
                    ) -> list[tuple[float, str]]:
    """(x, "v2") for each guideline version after the first, between the last window that ended before it came
    into force and the next (x = 1 for the first window); none where no window ended before it. With guidelines in
    more than one scheme the text names the scheme ("rubric v2")."""
    from app.services.agreement import epoch

    ends = [epoch(w["last"]) for w in windows]
    out = []
    for scheme, versions in sorted(history.items()):
        for v in versions[1:]:
            before = sum(1 for e in ends if e < epoch(v["created_at"]))
            if before:
                out.append((before + 0.5, f"v{v['version']}" if len(history) == 1 else f"{scheme} v{v['version']}"))
    return out


class OverTimePage(QWidget):
    """Agreement per window (or, `by_version`, per scheme and guideline version): the chosen statistic as points
    with interval bars, drops in vermillion, guideline version changes as dashed lines; the table."""

    def __init__(self, by_version: bool = False) -> None:
        super().__init__()
        self.by_version = by_version
        self.data: dict[str, Any] | None = None
        self.markers: list[tuple[float, str]] = []
        lay = QVBoxLayout(self)
        top = QHBoxLayout()
        self.statistic = QComboBox()
        for key, title in STATISTICS:
            self.statistic.addItem(title, key)
        self.statistic.currentIndexChanged.connect(lambda _i: self._draw())
        top.addWidget(plain_label("Chart:"))
        top.addWidget(self.statistic)
        self.note = plain_label(wrap=True)
        top.addWidget(self.note, 1)
        lay.addLayout(top)
        self.chart = IntervalChart(empty_text="No unit labelled by two or more annotators yet")
        lay.addWidget(self.chart, 2)
        columns = (Column("window", "Scheme and version"), *WINDOW_COLUMNS[1:]) if by_version else WINDOW_COLUMNS
        self.model = RecordTableModel(columns, self)
        self.table = make_table(self.model)
        self.table.setObjectName("agreement_by_version" if by_version else "agreement_over_time")
        self.table.horizontalHeader().setStretchLastSection(True)
        lay.addWidget(self.table, 1)

    def set_windows(self, data: dict[str, Any] | None,
                    history: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> None:
        """Show `agreement_over_time`'s figures; `history` (scheme -> guideline_history) places the version lines."""
        self.data = data
        windows = (data or {}).get("windows", [])
        self.markers = [] if self.by_version else version_markers(windows, history or {})
        self.model.set_records([{**w, "_bg": "#ffe0d6" if w["drops"] else None} for w in windows])
        dropped = [w["window"] for w in windows if w["drops"]]
        previous = "the same scheme's previous version's" if self.by_version else "the previous window's"
        self.note.setText((f"Drop (interval below {previous}): " + ", ".join(dropped)) if dropped else
                          f"No interval lies below {previous}." if windows else "")
        self._draw()

    def _draw(self) -> None:
        key = self.statistic.currentData()
        windows = (self.data or {}).get("windows", [])
        cis = [w.get(key) or {} for w in windows]
        self.chart.set_data(range(1, len(windows) + 1), [c.get("estimate") for c in cis], [c.get("low") for c in cis],
                            [c.get("high") for c in cis],
                            "guideline version" if self.by_version else
                            f"window ({(self.data or {}).get('window', '')})",
                            self.statistic.currentText(), flagged=[key in w["drops"] for w in windows],
                            x_labels=[w["window"] for w in windows], markers=self.markers)
