"""RGB review view: one model's answer to one RGB query, what each checker decided about it, and the human's call.

Left: the query, the answer (and fake answer), the passages the model saw, each marked positive / negative /
counterfactual by the pool it came from, and the response with every ground-truth hit (green), fake-answer hit
(purple), rejection phrase (orange) and error keyword (red) highlighted: the phrases of both checkers' catalogues,
so a phrase one checker ignores is visible too. Right: the four decisions under rgb_original, rgb_extended, every
LLM judge stored for the unit (`llm_judge:<model>`) and the human, side by side; accuracy against noise rate for
this model across the project (each checker and the humans). Keys 5, 6, Shift+E and Shift+X flip the human's
correct / rejected / error detected / error corrected (starting from the chosen checker's call), H chooses the
checker that "accept" (A) takes. Every change is one undoable SetLabels command; all data is shown as plain text.
"""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QPlainTextEdit, QWidget

from app.corrections import SetLabels, commit
from app.gui.blind import HIDDEN_NOTE
from app.gui.actions import ActionSpec
from app.gui.charts import SeriesChart
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.spantext import STYLES, Span, SpanTextView, Style
from app.gui.views.base import DetailView, ViewContext, column, make_table, side_by_side, status_label, title_label, view_layout
from app.store import Change
from calibration.grounding import find_all_casefold
from calibration.schemes.rgb.checkers import check_records
from calibration.schemes.rgb.config import CATALOGUE, PRESETS
from calibration.schemes.rgb.features import LABELS, decide, features_from_records
from calibration.schemes.rgb.records import RGBRecord, answer_strings

SCHEME = "rgb"
JUDGE_PREFIX = "llm_judge:"
# unique across every view's actions (tests/test_gui_rgb.py): 1-4, 7-9, T, Y and most letters are taken
KEYS = {"correct": "5", "rejected": "6", "error_detected": "Shift+E", "error_corrected": "Shift+X"}
TITLES = {"correct": "Correct", "rejected": "Rejected", "error_detected": "Error detected",
          "error_corrected": "Error corrected"}
# span styles of this view, added to the shared table under names no other view uses
OWN_STYLES = {
    "rgb_hit": Style(background="#c8e6c9", selected_background="#66bb6a"),
    "rgb_fake": Style(background="#e1bee7", selected_background="#ba68c8"),
    "rgb_reject": Style(background="#ffe0b2", selected_background="#ffa726"),
    "rgb_error": Style(background="#ffcdd2", selected_background="#ef5350"),
    "rgb_positive": Style(foreground="#1b5e20"),
    "rgb_negative": Style(foreground="#616161"),
    "rgb_counterfactual": Style(foreground="#b71c1c"),
}
for _k, _s in OWN_STYLES.items():
    STYLES.setdefault(_k, _s)
LEGEND = (("rgb_hit", "answer"), ("rgb_fake", "fake answer"), ("rgb_reject", "rejection phrase"),
          ("rgb_error", "error keyword"))
NOISE_TASKS = ("noise", "rejection")  # RGB's accuracy-vs-noise figure: its plain data, noise rate 1 = rejection
REJECTION_PHRASES = tuple(dict.fromkeys(p for v in CATALOGUE.values() for p in v["rejection"]))
ERROR_KEYWORDS = tuple(dict.fromkeys(p for v in CATALOGUE.values() for p in v["error"]))


def occurrences(text: str, needle: str) -> list[tuple[int, int]]:
    """Case-insensitive occurrences of `needle` in `text`, as code-point offsets into `text` itself."""
    return find_all_casefold(needle, text) if needle else []  # literal search: a needle is data, never a pattern


def response_spans(record: RGBRecord, text: str) -> list[Span]:
    """Ground-truth and fake-answer hits, rejection phrases and error keywords in `text`."""
    spans: list[Span] = []
    groups = (("rgb_hit", "answer", answer_strings(record.answer)), ("rgb_fake", "fake answer", record.fake_strings),
              ("rgb_reject", "rejection phrase", REJECTION_PHRASES), ("rgb_error", "error keyword", ERROR_KEYWORDS))
    for kind, what, needles in groups:
        for j, needle in enumerate(needles):
            for a, b in occurrences(text, needle):
                spans.append(Span(a, b, kind, (kind, j), f"{what}: {needle}"))
    return spans


