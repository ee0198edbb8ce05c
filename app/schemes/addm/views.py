"""ADDM review view: a business's reviews with the ground-truth, claimed and human snippets highlighted; the
method's claimed incidents, each valid or invalid against the human's truth, with severity and modifiers fixable
by keys; missing incidents added by selecting text in a review; the human verdict; and the three scores with the
process components for this business and for all businesses, against the ground truth and under the human's
corrections, recomputed on every change. Each verdict shows the policy's (addm_v2) point sum next to it.

The human's truth belongs to the business (unit ''): `incidents` (starting from the ground truth) and `verdict`.
Every edit is one SetLabels command (one undo step) writing the whole incidents list, plus status "corrected" for
the method shown. The rules of the edits live in calibration/schemes/addm/review.py.

Keys (menu ADDM): T next incident, Y valid / invalid, 7 / 8 / 9 severity mild / moderate / severe, Shift+F false
assurance, Shift+S dismissive staff, Shift+Insert add the selected review text as a missing incident,
Shift+L / Shift+H / Shift+C human verdict Low / High / Critical (again: clear).
"""
from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QItemSelectionModel
from PySide6.QtWidgets import QHBoxLayout, QLabel, QWidget

from app.corrections import SetLabels, commit
from app.gui.blind import HIDDEN_NOTE, show_machine
from app.gui.actions import ActionSpec
from app.gui.models import Column, RecordTableModel
from app.gui.plaintext import plain_label
from app.gui.spantext import LEGEND, STYLES, Span, SpanTextView, Style
from app.gui.views.base import (view_layout, 
    DetailView, ViewContext, column, make_table, side_by_side, status_label, title_label, unit_combo,
)
from app.store import Change
from calibration.schemes.addm import review as rv
from calibration.schemes.addm.evaluation import COMPONENT_LABELS
from calibration.schemes.addm.policy import ADDM_V2, COMPONENTS, MODIFIERS, VERDICTS
from calibration.schemes.addm.records import AddmSample, Incident
from calibration.schemes.addm.scheme import SCHEME

STYLES.setdefault("addm_human", Style(background="#bbdefb", selected_background="#64b5f6"))
LEGEND_ROWS = (("gt", LEGEND["gt"]), ("pred", "claimed by the method (orange)"), ("addm_human", "human incident (blue)"))
# Above this many businesses the all-business scores are left to `concord evaluate`: reading every record back
# (snippets located again) costs ~0.3 ms each, on the GUI thread when the first unit is shown.
CORPUS_LIMIT = 3_000

OWN_ACTIONS: tuple[ActionSpec, ...] = (
    ActionSpec("addm_next", "Select nex&t incident", ("T",), "view", "ADDM", "Cycle through the incidents"),
    ActionSpec("addm_valid", "Incident valid / invalid (&Y)", ("Y",), "view", "ADDM",
               "Toggle the selected incident: valid (in the human's truth) or invalid (not an incident)"),
    ActionSpec("addm_mild", "Severity mild", ("7",), "view", "ADDM", "Set the selected incident's severity to mild"),
    ActionSpec("addm_moderate", "Severity moderate", ("8",), "view", "ADDM", "Set the selected incident's severity to moderate"),
    ActionSpec("addm_severe", "Severity severe", ("9",), "view", "ADDM", "Set the selected incident's severity to severe"),
    ActionSpec("addm_false_assurance", "Toggle false assurance", ("Shift+F",), "view", "ADDM",
               "Add or remove the 'False assurance' modifier of the selected incident"),
    ActionSpec("addm_dismissive", "Toggle dismissive staff", ("Shift+S",), "view", "ADDM",
               "Add or remove the 'Dismissive staff' modifier of the selected incident"),
    ActionSpec("addm_add", "Add selected text as an incident", ("Shift+Insert",), "view", "ADDM",
               "Add the text selected in a review as a missing incident (mild; fix it with 7 / 8 / 9)"),
    ActionSpec("addm_low", "Human verdict: Low Risk", ("Shift+L",), "view", "ADDM", "Set (or clear) the human verdict Low Risk"),
    ActionSpec("addm_high", "Human verdict: High Risk", ("Shift+H",), "view", "ADDM", "Set (or clear) the human verdict High Risk"),
    ActionSpec("addm_critical", "Human verdict: Critical Risk", ("Shift+C",), "view", "ADDM",
               "Set (or clear) the human verdict Critical Risk"),
)
_SEVERITY = {"addm_mild": "mild", "addm_moderate": "moderate", "addm_severe": "severe"}
_MODIFIER = {"addm_false_assurance": MODIFIERS[0], "addm_dismissive": MODIFIERS[1]}
_VERDICT = {"addm_low": VERDICTS[0], "addm_high": VERDICTS[1], "addm_critical": VERDICTS[2]}
_SHORT = {MODIFIERS[0]: "+FA", MODIFIERS[1]: "+DS"}


