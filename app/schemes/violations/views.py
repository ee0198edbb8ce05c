"""Violations view: the text with ground-truth and predicted spans, both lists, and the matcher's candidate
pairs with every component score and threshold test, so a human sees why the metric decided.

Links shown are the human's matches once the unit is labeled, else the matcher's proposal (a correction
starts from the proposal). Scores come from violations_scoring.py: a provisional result at once, the real one from
a worker (cached in memory per unit and config). The view also declares the match configs its scores follow
(MATCH_CONFIGS, the window's config box) and brings the match metric's calibration page (violations_calibration.py).
"""
from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSplitter, QTableView, QVBoxLayout, QWidget

from app.corrections import SetLabels, commit, set_status
from app.gui.blind import HIDDEN_NOTE, show_machine
from app.gui.models import RecordTableModel
from app.gui.plaintext import ElidedLabel, plain_label
from app.gui.spantext import LEGEND, STYLES, Span, SpanTextView
from app.gui.views.base import DetailView, ViewContext, make_table, status_label, title_label, unit_combo, view_layout
from app.schemes.violations import views_curation as curation
from app.schemes.violations.corrections import accept_matches, link, toggle_index, unlink
from app.schemes.violations.store import store_of
from app.schemes.violations.views_scoring import UnitScores, full_scores, quick_scores
from app.schemes.violations.views_tables import (
    CATEGORY_FILTER, CURATION_ACTIONS, GT_COLUMNS, MATCH_CONFIGS, OWN_ACTIONS, PAIR_COLUMNS, PRED_COLUMNS, check_mark,
    describe, export_count_rows, gt_signature, machine_scores, quote_of,
)
from app.schemes.violations.views_words import describe_label
from app.gui.workers import Task, TaskProgress, when_done
from app.store import Change, Project
from calibration.schemes.violations.config import MatchConfig
from calibration.schemes.violations.curation import KIND as CURATED, with_ground_truth
from calibration.schemes.violations.records import ViolationSample

Pair = tuple[int, int]
CACHE_SIZE = 4000
PASS_NAMES = {"overlap": "IoU", "rule": "rule", "match": "score"}
PREFETCH = 16


