"""Adjudication view (issue #15): every annotator's label of one unit side by side, the differences marked; the
adjudicator takes one annotator's value (one label kind, or all of them) or edits one, which records a resolved
label (app.corrections.Adjudicate: an event with origin `adjudication`, undoable like any decision).

Targets are the unit's label kinds and, for a unit of a sample, the sample's own (unit ''), e.g. a curated ground
truth. "Next disagreement" follows the `annotators` queue order (app.services.queue, computed in a worker).
The adjudicator sees everyone's labels: this view is never blind.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QDialog, QHBoxLayout, QHeaderView, QPushButton, QVBoxLayout

from app.corrections import Adjudicate
from app.gui.adjudication_words import differing, resolution_reason
from app.gui.banner import MessageBar
from app.gui.columns import IdDelegate, cap_columns
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import ask_text, plain_label
from app.gui.views.base import make_table
from app.gui.workers import Task, TaskProgress
from app.store import Change, Project

if TYPE_CHECKING:
    from app.gui.window_context import PanelHost

DIFFERS, AGREES = "#ffebee", None
UNIT_MAX, VALUE_MAX = 200, 240  # pixels of the unit column and of each annotator's column
CELL_LIMIT, WORDS_LIMIT = 80, 160  # characters of a cell: JSON, or the scheme's words (whole ones in the tooltip)


def compact(value: Any, words: list[str] | None = None) -> str:
    """A label value on one line (plain text): the scheme's words for it when it has some (`words`, one item
    each), else JSON for lists and objects."""
    if value is None:
        return "—"
    limit = CELL_LIMIT if words is None else WORDS_LIMIT
    if words is not None:
        text = "; ".join(words) or "(none)"
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


Describe = Callable[[str, str, Any], "list[str] | None"]  # (unit, kind, value) -> the scheme's words, or None


def table_rows(rows: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """Store rows (unit, kind, annotator, value, resolved, adjudicated) -> the annotators and one record per target
    with each annotator's value, the resolved one, and `differs` (annotators whose value is not the resolved one)."""
    annotators = list(dict.fromkeys(r["annotator"] for r in rows))
    targets: dict[tuple[str, str], dict[str, Any]] = {}
    for r in rows:
        t = targets.setdefault((r["unit"], r["kind"]), {"unit": r["unit"], "kind": r["kind"], "values": {},
                                                        "resolved_by": None, "adjudicated": False})
        t["values"][r["annotator"]] = r["value"]
        if r["resolved"]:
            t["resolved_by"] = r["annotator"]
            t["adjudicated"] = bool(r["adjudicated"])
    out = []
    for t in targets.values():
        t["differs"] = differing(t["values"], t["resolved_by"])
        out.append(t)
    return annotators, out


