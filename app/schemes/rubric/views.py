"""Rubric view: question and response with TP/FP excerpts highlighted, the four buckets side by side, and the
trait's metrics computed live for the LLM's buckets and the human's.

The human's buckets start as a copy of the LLM's; every move/add/remove is one `set_buckets` command (one
event, one undo step), so the metrics on the right always match what is stored.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QHeaderView, QLineEdit, QPlainTextEdit, QPushButton, QSplitter, QTableView, QVBoxLayout,
    QWidget,
)

from app.corrections import SetLabels, commit
from app.gui.blind import HIDDEN_NOTE
from app.gui.actions import ActionSpec
from app.gui.models import Column, RecordTableModel, fmt_score
from app.gui.plaintext import plain_label
from app.gui.spantext import LEGEND, STYLES, Span, SpanTextView
from app.gui.views.base import DetailView, ViewContext, make_table, status_label, title_label, view_layout
from app.schemes.rubric.corrections import set_buckets
from app.schemes.rubric.store import store_of
from calibration.schemes.rubric import (
    BUCKET_NAMES, EXCERPT_BUCKETS, MetricTrait, bucket_counts, compute_trait_metrics, ground_buckets,
)

# the key that moves an excerpt here, written as a key (a bare "TP · 1" reads as a count)
TITLES = {"tp": "TP — key 1", "fn": "FN — key 2", "fp": "FP — key 3", "tn": "TN — key 4"}
HINTS = {
    "tp": "answer excerpts that satisfy a TP instruction",
    "fn": "TP instructions the answer misses",
    "fp": "answer excerpts that are wrong or match a TN instruction",
    "tn": "TN instructions the answer correctly avoids",
}
def _value(v: Any) -> str:
    return str(v) if isinstance(v, int) else fmt_score(v)


def _delta(v: Any) -> str:
    if v is None:
        return ""
    return f"{v:+d}" if isinstance(v, int) else f"{v:+.2f}"


METRIC_COLUMNS = (
    Column("metric", "Metric"), Column("llm", "LLM", _value, True), Column("human", "Human", _value, True),
    Column("delta", "Δ (human − LLM)", _delta, True),
)


class EntryLineEdit(QLineEdit):
    """A line edit that keeps Return/Enter for itself (they are also the window's accept shortcut)."""

    def event(self, e: QEvent) -> bool:
        if e.type() == QEvent.Type.ShortcutOverride and isinstance(e, QKeyEvent) and e.key() in (
            Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Escape
        ):
            e.accept()
            return True
        return super().event(e)


def _empty() -> dict[str, list[str]]:
    return {k: [] for k in BUCKET_NAMES}


OWN_ACTIONS = (
    ActionSpec("bucket_tp", "Move excerpt to &TP", ("1",), "view", "Rubric", "Move the selected excerpt to TP"),
    ActionSpec("bucket_fn", "Move excerpt to F&N", ("2",), "view", "Rubric", "Move the selected excerpt to FN"),
    ActionSpec("bucket_fp", "Move excerpt to &FP", ("3",), "view", "Rubric", "Move the selected excerpt to FP"),
    ActionSpec("bucket_tn", "Move excerpt to T&N", ("4",), "view", "Rubric", "Move the selected excerpt to TN"),
    ActionSpec("add_excerpt", "&Add excerpt…", ("Insert",), "view", "Rubric",
               "Add the selected response text (or typed text) to a bucket"),
    ActionSpec("remove_excerpt", "&Remove excerpt", ("Delete",), "view", "Rubric", "Remove the selected excerpt"),
    ActionSpec("next_excerpt", "Select next e&xcerpt", ("X",), "view", "Rubric", "Cycle through the excerpts"),
)


def export_count_rows(counts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The export preview's units per trait."""
    if not counts.get("by_trait"):
        return []
    return [{"what": "Per trait (units)", "value": "", "_bg": "#eceff1"},
            *({"what": k, "value": v.get("units", 0)} for k, v in counts["by_trait"].items())]


class RubricView(DetailView):
    scheme = "rubric"
    actions = frozenset({"bucket_tp", "bucket_fn", "bucket_fp", "bucket_tn", "add_excerpt", "remove_excerpt", "next_excerpt"})
    action_specs = OWN_ACTIONS
    menu = "Rubric"
    export_count_rows = staticmethod(export_count_rows)

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.trait: MetricTrait | None = None
        self.trait_error = ""
        self.llm: dict[str, list[str]] = _empty()
        self.human: dict[str, list[str]] | None = None
        self.selected: tuple[str, int] | None = None
        self.sample: dict[str, Any] | None = None
        self.labels: dict[tuple[str, str], Any] = {}
        self._build()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        self.status = status_label()
        head.addWidget(self.title)
        head.addStretch(1)
        for kind in ("tp", "fp"):
            lab = plain_label(LEGEND[kind])
            lab.setStyleSheet(f"background:{STYLES[kind].background};padding:1px 4px;")
            head.addWidget(lab)
        head.addWidget(self.status)

        self.question = QPlainTextEdit()
        self.question.setReadOnly(True)
        self.question.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.question.setMaximumHeight(70)
        self.response = SpanTextView()
        self.response.setObjectName("rubric_response")
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(plain_label("Question"))
        ll.addWidget(self.question)
        ll.addWidget(plain_label("Response"))
        ll.addWidget(self.response, 1)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        self.trait_info = plain_label(wrap=True, selectable=True)
        self.trait_info.setStyleSheet("color:#333;")
        self.metric_model = RecordTableModel(METRIC_COLUMNS, self)
        self.metric_table = make_table(self.metric_model, 0)
        self.metric_table.setObjectName("metric_table")
        rl.addWidget(plain_label("Trait"))
        rl.addWidget(self.trait_info)
        rl.addWidget(plain_label("Metrics: LLM buckets vs human buckets"))
        rl.addWidget(self.metric_table, 1)

        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left)
        top.addWidget(right)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)

        buckets = QWidget()
        bl = QHBoxLayout(buckets)
        bl.setContentsMargins(0, 0, 0, 0)
        self.bucket_models: dict[str, RecordTableModel] = {}
        self.bucket_tables: dict[str, QTableView] = {}
        for name in BUCKET_NAMES:
            model = RecordTableModel((Column("text", "Excerpt / item"), Column("found", "In response")), self)
            table = make_table(model, 0)
            table.setObjectName(f"bucket_{name}")
            table.setWordWrap(True)
            table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.setColumnHidden(1, name not in EXCERPT_BUCKETS)  # FN/TN hold instructions, not quotes
            table.selectionModel().currentRowChanged.connect(lambda cur, _p, b=name: self._clicked(b, cur.row()))
            self.bucket_models[name] = model
            self.bucket_tables[name] = table
            col = QWidget()
            cl = QVBoxLayout(col)
            cl.setContentsMargins(0, 0, 0, 0)
            head_label = plain_label(TITLES[name])
            head_label.setObjectName(f"bucket_title_{name}")
            head_label.setToolTip(f"{HINTS[name]} (press {TITLES[name][-1]} to move the selected excerpt here)")
            cl.addWidget(head_label)
            cl.addWidget(table)
            bl.addWidget(col)

        add = QHBoxLayout()
        self.add_edit = EntryLineEdit()
        self.add_edit.setObjectName("add_excerpt_edit")
        self.add_edit.setPlaceholderText("Excerpt to add (Insert takes the response selection; Enter adds)")
        self.add_bucket = QComboBox()
        for name in BUCKET_NAMES:
            self.add_bucket.addItem(name.upper(), name)
        self.add_bucket.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.add_button = QPushButton("Add")
        self.add_button.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.add_button.clicked.connect(self.add_from_edit)
        self.add_edit.returnPressed.connect(self.add_from_edit)
        self.add_edit.installEventFilter(self)
        add.addWidget(self.add_edit, 1)
        add.addWidget(self.add_bucket)
        add.addWidget(self.add_button)

        bottom = QWidget()
        bot = QVBoxLayout(bottom)
        bot.setContentsMargins(0, 0, 0, 0)
        bot.addWidget(buckets, 1)
        bot.addLayout(add)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(top)
        split.addWidget(bottom)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setSizes([420, 320])
        split.setChildrenCollapsible(False)
        lay.addWidget(split, 1)
        self.note = plain_label(wrap=True, selectable=True)
        self.note.setStyleSheet("color:#5d4037;")
        lay.addWidget(self.note)

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.add_edit and event.type() == QEvent.Type.KeyPress and isinstance(event, QKeyEvent):
            if event.key() == Qt.Key.Key_Escape:
                self.add_edit.clear()
                self.add_edit.clearFocus()
                return True
        return super().eventFilter(obj, event)

    # -- data ------------------------------------------------------------------------------------------------------
    @property
    def trait_name(self) -> str:
        return "" if self.row is None else str(self.row["unit"])

    def reset(self) -> None:
        super().reset()
        self.sample, self.trait, self.human, self.labels, self.selected = None, None, None, {}, None

    def show_unit(self, row: dict[str, Any]) -> None:
        changed = self.row is None or (row["sample_id"], row["unit"]) != (self.row["sample_id"], self.row["unit"])
        self.row = row
        sid, trait = row["sample_id"], row["unit"]
        store = store_of(self.project)
        self.sample = store.rubric_sample(sid)
        definition = store.get_trait(trait)
        self.trait, self.trait_error = None, ""
        if definition is not None:
            try:
                self.trait = MetricTrait.from_dict(definition, strict=False)
            except ValueError as exc:
                self.trait_error = str(exc)
        assignment = store.bucket_assignment(sid, trait)
        machine = (assignment or {}).get("buckets") or {}
        self.llm = {k: list(machine.get(k, [])) for k in BUCKET_NAMES}
        if changed:
            self.selected = None
            self.add_edit.clear()
        self._load_labels()
        self._render()

    def refresh(self) -> None:
        if self.row is None:
            return
        self._load_labels()
        self._render()

    def _load_labels(self) -> None:
        assert self.row is not None
        labels = self.sample_labels(self.row["sample_id"])
        self.labels = labels
        h = labels.get((self.trait_name, "buckets"))
        self.human = None if h is None else {k: list(h.get(k, [])) for k in BUCKET_NAMES}

    def working(self) -> dict[str, list[str]]:
        """The buckets the human edits: their decision if any, else the LLM's (empty while the LLM's are hidden)."""
        start = _empty() if self.machine_hidden() else self.llm
        return {k: list(v) for k, v in (self.human if self.human is not None else start).items()}

    def _render(self) -> None:
        assert self.row is not None
        if self.sample is None:
            self.title.setText(f"{self.row['sample_id']}: not found")
            return
        work = self.working()
        status = self.labels.get((self.trait_name, "status")) or "unlabeled"
        self.title.setText(f"Sample {self.sample['id']} · trait {self.trait_name}")
        hidden = self.machine_hidden()
        self.status.setText(f"Status: {status}" + (f" · {HIDDEN_NOTE}" if hidden else
                                                    "" if self.human is not None else " · showing the LLM's buckets"))
        for col in (1, 3):  # the LLM's metrics and the difference: not before the annotator's own decision
            self.metric_table.setColumnHidden(col, hidden)
        self.question.setPlainText(self.sample.get("question") or "")
        response = self.sample.get("response") or ""
        report = ground_buckets(response, work)
        found = {(e.bucket, e.index): e for e in report.excerpts}
        spans = [Span(e.start, e.end, e.bucket, (e.bucket, e.index), f"{e.bucket.upper()}: {e.text}")
                 for e in report.excerpts if e.grounded and e.start is not None and e.end is not None]
        self.response.set_content(response, spans)
        for name in BUCKET_NAMES:
            recs = []
            for i, text in enumerate(work[name]):
                e = found.get((name, i))
                where = "" if e is None else ("no" if not e.grounded else e.how)
                recs.append({"text": text, "found": where, "_tip": text, "_fg": "#c62828" if where == "no" else None})
            self.bucket_models[name].set_records(recs)
        self._render_trait()
        self._render_metrics(work)
        note = self.labels.get((self.trait_name, "note"))
        self.note.setText(f"Note: {note}" if note else "")
        self.note.setVisible(bool(note))
        self._sync_selection()

    def _render_trait(self) -> None:
        if self.trait is None:
            self.trait_info.setText(self.trait_error or "(trait definition missing)")
            return
        t = self.trait
        lines = [f"{t.name} · {t.evaluation_mode} · metrics: {', '.join(t.metrics)}"]
        if t.description:
            lines.append(t.description)
        lines += [f"TP: {x}" for x in t.tp_instructions]
        lines += [f"TN: {x}" for x in t.tn_instructions]
        self.trait_info.setText("\n".join(lines))

    def metrics(self, buckets: dict[str, list[str]]) -> tuple[dict[str, float], dict[str, int]] | None:
        if self.trait is None:
            return None
        try:
            return compute_trait_metrics(self.trait, buckets), bucket_counts(self.trait, buckets)
        except ValueError:
            return None

    def _render_metrics(self, work: dict[str, list[str]]) -> None:
        llm, human = self.metrics(self.llm), self.metrics(work)
        if self.machine_hidden():  # no LLM figure, and no tint saying where the human's differ from them
            llm = None
        recs: list[dict[str, Any]] = []
        names = list(self.trait.metrics) if self.trait is not None else []
        for m in names:
            a = None if llm is None else llm[0].get(m)
            b = None if human is None else human[0].get(m)
            recs.append({"metric": m, "llm": a, "human": b, "delta": None if a is None or b is None else b - a,
                         "_bg": "#fff9c4" if a is not None and b is not None and abs(b - a) > 1e-12 else None})
        for k in BUCKET_NAMES:
            a = None if llm is None else llm[1][k]
            b = None if human is None else human[1][k]
            recs.append({"metric": f"count {k.upper()}", "llm": a, "human": b,
                         "delta": None if a is None or b is None else b - a, "_fg": "#616161"})
        self.metric_model.set_records(recs)

    # -- selection -------------------------------------------------------------------------------------------------
    def _clicked(self, bucket: str, row: int) -> None:
        self.selected = (bucket, row) if row >= 0 else None
        self._sync_selection()

    def _sync_selection(self) -> None:
        for name, table in self.bucket_tables.items():
            sm = table.selectionModel()
            sm.blockSignals(True)
            if self.selected is not None and self.selected[0] == name and self.selected[1] < table.model().rowCount():
                idx = table.model().index(self.selected[1], 0)
                sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                table.scrollTo(idx)
            else:
                sm.clearSelection()
                sm.setCurrentIndex(table.model().index(-1, -1), QItemSelectionModel.SelectionFlag.NoUpdate)
            sm.blockSignals(False)
            table.viewport().update()
        self.response.set_selected([self.selected] if self.selected else [])

    def select(self, bucket: str, index: int) -> None:
        self.selected = (bucket, index)
        self._sync_selection()

    # -- actions ---------------------------------------------------------------------------------------------------
    def accept_command(self) -> SetLabels | None:
        if self.row is None:
            return None
        if self.machine_hidden():  # the annotator commits their own buckets; the LLM's are revealed after
            mine = set_buckets(self.row["sample_id"], self.trait_name, self.working()).changes[0]
            llm = set_buckets(self.row["sample_id"], self.trait_name, self.llm).changes[0]
            return commit(self.row["sample_id"], self.trait_name, (mine,), mine.after == llm.after, "commit my buckets")
        return set_buckets(self.row["sample_id"], self.trait_name, self.llm, status="accepted", text="accept LLM buckets")

    def _commit(self, buckets: dict[str, list[str]], text: str) -> None:
        assert self.row is not None
        self.ctx.session.do(set_buckets(self.row["sample_id"], self.trait_name, buckets, status="corrected", text=text))

    def move_selected(self, target: str) -> None:
        if self.selected is None:
            self.message.emit("Select an excerpt first (X cycles through them)")
            return
        src, i = self.selected
        work = self.working()
        if src == target or i >= len(work[src]):
            return
        item = work[src].pop(i)
        work[target].append(item)
        self.selected = (target, len(work[target]) - 1)
        self._commit(work, f"move excerpt to {target.upper()}")

    def add_from_edit(self) -> None:
        text = self.add_edit.text().strip()
        if not text or self.row is None:
            return
        bucket = self.add_bucket.currentData()
        work = self.working()
        work[bucket].append(text)
        self.selected = (bucket, len(work[bucket]) - 1)
        self.add_edit.clear()
        self._commit(work, f"add excerpt to {bucket.upper()}")

    def remove_selected(self) -> None:
        if self.selected is None:
            return
        b, i = self.selected
        work = self.working()
        if i >= len(work[b]):
            return
        work[b].pop(i)
        self.selected = (b, min(i, len(work[b]) - 1)) if work[b] else None
        self._commit(work, f"remove excerpt from {b.upper()}")

    def next_excerpt(self) -> None:
        order = [(b, i) for b in BUCKET_NAMES for i in range(len(self.working()[b]))]
        if not order:
            return
        pos = order.index(self.selected) if self.selected in order else -1
        self.select(*order[(pos + 1) % len(order)])

    def handle(self, action_id: str) -> bool:
        if self.row is None:
            return False
        if action_id.startswith("bucket_"):
            self.move_selected(action_id.removeprefix("bucket_"))
        elif action_id == "add_excerpt":
            sel = self.response.selection()
            if sel is not None:
                text = self.response.text_map.text[sel[0] : sel[1]]
                self.add_edit.setText(text.strip())
            self.add_edit.setFocus(Qt.FocusReason.ShortcutFocusReason)
        elif action_id == "remove_excerpt":
            self.remove_selected()
        elif action_id == "next_excerpt":
            self.next_excerpt()
        else:
            return False
        return True


VIEW = RubricView
