"""TRACe review view: the question, the documents with their sentence keys (relevant / utilized / both coloured),
the response sentences with supported / not supported and their supporting keys, and the four scores for the
annotator's labels and the human's side by side under both variants, recomputed on every change.

The human's labels belong to the sample (unit ''): relevant, utilized, unsupported, adherent and support. They
start as the annotator's; every toggle is one SetLabels command writing all five (one event, one undo step), so
the scores on the right always match what is stored. The status goes to the unit shown (annotator or a judge).
An LLM annotator's unit (`llm:<model>`, from `concord assign --scheme trace`) shows its labels on the annotator's
side instead of the dataset's; Accept then takes the LLM's labels.

Mouse: click a document sentence to select it (and, while a response sentence is selected, to add or remove it
as one of that sentence's supporting keys); Ctrl+click toggles relevant, Shift+click toggles utilized.
Keys: R / U toggle the selected document sentence as relevant / utilized, D / Shift+D select the next / previous
document sentence, O / Shift+O the next / previous response sentence, V toggles it supported, I adds or removes
the selected document sentence as its supporting key.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QEvent, QItemSelectionModel, QObject, QPoint, Qt
from PySide6.QtGui import QMouseEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from app.corrections import SetLabels, commit
from app.gui.blind import HIDDEN_NOTE, show_machine
from app.gui.actions import ActionSpec
from app.gui.models import Column, RecordTableModel, fmt_score
from app.gui.plaintext import plain_label
from app.gui.spantext import STYLES, Span, SpanTextView, Style
from app.gui.views.base import DetailView, ViewContext, column, make_table, side_by_side, status_label, title_label, view_layout
from app.store import Change
from calibration.schemes.trace.annotate import LLM_SOURCE_PREFIX, labels_from_value
from calibration.schemes.trace.metrics import SCORES, VARIANTS
from calibration.schemes.trace.reference import score_record
from calibration.schemes.trace.records import ANNOTATOR, TraceLabels, TraceRecord
from calibration.schemes.trace.scheme import SCHEME, truth_labels

# distinct colours for relevant, utilized and both (readable on white, and as a stronger tint when selected)
STYLES.setdefault("trace_rel", Style(background="#c8e6c9", selected_background="#81c784"))
STYLES.setdefault("trace_utl", Style(background="#bbdefb", selected_background="#64b5f6"))
STYLES.setdefault("trace_both", Style(background="#e1bee7", selected_background="#ba68c8"))
STYLES.setdefault("trace_none", Style(selected_background="#fff59d"))
STYLES.setdefault("trace_support", Style(underline="#e65100", foreground="#bf360c", selected_background="#ffcc80"))
LEGEND = (("trace_rel", "relevant"), ("trace_utl", "utilized"), ("trace_both", "relevant + utilized"),
          ("trace_support", "supports the selected response sentence"))

OWN_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("trace_relevant", "Toggle &relevant", ("R",), "view", "TRACe", "Toggle the selected document sentence as relevant"),
    ActionSpec("trace_utilized", "Toggle &utilized", ("U",), "view", "TRACe", "Toggle the selected document sentence as utilized"),
    ActionSpec("trace_next_doc", "Next &document sentence", ("D",), "view", "TRACe", "Select the next document sentence"),
    ActionSpec("trace_prev_doc", "Previous document sentence", ("Shift+D",), "view", "TRACe", "Select the previous document sentence"),
    ActionSpec("trace_next_resp", "Next resp&onse sentence", ("O",), "view", "TRACe", "Select the next response sentence"),
    ActionSpec("trace_prev_resp", "Previous response sentence", ("Shift+O",), "view", "TRACe", "Select the previous response sentence"),
    ActionSpec("trace_supported", "Toggle supported (&V)", ("V",), "view", "TRACe",
               "Mark the selected response sentence supported / not supported"),
    ActionSpec("trace_support_key", "Toggle supporting key (&I)", ("I",), "view", "TRACe",
               "Add or remove the selected document sentence as a supporting key of the selected response sentence"),
)


def _score(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else fmt_score(v)


SCORE_COLUMNS = (Column("score", "Score"), *(Column(f"{side}_{v}", f"{who}\n{v}", _score, True)
                 for v in VARIANTS for side, who in (("ann", "annotator"), ("hum", "human"))))
RESPONSE_COLUMNS = (Column("key", "Key"), Column("supported", "Supported"), Column("keys", "Supporting keys"),
                    Column("text", "Response sentence"))


class TraceView(DetailView):
    scheme = "trace"
    actions = frozenset(a.id for a in OWN_ACTIONS)
    action_specs = OWN_ACTIONS
    menu = "TRACe"

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.record: TraceRecord | None = None
        self.ann_labels = TraceLabels()  # the labels on the annotator's side: the record's, or an LLM unit's
        self.labels: dict[tuple[str, str], Any] = {}
        self.work: dict[str, Any] = {}
        self.doc_keys: list[str] = []
        self.doc_spans: list[tuple[int, int]] = []  # code-point range of each "[key] text" line
        self._starts: list[int] = []
        self.doc_sel: int | None = None
        self.resp_sel: int | None = None
        self._press: QPoint | None = None
        self._build()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        self.status = status_label()
        head.addWidget(self.title)
        head.addStretch(1)
        for kind, text in LEGEND:
            lab = plain_label(text)
            st = STYLES[kind]
            lab.setStyleSheet(f"background:{st.background or '#ffffff'};color:{st.foreground or '#000'};padding:1px 4px;")
            head.addWidget(lab)
        head.addWidget(self.status)
        self.question = QPlainTextEdit()
        self.question.setObjectName("trace_question")
        self.question.setReadOnly(True)
        self.question.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.question.setMaximumHeight(52)
        lay.addWidget(plain_label("Question"))
        lay.addWidget(self.question)

        self.documents = SpanTextView()
        self.documents.setObjectName("trace_documents")
        self.documents.viewport().installEventFilter(self)
        left = column("Documents (click: select / supporting key; Ctrl+click: relevant; Shift+click: utilized)",
                      (self.documents, 1))

        self.response_model = RecordTableModel(RESPONSE_COLUMNS, self)
        self.response_table = make_table(self.response_model, 3)
        self.response_table.setObjectName("trace_response")
        self.response_table.clicked.connect(lambda idx: self._resp_clicked(idx.row()))
        self.score_model = RecordTableModel(SCORE_COLUMNS, self)
        self.score_table = make_table(self.score_model, 0)
        self.score_table.setObjectName("trace_scores")
        self.judge_info = plain_label(wrap=True, selectable=True)
        right = column("Response sentences (O selects, V toggles supported, I toggles a supporting key)",
                       (self.response_table, 3), "Scores: annotator's labels vs the human's, both variants",
                       (self.score_table, 2), self.judge_info)
        lay.addWidget(side_by_side(left, right, (2, 3), share=True), 1)  # the scores table's five columns in view
        self.note = plain_label(wrap=True, selectable=True)
        self.note.setStyleSheet("color:#5d4037;")
        lay.addWidget(self.note)

    # -- data ------------------------------------------------------------------------------------------------------
    def reset(self) -> None:
        super().reset()
        self.record, self.labels, self.work, self.doc_sel, self.resp_sel = None, {}, {}, None, None

    def annotator_labels(self) -> dict[str, Any]:
        assert self.record is not None
        m = SCHEME.machine_label(replace(self.record, labels=self.ann_labels), ANNOTATOR) or {}
        rkeys = self.record.response_keys
        unsup = m.get("unsupported")
        return {"relevant": list(m.get("relevant") or []), "utilized": list(m.get("utilized") or []),
                "unsupported": [k for k in rkeys if k in set(unsup)] if unsup is not None else [],
                "support": {k: list((m.get("support") or {}).get(k, [])) for k in rkeys}}

    def show_unit(self, row: dict[str, Any]) -> None:
        changed = self.row is None or row["sample_id"] != self.row["sample_id"]
        self.row = row
        if changed or self.record is None:
            found = self.project.samples.records("trace", [row["sample_id"]])
            if not found:
                raise LookupError(f"sample {row['sample_id']!r} could not be read back as a trace record")
            self.record = found[0]
            self.doc_sel, self.resp_sel = None, None
            self._render_text()
        self._load_labels()
        self._render()

    def refresh(self) -> None:
        if self.row is None or self.record is None:
            return
        self._load_labels()
        self._render()

    def _load_labels(self) -> None:
        assert self.row is not None
        self.labels = self.sample_labels(self.row["sample_id"])
        self.ann_labels = self._unit_labels()
        ann = self.annotator_labels()
        human = {k: self.labels.get(("", k)) for k in ("relevant", "utilized", "unsupported", "support")}
        self.has_human = any(v is not None for v in human.values())
        if self.machine_hidden():  # the annotator starts from nothing, not from the annotator's (LLM's) labels
            ann = {"relevant": [], "utilized": [], "unsupported": [], "support": {k: [] for k in ann["support"]}}
        self.work = {k: (human[k] if human[k] is not None else ann[k]) for k in ann}

    def _unit_labels(self) -> TraceLabels:
        """The record's own labels, or for an LLM annotator's unit its stored labels (none when it failed)."""
        assert self.record is not None and self.row is not None
        unit = self.row["unit"]
        if not unit.startswith(LLM_SOURCE_PREFIX):
            return self.record.labels
        stored = self.project.samples.machine_label(self.row["sample_id"], unit, unit)
        value = None if stored is None else stored.get("value")
        return TraceLabels() if value is None else labels_from_value(value)

    # -- rendering -------------------------------------------------------------------------------------------------
    def _render_text(self) -> None:
        """Documents as "[0a] sentence" lines, once per sample; spans remember each sentence's range."""
        rec = self.record
        assert rec is not None
        parts: list[str] = []
        pos = 0
        self.doc_keys, self.doc_spans = [], []
        for i, doc in enumerate(rec.documents_sentences):
            head = f"Document {i}\n"
            parts.append(head)
            pos += len(head)
            for key, text in doc:
                line = f"[{key}] {text}\n"
                self.doc_keys.append(key)
                self.doc_spans.append((pos, pos + len(line) - 1))
                parts.append(line)
                pos += len(line)
            parts.append("\n")
            pos += 1
        self._starts = [a for a, _ in self.doc_spans]
        self.documents.set_content("".join(parts), [])
        self.question.setPlainText(rec.question)
        self.title.setText(f"Sample {rec.id}")

    def _doc_spans(self) -> list[Span]:
        rel, utl = set(self.work["relevant"]), set(self.work["utilized"])
        sup: set[str] = set()
        if self.resp_sel is not None and self.record is not None:
            sup = set(self.work["support"].get(self.record.response_keys[self.resp_sel], []))
        out = []
        for i, (key, (a, b)) in enumerate(zip(self.doc_keys, self.doc_spans)):
            kind = ("trace_both" if key in rel and key in utl else "trace_rel" if key in rel
                    else "trace_utl" if key in utl else "trace_support" if key in sup else "trace_none")
            if kind == "trace_none" and i != self.doc_sel:
                continue  # unmarked: no span to draw (a click finds the sentence through doc_index_at)
            tags = [t for t, on in (("relevant", key in rel), ("utilized", key in utl), ("supporting", key in sup)) if on]
            out.append(Span(a, b, kind, ("doc", i), f"{key}: {', '.join(tags) or 'not marked'}"))
            if key in sup and kind != "trace_support":
                out.append(Span(a, a + len(key) + 2, "trace_support", ("sup", i), f"{key} supports the selected sentence"))
        return out

    def _render(self) -> None:
        rec, row = self.record, self.row
        assert rec is not None and row is not None
        status = self.labels.get((row["unit"], "status")) or "unlabeled"
        hidden = self.machine_hidden()
        self.status.setText(f"Unit {row['unit']} · status: {status}"
                            + (f" · {HIDDEN_NOTE}" if hidden else "" if self.has_human else " · showing the annotator's labels"))
        for i, c in enumerate(SCORE_COLUMNS):  # the annotator's (machine) scores: not before the human's decision
            self.score_table.setColumnHidden(i, hidden and c.key.startswith("ann_"))
        show_machine(hidden, self.judge_info)
        self.documents.set_spans(self._doc_spans())
        if self.doc_sel is not None:  # (doc_sel is None only on a new sample, whose set_content cleared the selection)
            self.documents.set_selected([("doc", self.doc_sel)])
        unsup = set(self.work["unsupported"])
        self.response_model.set_records([
            {"key": k, "supported": "no" if k in unsup else "yes", "keys": ", ".join(self.work["support"].get(k, [])),
             "text": text, "_tip": text, "_fg": "#c62828" if k in unsup else None}
            for k, text in rec.response_sentences])
        self._sync_response_selection()
        self._render_scores()
        note = self.labels.get((row["unit"], "note"))
        self.note.setText(f"Note: {note}" if note else "")
        self.note.setVisible(bool(note))

    def human_trace_labels(self) -> TraceLabels:
        assert self.record is not None
        return truth_labels(self.record, {"relevant": self.work["relevant"], "utilized": self.work["utilized"],
                                          "unsupported": self.work["unsupported"]})

    def scores(self) -> dict[str, dict[str, dict[str, float]]]:
        """variant -> side ("ann", "hum") -> score -> value, for the labels shown."""
        assert self.record is not None
        # the plain per-record formulas (reference.py; a test keeps them equal to the vectorised ones): a pandas
        # frame per render would cost more than the rest of the scores table
        human = self.human_trace_labels()
        return {v: {"ann": score_record(self.record, v, self.ann_labels), "hum": score_record(self.record, v, human)}
                for v in VARIANTS}

    def _render_scores(self) -> None:
        s = self.scores()
        hidden = self.machine_hidden()  # no tint saying where the human's scores differ from the annotator's
        recs = []
        for name in (*SCORES, "average"):
            r: dict[str, Any] = {"score": name}
            for v in VARIANTS:
                r[f"ann_{v}"], r[f"hum_{v}"] = s[v]["ann"][name], s[v]["hum"][name]
            differs = any(not (math.isnan(r[f"ann_{v}"]) and math.isnan(r[f"hum_{v}"])) and r[f"ann_{v}"] != r[f"hum_{v}"]
                          for v in VARIANTS)
            r["_bg"] = "#fff9c4" if differs and not hidden else None
            recs.append(r)
        self.score_model.set_records(recs)
        assert self.record is not None and self.row is not None
        judge = self.record.judges.get(self.row["unit"])
        self.judge_info.setText("" if not judge else f"Judge {self.row['unit']}: "
                                + ", ".join(f"{k} {_score(v)}" for k, v in judge.items()))

    def _sync_response_selection(self) -> None:
        sm = self.response_table.selectionModel()
        sm.blockSignals(True)
        if self.resp_sel is not None and self.resp_sel < self.response_model.rowCount():
            idx = self.response_model.index(self.resp_sel, 0)
            sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        else:
            sm.clearSelection()
        sm.blockSignals(False)

    # -- selection and mouse ---------------------------------------------------------------------------------------
    def _resp_clicked(self, row: int) -> None:
        self.resp_sel = None if row == self.resp_sel or row < 0 else row  # a second click deselects
        self._render()

    def doc_index_at(self, x: int, y: int) -> int | None:
        """The document sentence under a viewport point (None between sentences and on document headings)."""
        cur = self.documents.cursorForPosition(QPoint(x, y))
        rect = self.documents.cursorRect(cur)
        if not rect.top() - 2 <= y <= rect.bottom() + 2:
            return None
        pos = self.documents.text_map.from_qt(cur.position())
        i = bisect.bisect_right(self._starts, pos) - 1
        if i >= 0 and self.doc_spans[i][0] <= pos <= self.doc_spans[i][1]:
            return i
        return None

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.documents.viewport() and isinstance(event, QMouseEvent) \
                and event.button() == Qt.MouseButton.LeftButton:
            pos = event.position().toPoint()
            if event.type() == QEvent.Type.MouseButtonPress:
                self._press = pos
            elif event.type() == QEvent.Type.MouseButtonRelease and self._press is not None \
                    and (pos - self._press).manhattanLength() < 5:  # a click, not a drag selecting text
                self._press = None
                i = self.doc_index_at(pos.x(), pos.y())
                if i is not None:
                    cur = self.documents.textCursor()
                    cur.clearSelection()  # Shift+click would otherwise extend a text selection
                    self.documents.setTextCursor(cur)
                    self.click_document_sentence(i, event.modifiers())
        return super().eventFilter(obj, event)

    def click_document_sentence(self, i: int, modifiers: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
        self.doc_sel = i
        if modifiers & Qt.KeyboardModifier.ControlModifier:
            self.toggle_doc("relevant")
        elif modifiers & Qt.KeyboardModifier.ShiftModifier:
            self.toggle_doc("utilized")
        elif self.resp_sel is not None:
            self.toggle_support_key()
        else:
            self._render()

    # -- edits -----------------------------------------------------------------------------------------------------
    def _commit(self, work: dict[str, Any], text: str, status: str = "corrected") -> None:
        assert self.row is not None and self.record is not None
        self.ctx.session.do(self._command(work, status, text))

    def _command(self, work: dict[str, Any], status: str, text: str) -> SetLabels:
        assert self.row is not None and self.record is not None
        order = {k: i for i, k in enumerate(self.doc_keys)}
        rorder = {k: i for i, k in enumerate(self.record.response_keys)}
        sid = self.row["sample_id"]
        clean = {
            "relevant": sorted(set(work["relevant"]), key=lambda k: order.get(k, len(order))),
            "utilized": sorted(set(work["utilized"]), key=lambda k: order.get(k, len(order))),
            "unsupported": sorted(set(work["unsupported"]), key=lambda k: rorder.get(k, len(rorder))),
            "support": {k: list(v) for k, v in work["support"].items()},
        }
        return SetLabels((*(Change(sid, "", k, v) for k, v in clean.items()),
                          Change(sid, "", "adherent", not clean["unsupported"]),
                          Change(sid, self.row["unit"], "status", status)), text)

    def _copy(self) -> dict[str, Any]:
        return {"relevant": list(self.work["relevant"]), "utilized": list(self.work["utilized"]),
                "unsupported": list(self.work["unsupported"]),
                "support": {k: list(v) for k, v in self.work["support"].items()}}

    def toggle_doc(self, kind: str) -> None:
        if self.doc_sel is None:
            self.message.emit("Select a document sentence first (click it, or D)")
            return
        key = self.doc_keys[self.doc_sel]
        work = self._copy()
        keys = work[kind]
        if key in keys:
            work[kind] = [k for k in keys if k != key]
        else:
            keys.append(key)
        self._commit(work, f"{'unmark' if key not in work[kind] else 'mark'} {key} {kind}")

    def toggle_supported(self) -> None:
        if self.resp_sel is None or self.record is None:
            self.message.emit("Select a response sentence first (click it, or O)")
            return
        key = self.record.response_keys[self.resp_sel]
        work = self._copy()
        unsup = work["unsupported"]
        work["unsupported"] = [k for k in unsup if k != key] if key in unsup else [*unsup, key]
        self._commit(work, f"mark {key} {'supported' if key in unsup else 'not supported'}")

    def toggle_support_key(self) -> None:
        if self.resp_sel is None or self.doc_sel is None or self.record is None:
            self.message.emit("Select a response sentence (O) and a document sentence (D) first")
            return
        rkey, dkey = self.record.response_keys[self.resp_sel], self.doc_keys[self.doc_sel]
        work = self._copy()
        keys = work["support"].setdefault(rkey, [])
        work["support"][rkey] = [k for k in keys if k != dkey] if dkey in keys else [*keys, dkey]
        self._commit(work, f"{'remove' if dkey in keys else 'add'} {dkey} as support of {rkey}")

    def accept_command(self) -> SetLabels | None:
        if self.row is None or self.record is None:
            return None
        if self.machine_hidden():  # the human commits their own labels; the annotator's are revealed after
            mine = self._command(self.work, "corrected", "").changes[:-1]
            theirs = self._command(self.annotator_labels(), "accepted", "").changes[:-1]
            return commit(self.row["sample_id"], self.row["unit"], mine, mine == theirs, "commit my labels")
        return self._command(self.annotator_labels(), "accepted", "accept the annotator's labels")

    def _step(self, attr: str, n: int, delta: int) -> None:
        if n == 0:
            return
        cur = getattr(self, attr)
        setattr(self, attr, (0 if delta > 0 else n - 1) if cur is None else (cur + delta) % n)
        self._render()

    def handle(self, action_id: str) -> bool:
        if self.row is None or self.record is None:
            return False
        if action_id == "trace_relevant":
            self.toggle_doc("relevant")
        elif action_id == "trace_utilized":
            self.toggle_doc("utilized")
        elif action_id in ("trace_next_doc", "trace_prev_doc"):
            self._step("doc_sel", len(self.doc_keys), 1 if action_id == "trace_next_doc" else -1)
        elif action_id in ("trace_next_resp", "trace_prev_resp"):
            self._step("resp_sel", len(self.record.response_keys), 1 if action_id == "trace_next_resp" else -1)
        elif action_id == "trace_supported":
            self.toggle_supported()
        elif action_id == "trace_support_key":
            self.toggle_support_key()
        else:
            return False
        return True

    def units_of_sample(self) -> list[str]:
        if self.record is None or self.row is None:
            return []
        return [u["unit"] for u in self.project.units.units_for_sample(self.row["sample_id"])]  # LLM annotator units too


VIEW = TraceView