class ViolationsView(DetailView):
    scheme = "violations"
    actions = frozenset({"link", "next_gt", "next_pred", "missing_gt", "gt_wrong", "next_checker", "rescore"}) | CURATION_ACTIONS
    action_specs = OWN_ACTIONS
    menu = "Violations"
    filters = (CATEGORY_FILTER,)
    empty_unit = "(ground truth only)"
    score_title = "F1"
    scores_follow_config = True
    config_choice = MATCH_CONFIGS
    export_count_rows = staticmethod(export_count_rows)
    score_task = staticmethod(machine_scores)
    describe_label = staticmethod(describe_label)  # the adjudication panel's words for pairs (views_words.py)

    @staticmethod
    def calibration_page(panel: Any) -> QWidget:
        """The match metric's search form, heatmap, threshold curve and disagreements (violations_calibration.py)."""
        from app.schemes.violations.views_calibration import MatchPage

        return MatchPage(panel)

    def __init__(self, ctx: ViewContext, parent: QWidget | None = None) -> None:
        super().__init__(ctx, parent)
        self.sample: ViolationSample | None = None  # as shown: the curated ground truth when there is one
        self._file_sample: ViolationSample | None = None  # as imported
        self.labels: dict[tuple[str, str], Any] = {}
        self.checkers: list[str] = []
        self.scores: UnitScores | None = None
        self.sel_gt: int | None = None
        self.sel_pred: int | None = None
        # (sample, checker, config, ground-truth signature): curating the ground truth changes the pairs
        self._cache: OrderedDict[tuple[str, str, str, int], UnitScores] = OrderedDict()
        # (sample, checker, config) -> entries in _cache: `prefetch` asks this on every unit shown (a set built from
        # the whole cache each time cost ~0.15 ms at CACHE_SIZE entries)
        self._cached_units: Counter[tuple[str, str, str]] = Counter()
        self._pending: dict[str, Task] = {}
        self._closed = False
        self._build()

    # -- layout ----------------------------------------------------------------------------------------------------
    def _build(self) -> None:
        lay, head = view_layout(self)
        self.title = title_label()
        self.checker_box = unit_combo("Checker whose predictions are shown (C: next checker)", 18, self._checker_chosen)
        self.status = status_label()
        head.addWidget(self.title)
        head.addWidget(QLabel("Checker:"))
        head.addWidget(self.checker_box, 3)
        head.addWidget(self.status, 2)

        legend = QHBoxLayout()
        for kind in ("gt", "pred"):
            st = STYLES[kind]
            lab = plain_label(LEGEND[kind])
            css = f"background:{st.background};" if st.background else ""
            css += f"color:{st.foreground};text-decoration:underline;" if st.underline else ""
            lab.setStyleSheet(css + "padding:1px 4px;")
            legend.addWidget(lab)
        self.basis = ElidedLabel()
        self.basis.setAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.basis.setStyleSheet("color:#555;")
        legend.addWidget(self.basis, 1)
        lay.addLayout(legend)

        self.text = SpanTextView()
        self.text.setObjectName("violations_text")
        self.gt_model = RecordTableModel(GT_COLUMNS, self)
        self.pred_model = RecordTableModel(PRED_COLUMNS, self)
        self.pair_model = RecordTableModel(PAIR_COLUMNS, self)
        self.gt_table = make_table(self.gt_model, (1, 3))
        self.pred_table = make_table(self.pred_model, (1, 3))
        self.pair_table = make_table(self.pair_model, len(PAIR_COLUMNS) - 1)
        self.gt_table.setObjectName("gt_table")
        self.pred_table.setObjectName("pred_table")
        self.pair_table.setObjectName("pair_table")
        self.gt_table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._select(gt=cur.row(), source="gt"))
        self.pred_table.selectionModel().currentRowChanged.connect(lambda cur, _p: self._select(pred=cur.row(), source="pred"))
        self.pair_table.selectionModel().currentRowChanged.connect(self._pair_clicked)

        lists = QSplitter(Qt.Orientation.Horizontal)
        for title, table in (("Ground truth (G · W: wrong)", self.gt_table), ("Predictions (P · M: missing GT)", self.pred_table)):
            box = QWidget()
            bl = QVBoxLayout(box)
            bl.setContentsMargins(0, 0, 0, 0)
            bl.addWidget(plain_label(title))
            bl.addWidget(table)
            lists.addWidget(box)
        pairs_box = QWidget()
        pl = QVBoxLayout(pairs_box)
        pl.setContentsMargins(0, 0, 0, 0)
        self.pairs_title = ElidedLabel("Candidate pairs (L: link / unlink)")
        self.pairs_title.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)  # alone while hidden
        pl.addWidget(self.pairs_title)
        pl.addWidget(self.pair_table)

        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.text)
        split.addWidget(lists)
        split.addWidget(pairs_box)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 3)
        split.setSizes([260, 220, 300])
        split.setChildrenCollapsible(False)
        lay.addWidget(split, 1)
        self.note = plain_label(wrap=True, selectable=True)
        self.note.setStyleSheet("color:#5d4037;")
        lay.addWidget(self.note)

    # -- data ------------------------------------------------------------------------------------------------------
    @property
    def checker(self) -> str:
        return "" if self.row is None else str(self.row["unit"])

    def reset(self) -> None:
        super().reset()
        self.sample, self.scores, self.labels, self.checkers = None, None, {}, []
        self.sel_gt = self.sel_pred = None

    def show_unit(self, row: dict[str, Any]) -> None:
        same_sample = self.sample is not None and row["sample_id"] == self.sample.id
        self.row = row
        if not same_sample:
            self.sample = self._file_sample = store_of(self.project).violation_sample(row["sample_id"])
            # from the units table: a checker that ran and found nothing has no prediction rows but is a unit
            self.checkers = [u["unit"] for u in self.project.units.units_for_sample(row["sample_id"])]
            self.sel_gt = self.sel_pred = None
        if self.sample is None:
            self.title.setText(f"{row['sample_id']}: not found in the project")
            return
        self.labels = self.sample_labels(self.sample.id)
        self.sample = self._curated()
        self.scores = self._scores_for(self.sample, self.checker)
        self._fill_header()
        self._render()
        if not self.scores.final:
            self._schedule([self.sample])

    def refresh(self) -> None:
        if self.sample is None or self.row is None:
            return
        self.labels = self.sample_labels(self.sample.id)
        gt = self.sample.ground_truth
        self.sample = self._curated()
        if self.sample.ground_truth != gt:  # the ground truth was curated: the pairs change
            self.scores = self._scores_for(self.sample, self.checker)
            if not self.scores.final:
                self._schedule([self.sample])
        self._fill_header()
        self._render(same_unit=True)

    def _curated(self) -> ViolationSample:
        """The file's sample with the curated ground truth this view may show (own in blind mode, else resolved)."""
        assert self._file_sample is not None
        return with_ground_truth(self._file_sample, self.labels.get(("", CURATED)))

    def _fill_header(self) -> None:
        assert self.sample is not None
        self.title.setText(f"Sample {self.sample.id}")
        box = self.checker_box
        box.blockSignals(True)
        items = [(f"{c or '(ground truth only)'}  [{self.labels.get((c, 'status')) or 'unlabeled'}]", c)
                 for c in self.checkers]
        if [box.itemData(i) for i in range(box.count())] == self.checkers:  # same checkers: only a status changed
            for i, (text, _c) in enumerate(items):
                if box.itemText(i) != text:
                    box.setItemText(i, text)
        else:
            box.clear()
            for text, c in items:
                box.addItem(text, c)
        box.setCurrentIndex(box.findData(self.checker))
        box.blockSignals(False)
        status = self.labels.get((self.checker, "status")) or "unlabeled"
        n_links = len(self.links())
        hidden = self.machine_hidden()
        whose = "human" if self.human_matches() is not None else ("none yet" if hidden else "proposed")
        self.status.setText(f"Status: {status} · {n_links} link(s), {whose}" + (f" · {HIDDEN_NOTE}" if hidden else ""))
        note = self.labels.get((self.checker, "note"))
        self.note.setText(f"Note: {note}" if note else "")
        self.note.setVisible(bool(note))

    def human_matches(self) -> list[Pair] | None:
        v = self.labels.get((self.checker, "matches"))
        return None if v is None else [(int(g), int(p)) for g, p in v]

    def links(self) -> list[Pair]:
        """What the unit's links are now: the human's if labeled, else the proposal (none while it is hidden)."""
        h = self.human_matches()
        if h is not None:
            return h
        return self.scores.proposed if self.scores is not None and not self.machine_hidden() else []

    def _render(self, same_unit: bool = False) -> None:
        """Fill the text and the three tables; `same_unit` (a refresh after a decision): only changed rows are
        redrawn and the selection's highlights are set with the text, so what did not change is not laid out again."""
        s, sc = self.sample, self.scores
        assert s is not None and sc is not None
        preds = s.predictions.get(self.checker, ())
        links = self.links()
        gt_link = {g: p for g, p in links}
        pred_link = {p: g for g, p in links}
        wrong = set(self.labels.get(("", "gt_wrong")) or [])
        missing = set(self.labels.get((self.checker, "missing_gt")) or [])
        spans = [Span(v.start, v.end, "gt", ("gt", i), describe(v, f"GT {i + 1}"))
                 for i, v in enumerate(s.ground_truth) if v.grounded]
        spans += [Span(v.start, v.end, "pred", ("pred", j), describe(v, f"Prediction {j + 1}"))
                  for j, v in enumerate(preds) if v.grounded]
        self.text.set_content(s.text, spans, self._selected_keys() if same_unit else ())
        fill_gt, fill_pred, fill_pairs = ((m.update_records if same_unit else m.set_records)
                                          for m in (self.gt_model, self.pred_model, self.pair_model))
        fill_gt([
            {"n": i + 1, "rule": v.rule, "category": v.category or "", "quote": quote_of(s.text, v) or "(ungrounded)",
             "linked": "" if i not in gt_link else f"P{gt_link[i] + 1}", "state": "wrong" if i in wrong else "",
             "_tip": describe(v, f"GT {i + 1}"), "_fg": "#9e9e9e" if i in wrong else None}
            for i, v in enumerate(s.ground_truth)
        ])
        fill_pred([
            {"n": j + 1, "rule": v.rule, "category": v.category or "", "quote": quote_of(s.text, v) or "(ungrounded)",
             "linked": "" if j not in pred_link else f"GT{pred_link[j] + 1}",
             "state": "missing GT" if j in missing else "", "_tip": describe(v, f"Prediction {j + 1}"),
             "_bg": "#fff3e0" if j in missing else None}
            for j, v in enumerate(preds)
        ])
        linked = set(links)
        rows = []
        for p in sc.pairs:
            rec: dict[str, Any] = {"gt": p.gt + 1, "pred": p.pred + 1, **p.components, "score": p.score,
                                   "passes": " ".join(f"{PASS_NAMES[k]} {check_mark(v)}" for k, v in p.passes.items()),
                                   "proposed": "●" if p.proposed else "", "human": "●" if (p.gt, p.pred) in linked else "",
                                   "reason": p.reason,
                                   "_gp": (p.gt, p.pred)}
            if (p.gt, p.pred) in linked:
                rec["_bg"] = "#e3f2fd"
            rows.append(rec)
        rows.sort(key=lambda r: (not r["human"], not r["proposed"], -(r["score"] if r["score"] is not None else -9)))
        fill_pairs(rows)
        t = sc.thresholds
        hidden = self.machine_hidden()
        self.pairs_title.setText(
            f"Candidate pairs: {HIDDEN_NOTE}; link with G, P and L" if hidden else
            f"Candidate pairs under {sc.config_ref}: thresholds IoU > {t.get('overlap', 0):g}, rule > {t.get('rule', 0):g}, "
            f"weighted > {t.get('match', 0):g} · L: link / unlink"
        )
        self.basis.setText(("text scores: " + sc.basis) + ("" if sc.final else " (provisional, embedding…)"))
        show_machine(hidden, self.pair_table, self.basis)  # the matcher's pairs and scores
        self._sync_selection()

    # -- scores ----------------------------------------------------------------------------------------------------
    def _config(self) -> MatchConfig:
        return self.ctx.config()  # what MATCH_CONFIGS loaded: a MatchConfig

    def _scores_for(self, sample: ViolationSample, checker: str) -> UnitScores:
        cfg = self._config()
        key = (sample.id, checker, cfg.ref, gt_signature(sample))
        hit = self._cache.get(key)
        if hit is not None:
            self._cache.move_to_end(key)
            return hit
        sc = quick_scores(sample, checker, cfg, self.project.caches)
        if sc.final:
            self._remember(sc, gt_signature(sample))
        return sc

    def _remember(self, sc: UnitScores, sig: int) -> None:
        key = (sc.sample_id, sc.checker, sc.config_ref, sig)
        if key not in self._cache:
            self._cached_units[key[:3]] += 1
        self._cache[key] = sc
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_SIZE:
            self._forget(self._cache.popitem(last=False)[0])

    def _forget(self, key: tuple[str, str, str, int]) -> None:
        """Count out an entry just removed from _cache."""
        self._cached_units[key[:3]] -= 1
        if self._cached_units[key[:3]] <= 0:
            del self._cached_units[key[:3]]

    def _schedule(self, samples: list[ViolationSample], *, show_progress: bool = True) -> None:
        cfg = self._config()
        todo = [s for s in samples if f"{s.id}|{cfg.ref}|{gt_signature(s)}" not in self._pending]
        if not todo:
            return
        path = str(self.project.path)

        def work(progress: TaskProgress) -> dict[tuple[str, str], UnitScores]:
            with Project.open(path) as worker_project:  # one connection per thread
                return full_scores(todo, cfg, worker_project.caches, progress, project_path=path)

        task = Task(work, "scoring")
        keys = [f"{s.id}|{cfg.ref}|{gt_signature(s)}" for s in todo]
        sigs = {s.id: gt_signature(s) for s in todo}
        for k in keys:
            self._pending[k] = task
        # a failure is shown by the window (TaskRunner.failed)
        task.signals.finished.connect(lambda result, sigs=sigs: self._scored(result, sigs))
        when_done(task, lambda ks=keys: [self._pending.pop(k, None) for k in ks])
        if show_progress:
            self.ctx.progress.track(task, "Scoring pairs…")
        self.ctx.runner.start(task)

    def _scored(self, result: dict[tuple[str, str], UnitScores], sigs: dict[str, int]) -> None:
        if self._closed:
            return
        for sc in result.values():
            self._remember(sc, sigs[sc.sample_id])
        if (self.sample is not None and (self.sample.id, self.checker) in result
                and sigs.get(self.sample.id) == gt_signature(self.sample)):
            new = result[(self.sample.id, self.checker)]
            if new.config_ref == self._config().ref:
                self.scores = new
                self._fill_header()
                self._render()

    def rescore(self) -> None:
        if self.sample is None:
            return
        cfg = self._config()
        for key in [k for k in self._cache if k[0] == self.sample.id and k[2] == cfg.ref]:
            del self._cache[key]
            self._forget(key)
        self.show_unit(dict(self.row or {}))
        self._schedule([self.sample])

    def prefetch(self, rows: list[dict[str, Any]]) -> None:
        """Score the next units in one background batch, once one of the nearer half of them is neither cached nor
        underway. (Waiting until the very next one was left the worker one step to score it: moving on quickly, every
        batch's first unit was scored again in the GUI thread, a 5-10 ms frame every eighth unit, issue #28.)"""
        cfg = self._config()
        if cfg.embedding == "jaccard":
            return  # provisional scores are final: nothing to prefetch
        pending = {k.rsplit("|", 1)[0] for k in self._pending}
        todo = [r for r in rows if r.get("scheme") == self.scheme
                and (r["sample_id"], r["unit"], cfg.ref) not in self._cached_units
                and f"{r['sample_id']}|{cfg.ref}" not in pending]
        near = rows[: max(1, len(rows) // 2)]
        if not todo or not any(todo[0] is r for r in near):
            return
        ids = list(dict.fromkeys(r["sample_id"] for r in todo))[:PREFETCH]
        samples = [with_ground_truth(s, self.sample_labels(s.id).get(("", CURATED)))  # as they will be shown
                   for s in store_of(self.project).violation_samples(ids)]
        self._schedule(samples, show_progress=False)

    def shutdown(self) -> None:
        self._closed = True
        for t in set(self._pending.values()):
            t.cancel()

    # -- selection -------------------------------------------------------------------------------------------------
    def _select(self, gt: int | None = -2, pred: int | None = -2, source: str = "") -> None:
        if gt != -2:
            self.sel_gt = gt if gt is not None and gt >= 0 else None
        if pred != -2:
            self.sel_pred = pred if pred is not None and pred >= 0 else None
        if source == "gt" and self.sel_gt is not None:
            partner = dict(self.links()).get(self.sel_gt)
            if partner is not None:
                self.sel_pred = partner
        if source == "pred" and self.sel_pred is not None:
            partner = {p: g for g, p in self.links()}.get(self.sel_pred)
            if partner is not None:
                self.sel_gt = partner
        self._sync_selection()

    def _pair_clicked(self, cur: Any, _prev: Any) -> None:
        rec = self.pair_model.record(cur.row())
        if rec is not None:
            self._select(gt=rec["_gp"][0], pred=rec["_gp"][1], source="pair")

    def _sync_selection(self) -> None:
        def set_row(table: QTableView, row: int | None) -> None:
            sm = table.selectionModel()
            if row is None or row >= table.model().rowCount():
                if not sm.hasSelection() and not sm.currentIndex().isValid():
                    return  # already so (a refresh after a decision): no repaint of the table
            elif sm.currentIndex() == table.model().index(row, 0) and [i.row() for i in sm.selectedRows()] == [row]:
                table.scrollTo(sm.currentIndex())
                return
            sm.blockSignals(True)
            if row is None or row >= table.model().rowCount():
                sm.clearSelection()
                sm.setCurrentIndex(table.model().index(-1, -1), QItemSelectionModel.SelectionFlag.NoUpdate)
            else:
                idx = table.model().index(row, 0)
                sm.setCurrentIndex(idx, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
                table.scrollTo(idx)
            sm.blockSignals(False)
            table.viewport().update()

        set_row(self.gt_table, self.sel_gt)
        set_row(self.pred_table, self.sel_pred)
        pair_row = None
        for i, rec in enumerate(self.pair_model.records()):
            if rec["_gp"] == (self.sel_gt, self.sel_pred):
                pair_row = i
        set_row(self.pair_table, pair_row)
        self.text.set_selected(self._selected_keys())

    def _selected_keys(self) -> list[tuple[str, int]]:
        """The text spans the selected ground truth and prediction stand for."""
        return [(kind, i) for kind, i in (("gt", self.sel_gt), ("pred", self.sel_pred)) if i is not None]

    def select_pair(self, gt: int, pred: int) -> None:
        """Select one candidate pair (e.g. from the calibration panel's disagreement list)."""
        self._select(gt=gt, pred=pred, source="pair")

    def selected_pair(self) -> Pair | None:
        if self.sel_gt is None or self.sel_pred is None:
            return None
        return (self.sel_gt, self.sel_pred)

    # -- actions ---------------------------------------------------------------------------------------------------
    def accept_command(self) -> SetLabels | None:
        if self.sample is None or self.scores is None:
            return None
        if self.machine_hidden():  # the annotator commits their own links; the matcher's are revealed after
            proposed = sorted(self.scores.proposed)
            mine = sorted(self.links())
            changes = (Change(self.sample.id, self.checker, "matches", [list(p) for p in mine]),) if self.checker else ()
            return commit(self.sample.id, self.checker, changes, mine == proposed, "commit my links")
        if not self.checker:  # a ground-truth-only unit: accepting = the ground truth is verified
            return set_status(self.sample.id, self.checker, "accepted")
        # a checker that ran and found nothing has no prediction rows (and no pairs): accepting = no matches
        return accept_matches(self.sample.id, self.checker, self.scores.proposed)

    def units_of_sample(self) -> list[str]:
        return [] if self.sample is None else list(self.checkers)

    def _checker_chosen(self, index: int) -> None:
        checker = self.checker_box.itemData(index)
        if self.sample is not None and checker is not None and checker != self.checker:
            self.request_unit.emit(self.sample.id, checker)

    def handle(self, action_id: str) -> bool:
        if self.sample is None:
            return False
        sid, checker = self.sample.id, self.checker
        preds = self.sample.predictions.get(checker, ())
        if action_id == "next_gt":
            n = len(self.sample.ground_truth)
            if n:
                self._select(gt=0 if self.sel_gt is None else (self.sel_gt + 1) % n, source="gt")
            return True
        if action_id == "next_pred":
            if preds:
                self._select(pred=0 if self.sel_pred is None else (self.sel_pred + 1) % len(preds), source="pred")
            return True
        if action_id == "rescore":
            self.rescore()
            return True
        if action_id == "next_checker":
            cs = self.units_of_sample()
            if len(cs) > 1 and checker in cs:
                self.request_unit.emit(sid, cs[(cs.index(checker) + 1) % len(cs)])
            return True
        if action_id in CURATION_ACTIONS:
            curation.curate(self, action_id)
            return True
        cmd: SetLabels | None = None
        if action_id == "link":
            pair = self.selected_pair()
            if pair is None:
                self.message.emit("Select a ground truth (G) and a prediction (P), or a candidate pair, then press L")
                return True
            current = self.links()
            cmd = unlink(sid, checker, current, pair) if pair in current else link(sid, checker, current, pair)
        elif action_id == "missing_gt":
            if self.sel_pred is None:
                self.message.emit("Select a prediction first (P)")
                return True
            cur = self.labels.get((checker, "missing_gt")) or []
            cmd = toggle_index(sid, checker, "missing_gt", cur, self.sel_pred, f"prediction {self.sel_pred + 1}: missing GT")
        elif action_id == "gt_wrong":
            if self.sel_gt is None:
                self.message.emit("Select a ground-truth violation first (G)")
                return True
            cur = self.labels.get(("", "gt_wrong")) or []
            cmd = toggle_index(sid, "", "gt_wrong", cur, self.sel_gt, f"GT {self.sel_gt + 1}: wrong")
        else:
            return False
        self.ctx.session.do(cmd)
        return True


VIEW = ViolationsView