def _inc(x: Incident | dict[str, Any] | None) -> str:
    if x is None:
        return ""
    sev, mods = (x.severity, x.modifiers) if isinstance(x, Incident) else (x["severity"], x.get("modifiers") or [])
    return " ".join([sev, *(_SHORT.get(m, "+" + m) for m in mods)])


def _pct(v: Any) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.1f}%"


INCIDENT_COLUMNS = (
    Column("n", "#"), Column("review", "Review"), Column("claimed", "Claimed", tip="The method's severity and modifiers"),
    Column("gt", "Ground truth"), Column("human", "Human", tip="The human's truth (starts as the ground truth)"),
    Column("state", "Valid", tip="valid: the truth has an incident in this review; invalid: it has none; "
                                 "missed: an incident the method did not claim"),
    Column("snippet", "Snippet"),
)
SCORE_COLUMNS = (Column("figure", "Figure"),
                 Column("b_gt", "This · GT", _pct, True, "This business against the record's ground truth"),
                 Column("b_h", "This · human", _pct, True, "This business under the human's incidents and verdict"),
                 Column("a_gt", "All · GT", _pct, True, "All businesses against the ground truth"),
                 Column("a_h", "All · human", _pct, True, "All businesses, the human labels replacing the ground truth "
                                                          "where given"))
_STATE_BG = {"valid": "#e8f5e9", "invalid": "#ffebee", "missed": "#fff8e1"}