class AdjudicationPanel(QDialog):
    def __init__(self, host: "PanelHost") -> None:
        super().__init__(None)  # a window of its own, like the calibration panel (closed with the main window)
        self.host = host
        self.ctx = host.ctx
        self.setWindowTitle("Adjudication")
        self.setWindowFlag(Qt.WindowType.Window)
        self.key: tuple[str, str] | None = None
        self.annotators: list[str] = []
        self.targets: list[dict[str, Any]] = []
        self.queue: list[tuple[str, str]] | None = None
        self.task: Task | None = None
        lay = QVBoxLayout(self)
        self.messages = MessageBar()
        lay.addWidget(self.messages)
        self.title = plain_label(wrap=True)
        lay.addWidget(self.title)
        self.model = RecordTableModel((), self)
        self.table = make_table(self.model)
        self.table.setObjectName("adjudication_table")
        self.table.setItemDelegateForColumn(0, IdDelegate(self.table))  # checker ids: "prompt-baseline@…|gpt-4o"
        self.table.setSelectionBehavior(self.table.SelectionBehavior.SelectItems)
        self.table.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.table.activated.connect(lambda _i: self.take_selected())
        lay.addWidget(self.table, 1)
        self.legend = plain_label("Red rows: the annotators disagree; ≠ marks a value other than the resolved one, "
                                  "and Why says which rule resolved it. Select a cell and Take it (Enter), take every "
                                  "value of one annotator, or Edit.", wrap=True)
        self.legend.setStyleSheet("color:#616161;")
        lay.addWidget(self.legend)
        row = QHBoxLayout()
        self.take_button = QPushButton("Take selected value")
        self.take_button.clicked.connect(self.take_selected)
        self.who = QComboBox()
        self.who.setObjectName("adjudicate_who")
        self.take_all_button = QPushButton("Take all of")
        self.take_all_button.clicked.connect(lambda: self.take_all(self.who.currentText()))
        self.edit_button = QPushButton("Edit selected…")
        self.edit_button.clicked.connect(self.edit_selected)
        self.next_button = QPushButton("Next disagreement")
        self.next_button.clicked.connect(self.next_disagreement)
        for w in (self.take_button, self.take_all_button, self.who, self.edit_button):
            row.addWidget(w)
        row.addStretch(1)
        row.addWidget(self.next_button)
        lay.addLayout(row)
        for b in (self.take_button, self.take_all_button, self.edit_button, self.next_button):
            b.setAutoDefault(False)
        assert self.ctx.session is not None
        self._session = self.ctx.session  # the session this panel was built for (a project opened later gets a new one)
        self._session.changed.connect(self._changed)
        self.resize(1100, 460)

    @classmethod
    def open_for(cls, host: "PanelHost", key: tuple[str, str] | None = None) -> "AdjudicationPanel":
        panel = host.opened.get("adjudication")
        if panel is None or panel._session is not host.ctx.session:
            panel = host.opened["adjudication"] = cls(host)
        if key is not None:
            panel.show_unit(*key)
        panel.show()
        panel.raise_()
        return panel

    @property
    def project(self) -> Project:
        assert self.ctx.project is not None
        return self.ctx.project

    # -- showing ---------------------------------------------------------------------------------------------------
    def show_unit(self, sample_id: str, unit: str) -> None:
        self.key = (sample_id, unit)
        units = list(dict.fromkeys([unit, ""]))
        self.annotators, self.targets = table_rows(self.project.decisions.label_table(sample_id, units))
        describe = self._describer(sample_id)
        policy = self.project.decisions.resolution_policy()
        cols = [Column("unit", "Unit", lambda v: v or "(sample)"), Column("kind", "Label")]
        cols += [Column(f"a:{a}", a, tip=f"{a}'s label") for a in self.annotators]
        cols.append(Column("resolved", "Resolved", tip="The label calibration and export use, and who gave it"))
        cols.append(Column("why", "Why", tip="The rule that resolved it: adjudicated, else majority, else newest"))
        recs = []
        for t in self.targets:
            rec: dict[str, Any] = {"unit": t["unit"], "kind": t["kind"], "_target": t, "_tip_unit": t["unit"] or None,
                                   "_bg": DIFFERS if t["differs"] else AGREES}
            for a in self.annotators:
                v = t["values"].get(a)
                words = None if v is None else describe(t["unit"], t["kind"], v)
                rec[f"a:{a}"] = ("≠ " if a in t["differs"] else "") + compact(v, words) if a in t["values"] else ""
                if a not in t["values"]:
                    rec[f"_tip_a:{a}"] = f"{a}: no label"
                else:
                    rec[f"_tip_a:{a}"] = ("\n".join(words) or "(none)" if words is not None
                                          else json.dumps(v, ensure_ascii=False, indent=1))
            who = t["resolved_by"]
            rec["resolved"] = "" if who is None else (f"{who}" + (" (adjudicated)" if t["adjudicated"] else ""))
            rec["why"] = rec["_tip_why"] = resolution_reason(t["values"], who, t["adjudicated"], policy)
            recs.append(rec)
        self.model = RecordTableModel(cols, self)
        self.model.set_records(recs)
        self.table.setModel(self.model)
        self._size_columns()
        n_diff = sum(bool(t["differs"]) for t in self.targets)
        self.title.setText(f"Sample {sample_id} · {unit or '(whole sample)'}: {len(self.annotators)} annotator(s), "
                           f"{len(self.targets)} label(s), {n_diff} with a disagreement")
        self.who.clear()
        self.who.addItems(self.annotators)
        if recs:
            self.table.setCurrentIndex(self.model.index(0, 2 if self.annotators else 0))

    def _size_columns(self) -> None:
        """Unit and annotators' values within limits (elided, whole in their tooltips), so Resolved and Why stay in
        view; Why takes the rest."""
        cap_columns(self.table, UNIT_MAX, [0])
        cap_columns(self.table, VALUE_MAX, range(2, 2 + len(self.annotators)))
        last = self.model.columnCount() - 1
        self.table.horizontalHeader().setSectionResizeMode(last, QHeaderView.ResizeMode.Stretch)

    def _describer(self, sample_id: str) -> Describe:
        """The scheme view's words for this sample's label values (app.gui.views.base.DetailView.describe_label)."""
        from app.gui.views import view_class

        scheme = self.project.samples.sample_schemes([sample_id]).get(sample_id)
        hook = view_class(scheme).describe_label if scheme else None
        if hook is None:
            return lambda _u, _k, _v: None
        return lambda unit, kind, value: hook(self.project, sample_id, unit, kind, value)

    def _changed(self, sample_id: str, _unit: str, _replay: bool) -> None:
        if self.key is not None and sample_id == self.key[0] and self.isVisible():
            self.show_unit(*self.key)

    def selected(self) -> tuple[dict[str, Any], str] | None:
        """The target and annotator of the selected cell (an annotator's column)."""
        idx = self.table.currentIndex()
        rec = self.model.record(idx.row())
        col = idx.column() - 2
        if rec is None or not 0 <= col < len(self.annotators):
            return None
        return rec["_target"], self.annotators[col]

    # -- deciding --------------------------------------------------------------------------------------------------
    def _adjudicate(self, changes: list[Change], text: str) -> bool:
        if not changes or self.ctx.session is None:
            return False
        ok = self.ctx.session.do(Adjudicate(tuple(changes), text))
        if ok:
            self.ctx.status_message(f"Adjudicated {self.key[0] if self.key else ''}: {text}", 5000)
        return ok

    def take_selected(self) -> bool:
        sel = self.selected()
        if sel is None or self.key is None:
            self.ctx.status_message("Select an annotator's value first", 4000)
            return False
        t, who = sel
        if who not in t["values"]:
            return False
        return self._adjudicate([Change(self.key[0], t["unit"], t["kind"], t["values"][who])], f"take {who}'s {t['kind']}")

    def take_all(self, who: str) -> bool:
        if self.key is None or not who:
            return False
        changes = [Change(self.key[0], t["unit"], t["kind"], t["values"][who]) for t in self.targets
                   if who in t["values"] and t["values"][who] is not None]
        return self._adjudicate(changes, f"take {who}'s labels")

    def edit_selected(self) -> bool:
        sel = self.selected()
        if sel is None or self.key is None:
            self.ctx.status_message("Select a value to start from first", 4000)
            return False
        t, who = sel
        old = json.dumps(t["values"].get(who), ensure_ascii=False, indent=1)
        text, ok = ask_text(self, "Edit the resolved label", f"{t['kind']} of {self.key[0]} (JSON):", old, multiline=True)
        if not ok:
            return False
        return self.set_value(t["unit"], t["kind"], text)

    def set_value(self, unit: str, kind: str, text: str) -> bool:
        """Adjudicate an edited value (JSON text), checked by the label kind's own validation."""
        try:
            value = json.loads(text)
        except ValueError as exc:
            self.messages.show_message("edit", f"Not JSON: {exc}", "Nothing was recorded; edit it again.")
            return False
        from calibration.schemes.base import registry

        lk = registry().label_kinds().get(kind)
        problems = [p for p in (lk.validate(value) if lk is not None else []) if p.severity == "error"]
        if problems:
            self.messages.show_message("edit", f"{kind}: " + "; ".join(f"{p.field} {p.message}".strip() for p in problems),
                                       "Nothing was recorded; edit it again.")
            return False
        self.messages.dismiss("edit")
        assert self.key is not None
        return self._adjudicate([Change(self.key[0], unit, kind, value)], f"edit {kind}")

    # -- the annotators queue --------------------------------------------------------------------------------------
    def next_disagreement(self) -> None:
        """The next unit whose annotators disagree and nobody adjudicated (the `annotators` queue order)."""
        if self.task is not None:
            return
        path = str(self.project.path)

        def work(_progress: TaskProgress) -> list[tuple[str, str]]:
            from app.services.queue import build

            with Project.open(path) as wp:
                return build(wp, "annotators").keys()

        self.task = Task(work, "annotators queue")
        self.task.signals.finished.connect(self._queued)
        for sig in (self.task.signals.finished, self.task.signals.failed, self.task.signals.cancelled):
            sig.connect(lambda *_a: setattr(self, "task", None))
        self.ctx.progress.track(self.task, "Finding disagreements…")
        self.ctx.runner.start(self.task)

    def _queued(self, keys: list[tuple[str, str]]) -> None:
        self.queue = [tuple(k) for k in keys]  # type: ignore[misc]
        nxt = next((k for k in self.queue if k != self.key), None)
        if nxt is None:
            self.ctx.status_message("No unit left where the annotators disagree and nobody adjudicated", 6000)
            return
        self.host.reveal_unit(*nxt)
        self.show_unit(*nxt)
        self.raise_()
