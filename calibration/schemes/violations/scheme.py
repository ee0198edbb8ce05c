"""The `violations` scheme as a `base.Scheme`: what import, the store, the unit list, evaluation and export need.

A unit is (sample, checker); a sample whose file lists no checker has one unit, '' (its ground truth alone).
Human label kinds: `matches` (sorted [[gt, pred], ...], one-to-one), `gt_wrong` (per sample: ground-truth indices
a human says are wrong), `missing_gt` (prediction indices a human says are real violations the ground truth
lacks), plus the shared `status` and `note`.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from calibration.schemes import base
from calibration.schemes.base import Column, FieldProblem, LabelKind, Parsed
from calibration.schemes.violations.manifest import MANIFEST
from calibration.schemes.violations.curation import GROUND_TRUTH as CURATED_GT
from calibration.schemes.violations.parse import RECORD_KEYS, ViolationRecord, parse_record, violation_json
from calibration.schemes.violations.records import GROUND_TRUTH

if TYPE_CHECKING:
    from calibration.search.problem import SearchProblem

NAME = "violations"


def _validate_matches(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldProblem("", f"expected an array of [gt_index, pred_index] pairs, got {type(value).__name__}")]
    out: list[FieldProblem] = []
    used_g: dict[int, int] = {}
    used_p: dict[int, int] = {}
    for i, pair in enumerate(value):
        if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                or any(type(x) is not int or x < 0 for x in pair)):
            out.append(FieldProblem(f"[{i}]", f"expected a pair of non-negative integer indices, got {pair!r}"))
            continue
        g, p = pair
        if g in used_g:
            out.append(FieldProblem(f"[{i}][0]", f"ground-truth violation {g} is already matched in [{used_g[g]}] "
                                                 "(matching is one-to-one)"))
        if p in used_p:
            out.append(FieldProblem(f"[{i}][1]", f"prediction {p} is already matched in [{used_p[p]}] "
                                                 "(matching is one-to-one)"))
        used_g.setdefault(g, i)
        used_p.setdefault(p, i)
    return out


def _validate_indices(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldProblem("", f"expected an array of indices, got {type(value).__name__}")]
    return [FieldProblem(f"[{i}]", f"expected a non-negative integer, got {x!r}")
            for i, x in enumerate(value) if type(x) is not int or x < 0]


MATCHES = LabelKind("matches", _validate_matches, description="pairs [gt, pred] a human says are the same violation")
GT_WRONG = LabelKind("gt_wrong", _validate_indices, per_sample=True, description="ground-truth violations that are wrong")
MISSING_GT = LabelKind("missing_gt", _validate_indices, description="predictions that are real but missing from the ground truth")


@lru_cache(maxsize=1024)
def _pair_keys(n_gt: int, n_pred: int) -> tuple[tuple[tuple[int, int], str], ...]:
    """((g, p), "g,p") of every (ground truth, prediction) pair, made once per shape: agreement asks for them per
    unit and annotator (1.7M item names at 100k samples, now shared strings)."""
    return tuple(((g, p), f"{g},{p}") for g in range(n_gt) for p in range(n_pred))


@dataclass(frozen=True)
class ViolationsScheme:
    name: str = NAME
    title: str = MANIFEST.title
    record_keys: frozenset[str] = RECORD_KEYS
    required_keys: frozenset[str] = frozenset(("text",))
    unit_noun: str = MANIFEST.unit_noun
    accepts: str = MANIFEST.accepts
    file_suffixes: tuple[str, ...] = MANIFEST.file_suffixes
    llm_run: str = MANIFEST.llm_run
    columns: tuple[Column, ...] = (Column("n_gt", "#GT"), Column("n_pred", "#Pred"))
    record_schema: str | None = "import-record.schema.json"
    label_schema: str | None = "label-line.schema.json"

    @property
    def label_kinds(self) -> Mapping[str, LabelKind]:
        return base.label_kinds(MATCHES, GT_WRONG, MISSING_GT, CURATED_GT)

    # -- records -------------------------------------------------------------------------------------------------
    def detect(self, raw: Mapping[str, Any]) -> bool:
        return "text" in raw and "judges" not in raw  # a judge record has a text too (its judges tell it apart)

    def parse(self, raw: Mapping[str, Any]) -> Parsed:
        return parse_record(raw if type(raw) is dict else dict(raw))

    def to_json(self, record: ViolationRecord) -> dict[str, Any]:
        s = record.sample
        out: dict[str, Any] = {"scheme": NAME, "id": s.id, "text": s.text,
                               "ground_truth": [violation_json(v) for v in s.ground_truth],
                               "predictions": {c: [violation_json(v) for v in vs] for c, vs in s.predictions.items()}}
        for name, value in (("context", s.context), ("split", s.split), ("meta", record.meta)):
            if value is not None:
                out[name] = value
        return out

    def record_id(self, record: ViolationRecord) -> str:
        return record.sample.id

    def record_text(self, record: ViolationRecord) -> str:
        return record.sample.text

    # -- units ---------------------------------------------------------------------------------------------------
    def units(self, record: ViolationRecord) -> list[str]:
        return sorted(record.sample.predictions) or [GROUND_TRUTH]

    def unit_summary(self, record: ViolationRecord, unit: str) -> dict[str, Any]:
        s = record.sample
        return {"n_gt": len(s.ground_truth), "n_pred": len(s.predictions.get(unit, ()))}

    def machine_label(self, record: ViolationRecord, unit: str) -> Any:
        """The checker's predictions; the matcher's proposal (`matches`) is added by whoever scored the unit."""
        preds = record.sample.predictions.get(unit)
        if preds is None:
            return None
        return {"predictions": [violation_json(v) for v in preds], "matches": None}

    def accept(self, machine_label: Any) -> dict[str, Any]:
        matches = (machine_label or {}).get("matches") or []
        return {"matches": sorted([int(g), int(p)] for g, p in matches), "status": "accepted"}

    # -- figures -------------------------------------------------------------------------------------------------
    def metrics(self, record: ViolationRecord, unit: str, labels: Mapping[str, Any],
                params: Mapping[str, Any] | None = None) -> dict[str, float]:
        """P/R/F1 of the checker on this sample from the human matches (ground truth marked wrong left out,
        predictions marked as missing ground truth counted as found)."""
        matches = labels.get("matches")
        if matches is None:
            return {}
        s = record.sample
        wrong = set(labels.get("gt_wrong") or ())
        extra = set(labels.get("missing_gt") or ())
        pairs = [(g, p) for g, p in matches if g not in wrong]
        n_gt = len(s.ground_truth) - len(wrong) + len(extra)
        n_pred = len(s.predictions.get(unit, ()))
        tp = len(pairs) + len(extra - {p for _, p in pairs})
        fp, fn = n_pred - tp, n_gt - tp
        from calibration.schemes.violations.metrics import prf  # the one zero-denominator convention

        precision, recall, f1 = (float(x) for x in prf(tp, fp, fn))
        return {"tp": float(tp), "fp": float(fp), "fn": float(fn), "precision": precision, "recall": recall, "f1": f1}

    def label_items(self, record: ViolationRecord, unit: str, labels: Mapping[str, Any]) -> dict[str, Any]:
        """Every (gt, pred) pair of the unit -> matched (1) or not (0)."""
        matches = labels.get("matches")
        if matches is None:
            return {}
        chosen = {(int(g), int(p)) for g, p in matches}
        s = record.sample
        pairs = _pair_keys(len(s.ground_truth), len(s.predictions.get(unit, ())))
        return {key: int(pair in chosen) for pair, key in pairs}

    def label_items_many(self, records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]) -> tuple[Any, Any, Any]:
        """`label_items` of many (sample, unit, kind, value) rows at once, as arrays (base.Capabilities): the human
        ceiling's items at 100k samples are millions of (gt, pred) pairs, a dict and a string each through
        `label_items`. Item g,p is coded g * M + p (M: one more than the largest prediction count), one-to-one
        with label_items' key "g,p"; a row label_items cannot read (a bad value, no record) has no items, as
        app.services.agreement.record_items has it."""
        import numpy as np

        n = len(rows)
        n_gt, n_pred = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        chosen_row: list[int] = []
        chosen: list[tuple[int, int]] = []
        for i, (sid, unit, kind, value) in enumerate(rows):
            record = records.get(sid) if kind == "matches" and value is not None else None
            if record is None:
                continue
            try:
                pairs = {(int(g), int(p)) for g, p in value}
                s = record.sample
                n_gt[i], n_pred[i] = len(s.ground_truth), len(s.predictions.get(unit, ()))
            except (KeyError, TypeError, ValueError, IndexError, AttributeError):
                n_gt[i] = n_pred[i] = 0
                continue
            chosen_row.extend([i] * len(pairs))
            chosen.extend(pairs)
        sizes = n_gt * n_pred
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        row = np.repeat(np.arange(n, dtype=np.int64), sizes)
        j = np.arange(int(offsets[-1]), dtype=np.int64) - offsets[row]
        width = n_pred[row]
        m = int(n_pred.max(initial=0)) + 1
        item = (j // np.maximum(width, 1)) * m + j % np.maximum(width, 1)
        category = np.zeros(len(row), dtype=np.int64)
        if chosen:
            r = np.asarray(chosen_row, dtype=np.int64)
            g, p = np.asarray(chosen, dtype=np.int64).T
            ok = (g >= 0) & (g < n_gt[r]) & (p >= 0) & (p < n_pred[r])
            category[offsets[r[ok]] + g[ok] * n_pred[r[ok]] + p[ok]] = 1
        return row, item, category

    def presets(self) -> dict[str, dict[str, Any]]:
        from calibration.schemes.violations.config import PRESETS

        return {name: cfg.to_dict() for name, cfg in PRESETS.items()}

    def search_problem(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                       options: Mapping[str, Any]) -> "SearchProblem | None":
        """calibration.schemes.violations.search: the match weights and thresholds against the human matches."""
        from calibration.schemes.violations.search import search_problem

        return search_problem(records, labels, options)

    def check_options(self, options: Mapping[str, Any]) -> None:
        """The optional hook calibration calls before reading any label: the search space the options describe
        (components, step, thresholds, fix, matching) is built, so a bad one raises SpaceError naming its part."""
        from calibration.schemes.violations.search import make_space

        if any(options.get(k) is not None for k in ("components", "step", "thresholds", "fix", "matching")):
            make_space(options.get("components") or "ha", options.get("step") or 0.1, options.get("matching") or "greedy",
                       options.get("thresholds"), options.get("fix"))

    def evaluate(self, records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                 options: Mapping[str, Any]) -> base.Report:
        """The checker leaderboard under match configs (evaluation.py lists the options)."""
        from calibration.schemes.violations.evaluation import evaluate_report

        return evaluate_report(records, labels, options)


SCHEME = ViolationsScheme()
