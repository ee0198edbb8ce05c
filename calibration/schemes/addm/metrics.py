"""The three ADDM scores, computed from per-business count columns so that a bootstrap only re-sums rows.

Ordinal AUPRC (0..1): mean of scikit-learn's average precision for >=High (High+Critical vs Low) and
>=Critical (Critical vs rest) over the method's risk scores; a missing risk score falls back to the verdict's
ordinal x 5; a task whose ground truth has one class only is skipped; fewer than 2 scored businesses, or no
task left, gives 0.0. Results with an error or neither a score nor a verdict are left out.

Process score (0..100): sum(w_i v_i) / sum(w_i) x 100 over the five components. Only a null snippet
validity drops its weight; any other null component counts as 0.0. Components, over the method's results
without an error:
- incident_precision: micro over businesses of |claimed review ids & GT review ids| / |claimed review ids|;
  no claims at all gives 1.0.
- severity_accuracy: share of evidences in a GT review whose severity equals that review's GT incident
  (the first one listed when a review has several).
- modifier_accuracy: over the same evidences, one check per policy modifier: detected == in the GT incident.
- verdict_support_rate: share of results with a verdict whose verdict equals the policy's verdict from the
  result's own evidences (no evidence: Low Risk).
- snippet_validity: share of evidences with a snippet that was located in its review (null: no snippets).

Consistency (0..100): like verdict support, but results without evidence are left out; none left gives 0.0.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.schemes.addm.policy import (
    ADDM_V2,
    COMPONENTS,
    CRITICAL,
    HIGH,
    MODIFIERS,
    Policy,
)
from calibration.schemes.addm.records import AddmSample, Incident, MethodResult

COUNTS: tuple[str, ...] = (
    "claimed", "matched", "severity_correct", "severity_total", "modifier_correct", "modifier_total",
    "supported", "support_total", "snippet_valid", "snippet_total", "consistent", "consistency_total")
_C = {name: i for i, name in enumerate(COUNTS)}
_ZERO: tuple[int, ...] = (0,) * len(COUNTS)


def incident_points(incidents: Sequence[Incident], policy: Policy = ADDM_V2) -> float:
    """Point total of incidents: severity points plus each listed modifier's bonus."""
    return float(sum(policy.points(i.severity) + sum(policy.bonus(m) for m in i.modifiers) for i in incidents))


def policy_verdict(incidents: Sequence[Incident], policy: Policy = ADDM_V2) -> int:
    """The policy's ordinal verdict for a set of incidents."""
    return policy.verdict(incident_points(incidents, policy))


def risk_score(result: MethodResult) -> float | None:
    """The result's risk score, else its verdict's ordinal x 5, else None."""
    if result.risk_score is not None:
        return result.risk_score
    return None if result.verdict is None else result.verdict * 5.0


def result_counts(sample: AddmSample, result: MethodResult, policy: Policy = ADDM_V2) -> tuple[int, ...]:
    """The COUNTS row of one method result (zeros for a result with an error). Plain ints: this runs once per
    result, and numpy's per-call overhead on 12-element rows cost more than the arithmetic."""
    if result.error is not None:
        return _ZERO
    return _counts(_truth_by_review(sample), result, policy._points, policy._bonus, policy)  # type: ignore[attr-defined]


def _truth_by_review(sample: AddmSample) -> dict[str, Incident]:
    """The sample's ground-truth incident of each review (its first)."""
    gt_by_review: dict[str, Incident] = {}
    for inc in sample.incidents:
        gt_by_review.setdefault(inc.review_id, inc)
    return gt_by_review


@dataclass(frozen=True)
class MethodTable:
    """Per-business columns of one method over the samples (rows where it was not run are all zero / NaN)."""

    method: str
    gt: np.ndarray  # (n,) int8 ground-truth ordinal
    score: np.ndarray  # (n,) float64 risk score for AUPRC, NaN when left out
    counts: np.ndarray  # (n, len(COUNTS)) float64
    ran: np.ndarray  # (n,) bool: the method has a result (with or without an error)


def method_table(samples: Sequence[AddmSample], method: str, policy: Policy = ADDM_V2) -> MethodTable:
    return method_tables(samples, [method], policy)[0]