def passage_kind(record: RGBRecord, doc: str) -> str:
    """Which of the record's pools a passage came from: positive, counterfactual, negative, or '' (unknown)."""
    positive = {d for p in record.positive or () for d in ((p,) if isinstance(p, str) else p)}
    if doc in set(record.positive_wrong or ()):
        return "counterfactual"
    if doc in positive:
        return "positive"
    if doc in set(record.negative or ()):
        return "negative"
    return ""


def passages_text(record: RGBRecord) -> tuple[str, list[Span]]:
    """The docs as one text, each under a header naming its pool, with answer hits marked in the passages too."""
    parts: list[str] = []
    spans: list[Span] = []
    pos = 0
    for i, doc in enumerate(record.docs):
        kind = passage_kind(record, doc)
        head = f"[{i + 1}] {kind or 'passage'}\n"
        if kind:
            spans.append(Span(pos, pos + len(head) - 1, f"rgb_{kind}", ("doc", i), f"passage {i + 1}: {kind}"))
        body_start = pos + len(head)
        for s in response_spans(record, doc):
            if s.kind in ("rgb_hit", "rgb_fake"):
                spans.append(Span(body_start + s.start, body_start + s.end, s.kind, s.key, s.tooltip))
        chunk = head + doc + "\n\n"
        parts.append(chunk)
        pos += len(chunk)
    return "".join(parts).rstrip("\n"), spans


def _key(kind: str) -> str:
    return KEYS[kind].replace("Shift+", "⇧")


def _mark(v: Any) -> str:
    return "—" if v is None else ("yes" if v else "no")