class AddmView(DetailView):
    scheme = SCHEME.name
    actions = frozenset({*(a.id for a in OWN_ACTIONS), "next_checker"})
    action_specs = OWN_ACTIONS
    menu = "ADDM"
    empty_unit = "(no method)"

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.record: AddmSample | None = None
        self.labels: dict[tuple[str, str], Any] = {}
        self.incidents: list[dict[str, Any]] = []
        self.is_human = False
        self.rows: list[rv.Row] = []
        self.sel: int | None = None
        self.base: dict[str, int] = {}  # review id -> offset of its text in the reviews pane
        self.corpus: rv.Corpus | None = None
        self._corpus_blind: str | None = None
        self._build()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        self.method_box = unit_combo("Method whose claims are shown (C: next method)", 16, self._method_chosen)
        self.method_box.setObjectName("addm_method")
        self.status = status_label()
        head.addWidget(self.title, 2)
        head.addWidget(QLabel("Method:"))
        head.addWidget(self.method_box, 2)
        head.addWidget(self.status, 2)
        legend = QHBoxLayout()
        for kind, text in LEGEND_ROWS:
            st = STYLES[kind]
            lab = plain_label(text)
            css = f"background:{st.background};" if st.background else ""
            css += f"color:{st.foreground};text-decoration:underline;" if st.underline else ""
            lab.setStyleSheet(css + "padding:1px 4px;")
            legend.addWidget(lab)
        legend.addStretch(1)
        lay.addLayout(legend)

        self.text = SpanTextView()
        self.text.setObjectName("addm_reviews")
        left = column("Reviews (select text and press Shift+Insert to add a missing incident)", (self.text, 1))

        self.inc_model = RecordTableModel(INCIDENT_COLUMNS, self)
        self.inc_table = make_table(self.inc_model, 6)
        self.inc_table.setObjectName("addm_incidents")
        self.inc_table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._select(cur.row()))
        self.verdicts = plain_label(wrap=True, selectable=True)
        self.verdicts.setObjectName("addm_verdicts")
        self.score_model = RecordTableModel(SCORE_COLUMNS, self)
        self.score_table = make_table(self.score_model, ())
        self.score_table.setObjectName("addm_scores")
        self.score_title = plain_label("Scores", wrap=True)  # wraps: the method's name is long (issue #27)
        right = column("Incidents (T next · Y valid/invalid · 7/8/9 severity · Shift+F / Shift+S modifiers)",
                       (self.inc_table, 3), "Verdicts (Shift+L / H / C: human verdict), with the addm_v2 point sum",
                       self.verdicts, self.score_title, (self.score_table, 3))
        split = side_by_side(left, right, (1, 2), share=True)  # the reviews a third (their heading wraps)
        split.setChildrenCollapsible(False)
        lay.addWidget(split, 1)

    # -- data ------------------------------------------------------------------------------------------------------
    @property
    def method(self) -> str:
        return "" if self.row is None else str(self.row["unit"])

    def reset(self) -> None:
        super().reset()
        self.record, self.rows, self.sel, self.labels = None, [], None, {}

    def show_unit(self, row: dict[str, Any]) -> None:
        new_sample = self.record is None or self.row is None or row["sample_id"] != self.row["sample_id"]
        self.row = row
        if new_sample:
            found = self.project.samples.records(SCHEME.name, [row["sample_id"]])
            if not found:
                raise LookupError(f"sample {row['sample_id']!r} could not be read back as an {SCHEME.name} record")
            self.record = found[0]
            self.sel = None
        self._load()
        self._render()

    def refresh(self) -> None:
        if self.row is not None and self.record is not None:
            self._load()
            self._render()

    def _load(self) -> None:
        assert self.record is not None
        self.labels = self.sample_labels(self.record.id)
        self.incidents, self.is_human = rv.truth(self.record, self.labels)
        self.rows = rv.rows(self.record, self.method, self.incidents)
        if self.sel is not None and self.sel >= len(self.rows):
            self.sel = len(self.rows) - 1 if self.rows else None
        corpus = self._corpus()
        if corpus is not None:
            corpus.update(self.record.id, self.labels.get(("", "incidents")), self.labels.get(("", "verdict")))

    def _corpus(self) -> rv.Corpus | None:
        """Every business once per view (their human labels too); then one row is updated per change. In blind
        mode only the session annotator's own labels count (as everywhere the view shows labels)."""
        blind = self.ctx.blind_as()
        if self.corpus is None or self._corpus_blind != blind:
            self.corpus, self._corpus_blind = None, blind
            if (self.project.counts.sample_counts().get(SCHEME.name) or 0) > CORPUS_LIMIT:
                return None
            human: dict[str, list[Any]] = {}
            for r in self.project.decisions.label_rows(["incidents", "verdict"], every_annotator=blind is not None):
                if r["unit"] == "" and (blind is None or r["annotator"] == blind):
                    human.setdefault(r["sample_id"], [None, None])[0 if r["kind"] == "incidents" else 1] = r["value"]
            self.corpus = rv.Corpus(self.project.samples.records(SCHEME.name), {k: tuple(v) for k, v in human.items()})
        return self.corpus

    # -- rendering -------------------------------------------------------------------------------------------------
    def _render(self) -> None:
        rec = self.record
        assert rec is not None and self.row is not None
        name = (rec.meta or {}).get("name")
        self.title.setText(f"Business {rec.id}" + (f" · {name}" if name else ""))
        self.method_box.blockSignals(True)
        self.method_box.clear()
        for m in rec.methods:
            st = self.labels.get((m, "status")) or "unlabeled"
            self.method_box.addItem(f"{m}  [{st}]", m)
        self.method_box.setCurrentIndex(self.method_box.findData(self.method))
        self.method_box.blockSignals(False)
        status = self.labels.get((self.method, "status")) or "unlabeled"
        self.status.setText(f"Status: {status} · truth: {'human' if self.is_human else 'ground truth (unedited)'}")
        self._render_text()
        self.inc_model.set_records([self._row_record(i, r) for i, r in enumerate(self.rows)])
        self._render_verdicts()
        self._render_scores()
        self._sync_selection()

    def _row_record(self, i: int, r: rv.Row) -> dict[str, Any]:
        snippet = (r.human or {}).get("snippet") or (r.claimed.snippet if r.claimed else None) or (r.gt.snippet if r.gt else None)
        return {"n": i + 1, "review": r.review_id, "claimed": _inc(r.claimed), "gt": _inc(r.gt), "human": _inc(r.human),
                "state": r.state, "snippet": " ".join((snippet or "").split()), "_bg": _STATE_BG.get(r.state),
                "_tip": f"review {r.review_id}\nclaimed: {_inc(r.claimed) or '-'}\nground truth: {_inc(r.gt) or '-'}\n"
                        f"human: {_inc(r.human) or '-'}\nsnippet: {snippet or '-'}"}

    def _render_text(self) -> None:
        rec = self.record
        assert rec is not None
        parts, self.base, pos = [], {}, 0
        for r in rec.reviews:
            head = f"── review {r.review_id} ──\n"
            self.base[r.review_id] = pos + len(head)
            parts.append(head + r.text + "\n\n")
            pos += len(parts[-1])
        spans: list[Span] = []
        index = {r.review_id: i for i, r in enumerate(self.rows)}

        def add(kind: str, rid: str, start: int | None, end: int | None, tip: str) -> None:
            if start is not None and end is not None and rid in self.base and rid in index:
                spans.append(Span(self.base[rid] + start, self.base[rid] + end, kind, ("row", index[rid]), tip))

        for i in rec.incidents:
            add("gt", i.review_id, i.start, i.end, f"ground truth: {_inc(i)}")
        result = rec.methods.get(self.method)
        for e in result.evidences if result is not None else ():
            add("pred", e.review_id, e.start, e.end, f"claimed: {_inc(e)}")
        if self.is_human:
            for h in self.incidents:
                loc = rv.locate_snippet(rec, h)
                if loc is not None:
                    add("addm_human", str(h["review_id"]), loc[0], loc[1], f"human: {_inc(h)}")
        self.text.set_content("".join(parts), spans)

    def _render_verdicts(self) -> None:
        rec = self.record
        assert rec is not None
        lines = []
        result = rec.methods.get(self.method)
        if self.machine_hidden():  # its verdict and risk score wait for the human's own decision (its claims are
            lines.append(f"Method: {HIDDEN_NOTE}")  # what the human judges, so they stay)
        elif result is None:
            lines.append("Method: no result for this business")
        elif result.error is not None:
            lines.append(f"Method: error: {result.error}")
        else:
            pts, v = rv.verdict_line(result.evidences)
            claimed = "no verdict" if result.verdict is None else VERDICTS[result.verdict]
            ok = "" if result.verdict is None else (" ✓ consistent" if v == claimed else " ✗ inconsistent")
            risk = "" if result.risk_score is None else f" · risk score {result.risk_score:g}"
            lines.append(f"Method: {claimed}{risk} · its evidence: {pts:g} pts → {v}{ok}")
        pts, v = rv.verdict_line(rec.incidents)
        lines.append(f"Ground truth: {VERDICTS[rec.verdict]} · its incidents: {pts:g} pts → {v}")
        human_v = self.labels.get(("", "verdict"))
        pts, v = rv.verdict_line(self.incidents)
        lines.append(f"Human: {human_v or '— (Shift+L / H / C)'} · {'human' if self.is_human else 'ground-truth'} "
                     f"incidents: {pts:g} pts → {v}")
        self.verdicts.setText("\n".join(lines))

    def _render_scores(self) -> None:
        rec = self.record
        assert rec is not None
        show_machine(self.machine_hidden(), self.score_title, self.score_table)
        human_rec = rv.with_truth(rec, self.incidents if self.is_human else None, self.labels.get(("", "verdict")))
        b_gt, b_h = rv.unit_figures(rec, self.method), rv.unit_figures(human_rec, self.method)
        a_gt: dict[str, Any] = {}
        a_h: dict[str, Any] = {}
        corpus = self._corpus()
        if corpus is not None and self.method:
            a_gt, a_h = corpus.scores(self.method, False), corpus.scores(self.method, True)
            n = len(corpus.records)
            self.score_title.setText(f"Scores of {self.method} (policy {ADDM_V2.name}; all = {n} businesses, "
                                     f"{len(corpus.human)} with human labels)")
        else:
            self.score_title.setText(f"Scores of {self.method} (policy {ADDM_V2.name}; all-business scores: concord evaluate)")

        def comp(d: dict[str, Any], c: str) -> Any:
            v = d.get(c, (d.get("process_components") or {}).get(c))
            return None if v is None else 100.0 * v

        rows = [{"figure": "AUPRC (ordinal)", "b_gt": None, "b_h": None,
                 "a_gt": None if not a_gt else 100 * a_gt["auprc"], "a_h": None if not a_h else 100 * a_h["auprc"]}]
        for key, label in (("process_score", "Process"), ("consistency_score", "Consistency")):
            rows.append({"figure": label, "b_gt": b_gt.get(key), "b_h": b_h.get(key), "a_gt": a_gt.get(key), "a_h": a_h.get(key),
                         "_bold": True})
        for c, w in zip(COMPONENTS, ADDM_V2.process_weights):
            rows.append({"figure": f"  {COMPONENT_LABELS[c]} ({round(100 * w)}%)", "b_gt": comp(b_gt, c),
                         "b_h": comp(b_h, c), "a_gt": comp(a_gt, c), "a_h": comp(a_h, c)})
        self.score_model.set_records(rows)

    # -- selection -------------------------------------------------------------------------------------------------
    def _select(self, i: int | None) -> None:
        self.sel = i if i is not None and 0 <= i < len(self.rows) else None
        self._sync_selection()

    def _sync_selection(self) -> None:
        sm = self.inc_table.selectionModel()
        sm.blockSignals(True)
        if self.sel is None:
            sm.clearSelection()
        else:
            idx = self.inc_model.index(self.sel, 0)
            sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
            self.inc_table.scrollTo(idx)
        sm.blockSignals(False)
        self.inc_table.viewport().update()
        self.text.set_selected([("row", self.sel)] if self.sel is not None else [], reveal=self.sel is not None)

    def selected_text(self) -> tuple[str, str] | None:
        """(review id, text) of the selection in the reviews pane, when it lies inside one review."""
        sel = self.text.selection()
        if sel is None or self.record is None:
            return None
        for r in self.record.reviews:
            a = self.base[r.review_id]
            if a <= sel[0] and sel[1] <= a + len(r.text):
                return r.review_id, r.text[sel[0] - a : sel[1] - a]
        return None

    # -- actions ---------------------------------------------------------------------------------------------------
    def _commit(self, incidents: list[dict[str, Any]] | None, text: str, verdict: Any = ...) -> None:
        assert self.record is not None
        changes = []
        if incidents is not None:
            changes.append(Change(self.record.id, "", "incidents", incidents))
        if verdict is not ...:
            changes.append(Change(self.record.id, "", "verdict", verdict))
        if self.method:
            changes.append(Change(self.record.id, self.method, "status", "corrected"))
        self.ctx.session.do(SetLabels(tuple(changes), text))

    def accept_command(self) -> SetLabels | None:
        """The method's claims and verdict become the human's truth (status accepted)."""
        if self.record is None or not self.method:
            return None
        ml = SCHEME.machine_label(self.record, self.method)
        if self.machine_hidden():  # the human's own truth and verdict; the method's are revealed after
            sid, verdict = self.record.id, self.labels.get(("", "verdict"))
            mine = {"incidents": [dict(x) for x in self.incidents], "verdict": verdict}
            theirs = SCHEME.accept(ml) if ml is not None else {}
            return commit(sid, self.method, tuple(Change(sid, "", k, v) for k, v in mine.items()),
                          all(theirs.get(k) == v for k, v in mine.items()), "commit my truth")
        if ml is None:
            return None
        kinds = SCHEME.label_kinds
        changes = tuple(Change(self.record.id, "" if kinds[k].per_sample else self.method, k, v)
                        for k, v in SCHEME.accept(ml).items())
        return SetLabels(changes, "accept")

    def units_of_sample(self) -> list[str]:
        return [] if self.record is None else list(self.record.methods)

    def _method_chosen(self, index: int) -> None:
        m = self.method_box.itemData(index)
        if self.record is not None and m is not None and m != self.method:
            self.request_unit.emit(self.record.id, m)

    def handle(self, action_id: str) -> bool:
        if self.record is None or action_id not in self.actions:
            return False
        if action_id == "next_checker":
            ms = self.units_of_sample()
            if len(ms) > 1 and self.method in ms:
                self.request_unit.emit(self.record.id, ms[(ms.index(self.method) + 1) % len(ms)])
            return True
        if action_id == "addm_next":
            if self.rows:
                self._select(0 if self.sel is None else (self.sel + 1) % len(self.rows))
            return True
        if action_id in _VERDICT:
            v = _VERDICT[action_id]
            new = None if self.labels.get(("", "verdict")) == v else v
            self._commit(None, f"human verdict: {new or 'cleared'}", verdict=new)
            return True
        if action_id == "addm_add":
            got = self.selected_text()
            if got is None or not got[1].strip():
                self.message.emit("Select text inside one review first, then press Shift+Insert")
                return True
            new = rv.add_from_text(self.incidents, got[0], got[1])
            if new is None:
                self.message.emit(f"Review {got[0]} already has an incident: select it (T) and fix it with 7 / 8 / 9")
                return True
            self._commit(new, f"add incident in {got[0]}")
            self.sel = next((i for i, r in enumerate(rv.rows(self.record, self.method, new)) if r.review_id == got[0]), self.sel)
            self._sync_selection()
            return True
        if self.sel is None:
            self.message.emit("Select an incident first (T)")
            return True
        row = self.rows[self.sel]
        if action_id == "addm_valid":
            self._commit(rv.toggle_valid(self.incidents, row), f"{row.review_id}: {'invalid' if row.human else 'valid'}")
        elif action_id in _SEVERITY:
            self._commit(rv.set_severity(self.incidents, row, _SEVERITY[action_id]), f"{row.review_id}: {_SEVERITY[action_id]}")
        elif action_id in _MODIFIER:
            self._commit(rv.toggle_modifier(self.incidents, row, _MODIFIER[action_id]), f"{row.review_id}: {_MODIFIER[action_id]}")
        return True


VIEW = AddmView