def method_tables(samples: Sequence[AddmSample], methods: Sequence[str], policy: Policy = ADDM_V2) -> list[MethodTable]:
    """`method_table` of each method, in one pass over the samples: each sample's ground truth by review is made
    once for all its methods and the counts are `result_counts`' inlined (a call per result and a generator per
    evidence were most of evaluate's own work at 100k businesses). The same rows, the same floats."""
    n, names = len(samples), list(methods)
    gt = np.fromiter((s.verdict for s in samples), dtype=np.int8, count=n)
    score = {m: [math.nan] * n for m in names}
    rows: dict[str, list[tuple[int, ...]]] = {m: [_ZERO] * n for m in names}
    ran = {m: [False] * n for m in names}
    points, bonus = policy._points, policy._bonus  # type: ignore[attr-defined]
    for i, s in enumerate(samples):
        got = s.methods
        gt_by_review: dict[str, Incident] | None = None
        for m in names:
            r = got.get(m)
            if r is None:
                continue
            ran[m][i] = True
            if r.error is not None:
                continue
            rs = r.risk_score if r.risk_score is not None else None if r.verdict is None else r.verdict * 5.0
            if rs is not None:
                score[m][i] = rs
            if gt_by_review is None:
                gt_by_review = _truth_by_review(s)
            rows[m][i] = _counts(gt_by_review, r, points, bonus, policy)
    return [MethodTable(m, gt, np.array(score[m], dtype=np.float64),
                        np.array(rows[m], dtype=np.float64).reshape(n, len(COUNTS)), np.array(ran[m], dtype=bool))
            for m in names]


def _counts(gt_by_review: dict[str, Incident], result: MethodResult, points: dict[str, float],
            bonus: dict[str, float], policy: Policy) -> tuple[int, ...]:
    """`result_counts` of a result without an error, given its sample's ground truth by review (first incident
    per review) and the policy's point tables; the verdict's point total added in `incident_points`' order."""
    evidences = result.evidences
    claimed = {e.review_id for e in evidences}
    matched = len(claimed & gt_by_review.keys())
    sev_ok = sev_n = mod_ok = mod_n = snip_ok = snip_n = 0
    total = 0  # incident_points: sum(points + sum(bonuses)) from 0, left to right
    for e in evidences:
        mods = e.modifiers
        g = gt_by_review.get(e.review_id)
        if g is not None:
            sev_n += 1
            sev_ok += e.severity == g.severity
            for m in MODIFIERS:
                mod_n += 1
                mod_ok += (m in mods) == (m in g.modifiers)
        if e.snippet is not None:
            snip_n += 1
            snip_ok += e.start is not None
        extra = 0
        for m in mods:
            extra = extra + bonus.get(m, 0.0)
        total = total + (points.get(e.severity, 0.0) + extra)
    sup = sup_n = cons = cons_n = 0
    if result.verdict is not None:
        ok = int(policy.verdict(float(total)) == result.verdict)
        sup, sup_n = ok, 1
        if evidences:
            cons, cons_n = ok, 1
    return (len(claimed), matched, sev_ok, sev_n, mod_ok, mod_n, sup, sup_n, snip_ok, snip_n, cons, cons_n)


def methods_of(samples: Sequence[AddmSample]) -> list[str]:
    return sorted({m for s in samples for m in s.methods})


# --- scores from columns ---------------------------------------------------------------------------------------

def average_precision(y: np.ndarray, s: np.ndarray) -> float:
    """scikit-learn's average_precision_score(y, s) for 0/1 `y` (both classes present) without importing it (a
    second of every `concord evaluate --scheme addm`): its precision-recall curve has one point per distinct
    score, so it is built from the class counts per distinct score (one sort, np.unique), with its own
    operations in its order, so the same float."""
    distinct, code = np.unique(s, return_inverse=True)
    pos = np.bincount(code, weights=y, minlength=distinct.size)[::-1]  # per distinct score, highest first
    total = np.bincount(code, minlength=distinct.size)[::-1]
    tps = np.cumsum(pos)  # what sklearn's cumulative sum gives at each threshold (exact: whole numbers)
    fps = np.cumsum(total).astype(np.float64) - tps
    ps = tps + fps
    precision = np.where(ps != 0, np.divide(tps, ps), 0.0)
    recall = tps / tps[-1]
    precision, recall = np.concatenate((precision[::-1], [1.0])), np.concatenate((recall[::-1], [0.0]))
    return float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))