class RGBView(DetailView):
    scheme = SCHEME
    menu = "RGB"
    action_specs = (
        *(ActionSpec(f"rgb_{k}", f"Human: {TITLES[k].lower()} yes/no", (KEYS[k],), "view", "RGB",
                     f"Flip the human's '{TITLES[k].lower()}' decision (from the chosen checker's call)")
          for k in LABELS),
        ActionSpec("rgb_checker", "C&hecker to accept", ("H",), "view", "RGB",
                   "Choose whose decisions Accept takes: rgb_original, rgb_extended or an LLM judge"),
    )
    actions = frozenset({"next_checker", *(a.id for a in action_specs)})
    score_title = "Correct"

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.record: RGBRecord | None = None
        self.decisions: dict[str, dict[str, Any]] = {}  # source -> decision -> bool (judges: some)
        self.human: dict[str, Any] = {}
        self.labels: dict[tuple[str, str], Any] = {}
        self.preferred = "rgb_original"  # what H chose; a unit without that judge falls back to rgb_original
        self._judges: dict[str, dict[tuple[str, str], Any]] | None = None
        self._chart_model: str | None = None
        self._build()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        head.addWidget(self.title, 1)
        for kind, text in LEGEND:
            lab = plain_label(text)
            lab.setStyleSheet(f"background:{OWN_STYLES[kind].background};padding:1px 4px;")
            head.addWidget(lab)
        self.status = status_label()
        self.status.setObjectName("rgb_status")
        head.addWidget(self.status)

        self.info = plain_label(wrap=True, selectable=True)
        self.info.setObjectName("rgb_info")
        self.query = QPlainTextEdit()
        self.query.setObjectName("rgb_query")
        self.query.setReadOnly(True)
        self.query.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.query.setMaximumHeight(54)
        self.passages = SpanTextView()
        self.passages.setObjectName("rgb_passages")
        self.response = SpanTextView()
        self.response.setObjectName("rgb_response")
        left = column(self.info, "Query", self.query, "Response", (self.response, 2),
                      "Passages the model saw (positive · negative · counterfactual)", (self.passages, 3))

        self.table_title = plain_label(wrap=True)
        columns = [Column("source", "Source")] + [
            Column(k, f"{TITLES[k].split()[-1].capitalize() if k.startswith('error') else TITLES[k]} {_key(k)}", _mark,
                   tip=f"{TITLES[k]}: key {KEYS[k]} flips the human's")
            for k in LABELS]
        self.decision_model = RecordTableModel(columns, self)
        self.decision_table = make_table(self.decision_model, (1, 2, 3, 4))
        self.decision_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.decision_table.setObjectName("rgb_decisions")
        self.chart = SeriesChart()
        self.chart.setObjectName("rgb_noise_chart")
        self.chart.empty_text = "No noise rates for this model"
        self.note = plain_label(wrap=True, selectable=True)
        self.note.setStyleSheet("color:#5d4037;")
        right = column(self.table_title, (self.decision_table, 1),
                       "Accuracy (%) against noise rate: this model's noise and rejection units", (self.chart, 3),
                       self.note)
        lay.addWidget(side_by_side(left, right, (3, 2)), 1)

    # -- data ------------------------------------------------------------------------------------------------------
    def judges(self) -> dict[str, dict[tuple[str, str], Any]]:
        if self._judges is None:
            self._judges = self.project.samples.machine_labels(SCHEME, JUDGE_PREFIX)
        return self._judges

    def sources(self) -> list[str]:
        return list(self.decisions)

    @property
    def chosen(self) -> str:
        """The checker Accept takes for the shown unit."""
        return self.preferred if self.preferred in self.decisions else "rgb_original"

    def reset(self) -> None:
        super().reset()
        self.record, self.decisions, self.human, self.labels = None, {}, {}, {}

    def show_unit(self, row: dict[str, Any]) -> None:
        sid, unit = row["sample_id"], row["unit"]
        records = self.project.samples.records(SCHEME, [sid])
        if not records:
            raise LookupError(f"sample {sid!r} could not be read back as an rgb record")
        if unit not in records[0].units:
            raise LookupError(f"sample {sid!r} has no response of model {unit!r}")
        self.row, self.record = row, records[0].for_unit(unit)
        self.decisions = {name: d.as_dict() for name, d in
                          zip(PRESETS, (check_records([self.record], cfg)[0] for cfg in PRESETS.values()))}
        for source, by_unit in self.judges().items():
            value = by_unit.get((sid, unit))
            if value:
                self.decisions[source] = {k: value.get(k) for k in LABELS}
        self._render_record()
        self._load_labels()
        if self._chart_model != unit:
            self._render_chart(unit)

    def refresh(self) -> None:
        if self.row is not None and self.record is not None:
            self._load_labels()

    def _load_labels(self) -> None:
        assert self.row is not None
        self.labels = self.sample_labels(self.row["sample_id"])
        unit = self.row["unit"]
        self.human = {k: self.labels.get((unit, k)) for k in LABELS}
        self._render_decisions()
        status = self.labels.get((unit, "status")) or "unlabeled"
        self.status.setText(f"status: {status}")
        note = self.labels.get((unit, "note"))
        self.note.setText(f"Note: {note}" if note else "")
        self.note.setVisible(bool(note))

    def _render_record(self) -> None:
        r = self.record
        assert r is not None and self.row is not None
        self.title.setText(f"Sample {r.id} · model {self.row['unit']}")
        answer = " | ".join(answer_strings(r.answer))
        bits = [f"task {r.task}", f"language {r.language}",
                f"noise rate {'—' if r.noise_rate is None else f'{r.noise_rate:g}'}", f"answer: {answer}"]
        if r.fakeanswer is not None:
            bits.append(f"fake answer: {' | '.join(r.fake_strings)}")
        self.info.setText(" · ".join(bits))
        self.query.setPlainText(r.query)
        text = r.response or ""
        self.response.set_content(text, response_spans(r, text))
        ptext, pspans = passages_text(r)
        self.passages.set_content(ptext, pspans)

    def _render_decisions(self) -> None:
        """One row per source (checkers, judges, the human), one column per decision; a source row is tinted
        where it differs from the human's decisions, the chosen one is marked ✓."""
        records = []
        hidden = self.machine_hidden()  # the checkers' and judges' rows wait for the human's own decision
        for s in [] if hidden else self.sources():
            rec: dict[str, Any] = {"source": f"{s} ✓" if s == self.chosen else s, **self.decisions[s]}
            differs = [k for k in LABELS if self.human.get(k) is not None and rec.get(k) is not None
                       and bool(rec[k]) != bool(self.human[k])]
            rec["_bg"] = "#ffcdd2" if differs else None
            rec["_tip"] = f"differs from the human on: {', '.join(TITLES[k].lower() for k in differs)}" if differs else ""
            rec["_bold"] = s == self.chosen
            records.append(rec)
        records.append({"source": "human", **self.human, "_bg": "#e3f2fd"})
        self.decision_model.set_records(records)
        self.table_title.setText(f"Decisions: the human's; {HIDDEN_NOTE}" if hidden else
                                 f"Decisions (✓ = what Accept takes: {self.chosen}; H changes it; "
                                 "red: differs from the human)")

    def _render_chart(self, model: str) -> None:
        """Accuracy against noise rate for `model`: both checkers over its units, the humans over theirs."""
        self._chart_model = model
        records = [r.for_unit(model) for r in self.project.samples.records(SCHEME)
                   if model in r.units and r.task in NOISE_TASKS]
        rated = [r for r in records if r.noise_rate is not None]
        rates = sorted({float(r.noise_rate) for r in rated})  # type: ignore[arg-type]
        series: list[tuple[str, list[float]]] = []
        if rated:
            d = decide(features_from_records(rated), list(PRESETS.values()))
            for i, name in enumerate(PRESETS):
                series.append((name, [_mean([c for r, c in zip(rated, d.correct[i]) if r.noise_rate == x]) for x in rates]))
            human = {row["sample_id"]: bool(row["value"]) for row in self.project.decisions.label_rows(["correct"])
                     if row["unit"] == model}
            series.append(("human", [_mean([human[r.id] for r in rated if r.noise_rate == x and r.id in human])
                                     for x in rates]))
        self.chart.set_data(rates, series, "noise rate", "accuracy %")

    # -- decisions -------------------------------------------------------------------------------------------------
    def accept_command(self) -> SetLabels | None:
        if self.row is None:
            return None
        sid, unit = self.row["sample_id"], self.row["unit"]
        values = {k: v for k, v in self.decisions.get(self.chosen, {}).items() if v is not None}
        if self.machine_hidden():  # the human's own calls (unset: no); the checkers' are revealed after
            mine = {k: bool(self.human.get(k)) for k in values}
            return commit(sid, unit, tuple(Change(sid, unit, k, v) for k, v in mine.items()),
                          mine == {k: bool(v) for k, v in values.items()}, "commit my decisions")
        changes = tuple(Change(sid, unit, k, bool(v)) for k, v in values.items())
        return SetLabels((*changes, Change(sid, unit, "status", "accepted")), f"accept {self.chosen}")

    def flip(self, kind: str) -> None:
        assert self.row is not None
        current = self.human.get(kind)
        if current is None and self.machine_hidden():
            current = False  # from "no", not from the hidden checker's call
        if current is None:
            current = self.decisions.get(self.chosen, {}).get(kind)
            if current is None:
                current = self.decisions["rgb_original"][kind]
        sid, unit = self.row["sample_id"], self.row["unit"]
        new = not bool(current)
        self.ctx.session.do(SetLabels((Change(sid, unit, kind, new), Change(sid, unit, "status", "corrected")),
                                      f"{TITLES[kind].lower()}: {'yes' if new else 'no'}"))

    def choose_next_checker(self) -> None:
        sources = self.sources()
        self.preferred = sources[(sources.index(self.chosen) + 1) % len(sources)]
        self._render_decisions()
        self.message.emit(f"Accept now takes {self.chosen}'s decisions")

    def units_of_sample(self) -> list[str]:
        if self.row is None:
            return []
        return [u["unit"] for u in self.project.units.units_for_sample(self.row["sample_id"])]

    def handle(self, action_id: str) -> bool:
        if self.row is None:
            return False
        if action_id.startswith("rgb_") and action_id[4:] in LABELS:
            self.flip(action_id[4:])
        elif action_id == "rgb_checker":
            self.choose_next_checker()
        elif action_id == "next_checker":
            units, unit = self.units_of_sample(), self.row["unit"]
            if len(units) > 1 and unit in units:
                self.request_unit.emit(self.row["sample_id"], units[(units.index(unit) + 1) % len(units)])
        else:
            return False
        return True


def _mean(values: list[Any]) -> float:
    return 100.0 * sum(bool(v) for v in values) / len(values) if values else math.nan


VIEW = RGBView
