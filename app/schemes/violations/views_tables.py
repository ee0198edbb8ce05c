"""The violations view's tables, actions and hooks (the window and the export dialog call the hooks through the view
class): the columns of the ground-truth, prediction and candidate-pair tables, how a violation is quoted and
described, the view's own actions, its category filter, the match configs its scores follow (the window's config
box), the machine-score worker and the export preview's rows."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.gui.actions import ActionSpec
from app.gui.models import Column, fmt_score
from app.gui.views.base import FilterSpec
from app.gui.workers import TaskProgress
from app.schemes.violations.store import store_of
from app.store import Project
from calibration.schemes.violations.config import STD_MATCH, MatchConfig
from calibration.schemes.violations.records import Violation, ViolationSample


def quote_of(text: str, v: Violation, limit: int = 60) -> str:
    q = text[v.start : v.end] if v.grounded else (v.quote or "")
    q = " ".join(q.split())
    return q if len(q) <= limit else q[: limit - 1] + "…"


def gt_signature(sample: ViolationSample) -> int:
    """The ground truth's signature (the scores of a sample depend on it once a human curates it)."""
    return hash(sample.ground_truth)


def check_mark(ok: bool) -> str:
    return "✓" if ok else "✗"


def describe(v: Violation, label: str) -> str:
    parts = [f"{label}: {v.rule}"]
    for name in ("category", "explanation", "correction"):
        val = getattr(v, name)
        if val:
            parts.append(f"{name}: {val}")
    return "\n".join(parts)


GT_COLUMNS = (
    Column("n", "GT"), Column("rule", "Rule"), Column("category", "Category"), Column("quote", "Text"),
    Column("linked", "Linked pred", tip="Prediction linked to this GT (human, else proposed)"),
    Column("state", "Human", tip="'wrong' = the human marked this ground truth as wrong"),
)
PRED_COLUMNS = (
    Column("n", "Pred"), Column("rule", "Rule"), Column("category", "Category"), Column("quote", "Text"),
    Column("linked", "Linked GT"),
    Column("state", "Human", tip="'missing GT' = a real violation missing from the ground truth"),
)
PAIR_COLUMNS = (
    Column("gt", "GT"), Column("pred", "Pred"),
    Column("overlap", "IoU", fmt_score, True, "Character IoU of the two spans"),
    Column("rule", "Rule", fmt_score, True, "Rule similarity"),
    Column("category", "Cat", fmt_score, True, "Category match (1/0)"),
    Column("explanation", "Expl", fmt_score, True, "Explanation similarity"),
    Column("correction", "Corr", fmt_score, True, "Correction similarity"),
    Column("score", "Weighted", fmt_score, True, "Weighted match score under the chosen config"),
    Column("passes", "Thresholds", tip="IoU > t_o, rule > t_r, weighted > t_m (all strict)"),
    Column("proposed", "Matcher", tip="● = the matcher links this pair"),
    Column("human", "Human", tip="● = linked in the human decision (or the proposal while unlabeled)"),
    Column("reason", "Why", tip="Why the matcher did or did not link this pair"),
)