def ordinal_auprc(y_true: Sequence[int] | np.ndarray, scores: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """{'auprc_ge_high', 'auprc_ge_critical' (None when skipped), 'ordinal_auprc', 'n_samples'} (scikit-learn AP)."""
    y = np.asarray(y_true, dtype=np.int64)
    s = np.asarray(scores, dtype=np.float64)
    out: dict[str, Any] = {"auprc_ge_high": None, "auprc_ge_critical": None, "ordinal_auprc": 0.0, "n_samples": int(y.size)}
    if y.size < 2:
        return out
    values = []
    for name, level in (("auprc_ge_high", HIGH), ("auprc_ge_critical", CRITICAL)):
        b = (y >= level).astype(np.int64)
        if 0 < b.sum() < b.size:
            out[name] = average_precision(b, s)
            values.append(out[name])
    out["ordinal_auprc"] = float(np.mean(values)) if values else 0.0
    return out


def _ap_from_hist(pos: np.ndarray, neg: np.ndarray) -> float:
    """Average precision from class counts per distinct score (ascending); NaN when one class is absent.

    Same step-wise definition as scikit-learn's average_precision_score (each distinct score a threshold),
    but O(distinct scores) on counts: the bootstrap resamples counts, and calling sklearn per replicate
    (a sort of every resample) was 20x slower.
    """
    P, N = pos.sum(), neg.sum()
    if P <= 0 or N <= 0:
        return math.nan
    tp = np.cumsum(pos[::-1])
    fp = np.cumsum(neg[::-1])
    seen = tp + fp
    prec = np.divide(tp, seen, out=np.zeros_like(tp, dtype=np.float64), where=seen > 0)
    return float(np.sum(pos[::-1] * prec) / P)


def fast_ordinal_auprc(gt: np.ndarray, code: np.ndarray, n_codes: int, weights: np.ndarray | None = None) -> float:
    """Ordinal AUPRC from integer score codes (rank of the distinct score, -1 = left out); see `ordinal_auprc`."""
    keep = code >= 0
    if int(keep.sum() if weights is None else weights[keep].sum()) < 2:
        return 0.0
    idx = code[keep].astype(np.int64) * 3 + gt[keep].astype(np.int64)
    hist = np.bincount(idx, weights=None if weights is None else weights[keep], minlength=3 * n_codes).reshape(n_codes, 3)
    vals = [_ap_from_hist(hist[:, 1] + hist[:, 2], hist[:, 0]), _ap_from_hist(hist[:, 2], hist[:, 0] + hist[:, 1])]
    vals = [v for v in vals if not math.isnan(v)]
    return float(np.mean(vals)) if vals else 0.0


def _ratio(num: float, den: float) -> float | None:
    return num / den if den > 0 else None


def process_components(sums: np.ndarray) -> dict[str, float | None]:
    """The five components from COUNTS column sums (None = null)."""
    c = lambda name: float(sums[_C[name]])  # noqa: E731
    return {
        "incident_precision": _ratio(c("matched"), c("claimed")) if c("claimed") > 0 else 1.0,
        "severity_accuracy": _ratio(c("severity_correct"), c("severity_total")),
        "modifier_accuracy": _ratio(c("modifier_correct"), c("modifier_total")),
        "verdict_support_rate": _ratio(c("supported"), c("support_total")),
        "snippet_validity": _ratio(c("snippet_valid"), c("snippet_total")),
    }


def process_score(components: dict[str, float | None], weights: dict[str, float] | Sequence[float] = ADDM_V2.process_weights) -> dict[str, float]:
    """{'process_score' (0..100), 'weighted_sum', 'total_weight'}: only a null snippet_validity drops its weight."""
    w = dict(zip(COMPONENTS, weights)) if not isinstance(weights, dict) else weights
    weighted = total = 0.0
    for name in COMPONENTS:
        v = components.get(name)
        if v is None and name == "snippet_validity":
            continue
        weighted += w[name] * (0.0 if v is None else v)
        total += w[name]
    return {"process_score": weighted / total * 100 if total > 0 else 0.0, "weighted_sum": weighted, "total_weight": total}


def consistency_score(sums: np.ndarray) -> float:
    total = float(sums[_C["consistency_total"]])
    return float(sums[_C["consistent"]]) / total * 100 if total > 0 else 0.0


def scores(table: MethodTable, policy: Policy = ADDM_V2) -> dict[str, Any]:
    """The three scores and the component table of one method (no intervals)."""
    keep = ~np.isnan(table.score)
    auprc = ordinal_auprc(table.gt[keep], table.score[keep])
    sums = table.counts.sum(axis=0)
    comps = process_components(sums)
    proc = process_score(comps, policy.process_weights)
    return {
        "auprc": auprc["ordinal_auprc"], "auprc_ge_high": auprc["auprc_ge_high"],
        "auprc_ge_critical": auprc["auprc_ge_critical"], "n_scored": auprc["n_samples"],
        "process_score": proc["process_score"],
        "process_components": comps | {"weighted_sum": proc["weighted_sum"], "total_weight": proc["total_weight"]},
        "consistency_score": consistency_score(sums),
        "consistent": int(sums[_C["consistent"]]), "consistency_total": int(sums[_C["consistency_total"]]),
        "n_samples": int(table.ran.sum()),
        "counts": {name: int(v) for name, v in zip(COUNTS, sums)},
    }