OWN_ACTIONS = (
    ActionSpec("link", "&Link / unlink selected pair", ("L",), "view", "Violations",
               "Link the selected ground-truth and prediction, or unlink them if linked"),
    ActionSpec("next_gt", "Select next &ground truth", ("G",), "view", "Violations", "Cycle through ground-truth violations"),
    ActionSpec("next_pred", "Select next &prediction", ("P",), "view", "Violations", "Cycle through predictions"),
    ActionSpec("missing_gt", "Prediction is a &missing GT", ("M",), "view", "Violations",
               "Mark the selected prediction as a real violation missing from the ground truth"),
    ActionSpec("gt_wrong", "Ground truth is &wrong", ("W",), "view", "Violations",
               "Mark the selected ground-truth violation as wrong"),
    # ground-truth curation (issue #15): app/schemes/violations/views_curation.py
    ActionSpec("gt_add", "Add selected text as ground truth…", ("Shift+G",), "view", "Violations",
               "Add a missing ground-truth violation over the selected text (rule and category from the project or typed)"),
    ActionSpec("gt_edit", "Edit ground truth…", ("Shift+W",), "view", "Violations",
               "Edit the selected ground truth's rule, category, explanation and correction"),
    ActionSpec("gt_bounds", "Ground-truth span = selected text", ("B",), "view", "Violations",
               "Set the selected ground truth's span to the text selected with the mouse"),
    ActionSpec("gt_start_left", "Ground-truth start one left", ("Alt+Left",), "view", "Violations",
               "Move the selected ground truth's start one character left"),
    ActionSpec("gt_start_right", "Ground-truth start one right", ("Alt+Right",), "view", "Violations",
               "Move the selected ground truth's start one character right"),
    ActionSpec("gt_end_left", "Ground-truth end one left", ("Alt+Shift+Left",), "view", "Violations",
               "Move the selected ground truth's end one character left"),
    ActionSpec("gt_end_right", "Ground-truth end one right", ("Alt+Shift+Right",), "view", "Violations",
               "Move the selected ground truth's end one character right"),
)
CURATION_ACTIONS = frozenset(a.id for a in OWN_ACTIONS if a.id.startswith("gt_") and a.id != "gt_wrong")
CATEGORY_FILTER = FilterSpec("category", "Category", "Samples with a violation of this category",
                             lambda project: [(c, c) for c in store_of(project).categories()])


@dataclass(frozen=True)
class MatchConfigs:
    """The project's match configs (app.gui.views.base.ConfigChoice): the proposal and the list's machine F1 follow
    the chosen one; the app opens on the same default as `concord export` (app.services.configs)."""

    title: str = "Match config"
    tip: str = "Match config used for the proposal and the list's machine F1"
    settings_key: str = "match_config"

    def refs(self, project: Any) -> list[str]:
        return list(store_of(project).match_config_refs())

    def default_ref(self, project: Any) -> str:
        from app.services.configs import default_config_ref

        return default_config_ref(project)

    def load(self, project: Any, ref: str) -> MatchConfig:
        return store_of(project).match_config(ref)

    def fallback(self) -> MatchConfig:
        return STD_MATCH


MATCH_CONFIGS = MatchConfigs()


def machine_scores(path: str, cfg: MatchConfig, progress: TaskProgress) -> str:
    """Worker: match every unit under `cfg` and store per-unit TP/FP/FN/F1 (the list's machine-score column)."""
    from app.schemes.violations.views_scoring import ensure_sample_vectors
    from app.progress import check
    from app.schemes.violations.services import pair_table, store_machine_scores

    with Project.open(path) as wp:  # the worker's own connection
        ensure_sample_vectors(path, wp.caches, cfg.embedding, store_of(wp).violation_samples(), progress)  # the model stays out of the app
        table = pair_table(wp, cfg.embedding, progress)
        check(progress)
        progress.update(2, 3, "matching and storing machine scores")
        store_machine_scores(wp, table, cfg, cfg.matching)
    return cfg.ref


def export_count_rows(counts: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The export preview's violations figures: ground truth (wrong ones dropped, missing ones added), per checker,
    per category."""
    rows: list[dict[str, Any]] = []
    gt = counts.get("ground_truth") or {}
    if gt:
        rows += [{"what": "Ground truth", "value": "", "_bg": "#eceff1"},
                 {"what": "ground-truth violations", "value": gt.get("violations", 0)},
                 {"what": "  dropped as wrong / added as missing",
                  "value": f"{gt.get('dropped_gt_wrong', 0)} / {gt.get('added_missing_gt', 0)}"}]
    if counts.get("by_checker"):
        rows.append({"what": "Per checker (units · human F1)", "value": "", "_bg": "#eceff1"})
        rows += [{"what": k, "value": f"{v['units']} · {v['f1']:.3f}"} for k, v in counts["by_checker"].items()]
    if counts.get("by_category"):
        rows.append({"what": "Ground truth per category", "value": "", "_bg": "#eceff1"})
        rows += [{"what": k, "value": v} for k, v in counts["by_category"].items()]
    return rows
