"""Evaluate methods on ADDM records: three scores with bootstrap intervals, component tables, a ranking.

Intervals: percentile bootstrap over businesses with the project's draw, `agreement.resample_counts` (one set
of replicates for every score and method, so all draw the same businesses: comparisons are paired). A replicate
is a vector of draw counts, so sums are a matrix product and AUPRC a weighted histogram (vectorised over
replicates). "overall" pools the counts of all methods
(micro) for the process components and consistency; its AUPRC is the mean of the methods' AUPRCs, since
ranking one method's risk scores against another's scale would mean nothing.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from calibration.agreement import percentile_interval, resample_counts
from calibration.schemes.addm.metrics import (
    COUNTS, MethodTable, consistency_score, method_tables, methods_of, process_components,
    process_score, scores)
from calibration.schemes.addm.policy import ADDM_V2, COMPONENTS, Policy
from calibration.schemes.addm.records import AddmSample

DEFAULT_BOOT = 1000
SCORES: tuple[str, ...] = ("auprc", "process_score", "consistency_score")
_LABELS = {"incident_precision": "Incident Precision", "severity_accuracy": "Severity Accuracy",
           "modifier_accuracy": "Modifier Accuracy", "verdict_support_rate": "Verdict Support",
           "snippet_validity": "Snippet Validity"}
COMPONENT_LABELS = _LABELS  # the spec's console names, for every table that shows components
_CONS = [COUNTS.index("consistent"), COUNTS.index("consistency_total")]


def _codes(table: MethodTable) -> tuple[np.ndarray, int]:
    """Rank of each business's distinct risk score (-1 = left out) and the number of distinct scores."""
    code = np.full(table.score.size, -1, dtype=np.int64)
    keep = ~np.isnan(table.score)
    uniq, inv = np.unique(table.score[keep], return_inverse=True)
    code[keep] = inv
    return code, int(uniq.size)


def _ap_rows(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """metrics._ap_from_hist on (reps, codes) rows at once; NaN where a class is absent."""
    P, N = pos.sum(axis=1), neg.sum(axis=1)
    tp = np.cumsum(pos[:, ::-1], axis=1)
    seen = tp + np.cumsum(neg[:, ::-1], axis=1)
    prec = np.divide(tp, seen, out=np.zeros_like(tp), where=seen > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        ap = (pos[:, ::-1] * prec).sum(axis=1) / P
    return np.where((P > 0) & (N > 0), ap, np.nan)


def _auprc_rows(w: np.ndarray, gt: np.ndarray, code: np.ndarray, k: int) -> np.ndarray:
    """fast_ordinal_auprc of every replicate: `w` (reps, n) says how often each business was drawn."""
    reps = w.shape[0]
    keep = code >= 0
    if k == 0 or not keep.any():
        return np.zeros(reps)
    # each replicate's draws per (score, class) cell: a weighted bincount of the cells per replicate row, straight
    # from the weights (a sparse one-hot product copied the transposed weights first: 3x slower). The sums are of
    # whole counts, so exact in any order. Left-out units go to a spare cell.
    cell = np.where(keep, code * 3 + gt.astype(np.int64), 3 * k)
    full = np.empty((reps, 3 * k + 1))
    for r in range(reps):
        full[r] = np.bincount(cell, weights=w[r], minlength=3 * k + 1)
    hist = np.ascontiguousarray(full[:, :3 * k]).reshape(reps, k, 3)
    vals = np.stack([_ap_rows(hist[:, :, 1] + hist[:, :, 2], hist[:, :, 0]),
                     _ap_rows(hist[:, :, 2], hist[:, :, 0] + hist[:, :, 1])], axis=1)
    n_valid = np.isfinite(vals).sum(axis=1)
    mean = np.where(n_valid > 0, np.nansum(vals, axis=1) / np.maximum(n_valid, 1), 0.0)
    return np.where(hist.sum(axis=(1, 2)) >= 2, mean, 0.0)


def _process_rows(sums: np.ndarray, weights: Sequence[float]) -> np.ndarray:
    """metrics.process_score of (reps, COUNTS) column sums at once (only a null snippet validity drops its weight)."""
    c = {name: sums[:, i] for i, name in enumerate(COUNTS)}

    def ratio(num: str, den: str) -> np.ndarray:
        return np.divide(c[num], c[den], out=np.zeros_like(c[num]), where=c[den] > 0)

    ip = np.where(c["claimed"] > 0, ratio("matched", "claimed"), 1.0)
    comps = (ip, ratio("severity_correct", "severity_total"), ratio("modifier_correct", "modifier_total"),
             ratio("supported", "support_total"), ratio("snippet_valid", "snippet_total"))
    w = [float(x) for x in weights]
    weighted = sum(wi * v for wi, v in zip(w, comps))
    total = sum(w[:4]) + w[4] * (c["snippet_total"] > 0)
    return np.where(total > 0, weighted / np.where(total > 0, total, 1.0) * 100.0, 0.0)


def _consistency_rows(sums: np.ndarray) -> np.ndarray:
    num, den = sums[:, _CONS[0]], sums[:, _CONS[1]]
    return np.divide(num, den, out=np.zeros_like(num), where=den > 0) * 100.0


OnDraws = tuple[int, Callable[[np.ndarray], None]]  # (a chunk size, a callback given each such chunk's draw counts)


def _intervals(tables: list[MethodTable], codes: list[np.ndarray], n_codes: list[int], weights: Sequence[float],
               n_boot: int, seed: int, ci: float, on_draws: OnDraws | None = None
               ) -> dict[str, dict[str, list[float | None]]]:
    """Percentile intervals of the three scores per method and "overall", from one set of replicates.

    Each replicate is a vector of draw counts per business (agreement.resample_counts): sums are one matrix
    product and AUPRC one weighted histogram per replicate block, with no resampled copies of the data (a
    Python call per replicate took 32 s for 200 replicates at 100k businesses). `on_draws`: when its chunk size is
    this draw's, its callback is given every chunk too (the very draws `resample_counts(n, n_boot, seed, chunk)`
    gives: another figure on the same businesses need not draw them again).
    """
    keys = [t.method for t in tables] + ["overall"]
    none = {k: {"auprc_ci": [None, None], "process_ci": [None, None], "consistency_ci": [None, None]} for k in keys}
    n = tables[0].gt.size if tables else 0
    if n_boot <= 0 or n == 0:
        return none
    vals: dict[str, dict[str, list[np.ndarray]]] = {k: {"auprc": [], "process": [], "consistency": []} for k in keys}
    # every method's count columns side by side: one product per block of replicates; the pooled sums are theirs
    # added (whole numbers: the same floats as the product with the pooled counts)
    stacked = np.hstack([t.counts for t in tables])
    width = len(COUNTS)
    # blocks of replicates small enough that (reps, n) weights and the AUPRC histograms stay within ~100 MB
    chunk = int(max(1, min(64, 4_000_000 // max(n, 3 * max(n_codes, default=1)))))
    share = on_draws[1] if on_draws is not None and on_draws[0] == chunk else None
    for w in resample_counts(n, n_boot, seed, chunk=chunk):
        if share is not None:
            share(w)
        aucs = []
        every = w @ stacked
        for j, (t, code, k) in enumerate(zip(tables, codes, n_codes)):
            sums = every[:, j * width:(j + 1) * width]
            a = _auprc_rows(w, t.gt, code, k)
            aucs.append(a)
            v = vals[t.method]
            v["auprc"].append(a)
            v["process"].append(_process_rows(sums, weights))
            v["consistency"].append(_consistency_rows(sums))
        sums = every.reshape(w.shape[0], len(tables), width).sum(axis=1)
        vals["overall"]["auprc"].append(np.mean(aucs, axis=0))
        vals["overall"]["process"].append(_process_rows(sums, weights))
        vals["overall"]["consistency"].append(_consistency_rows(sums))
    alpha = 1.0 - ci
    out: dict[str, dict[str, list[float | None]]] = {}
    for k, v in vals.items():
        out[k] = {}
        for name, ci_key in (("auprc", "auprc_ci"), ("process", "process_ci"), ("consistency", "consistency_ci")):
            lo, hi = percentile_interval(np.concatenate(v[name]), alpha)
            out[k][ci_key] = [None if math.isnan(lo) else lo, None if math.isnan(hi) else hi]
    return out


def evaluate(samples: Sequence[AddmSample], policy: Policy = ADDM_V2, methods: Sequence[str] | None = None,
             n_boot: int = DEFAULT_BOOT, seed: int = 0, ci: float = 0.95, on_draws: OnDraws | None = None
             ) -> dict[str, Any]:
    """JSON-able `{"policy", "bootstrap", "methods": {name: scores + *_ci}, "overall", "ranking"}`. `on_draws`: see
    `_intervals` (its callback is given the draws, or nothing at all)."""
    names = list(methods) if methods is not None else methods_of(samples)
    tables = method_tables(samples, names, policy)
    out: dict[str, Any] = {"policy": policy.to_dict(),
                           "bootstrap": {"replicates": n_boot, "seed": seed, "ci": ci, "unit": "business"},
                           "n_businesses": len(samples), "methods": {}}
    codes, n_codes = [], []
    for t in tables:
        code, k = _codes(t)
        out["methods"][t.method] = scores(t, policy)
        codes.append(code)
        n_codes.append(k)
    out["overall"] = _overall(tables, out["methods"], policy)
    if tables:
        for key, cis in _intervals(tables, codes, n_codes, policy.process_weights, n_boot, seed, ci, on_draws).items():
            (out["overall"] if key == "overall" else out["methods"][key]).update(cis)
    out["ranking"] = ranking(out)
    return out


def _overall(tables: list[MethodTable], per_method: dict[str, Any], policy: Policy) -> dict[str, Any]:
    if not tables:
        return {}
    sums = np.sum([t.counts for t in tables], axis=0).sum(axis=0)
    comps = process_components(sums)
    proc = process_score(comps, policy.process_weights)
    return {
        "auprc": float(np.mean([per_method[t.method]["auprc"] for t in tables])),
        "process_score": proc["process_score"],
        "process_components": comps | {"weighted_sum": proc["weighted_sum"], "total_weight": proc["total_weight"]},
        "consistency_score": consistency_score(sums),
        "counts": {name: int(v) for name, v in zip(COUNTS, sums)},
    }


def mean_score(res: dict[str, Any]) -> float:
    """Mean of AUPRC (as a percentage), process and consistency: the ranking key."""
    return (100.0 * res["auprc"] + res["process_score"] + res["consistency_score"]) / 3.0


def ranking(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Methods best first by the mean of the three scores (ties by name), with each score."""
    rows = [{"method": m, "mean": mean_score(r), **{k: r[k] for k in SCORES}} for m, r in result["methods"].items()]
    rows.sort(key=lambda r: (-r["mean"], r["method"]))
    return [r | {"rank": i + 1} for i, r in enumerate(rows)]


def component_table(result: dict[str, Any], method: str | None = None) -> pd.DataFrame:
    """The process components of a method (or "overall" when None): component, score, weight, used."""
    res = result["overall"] if method is None else result["methods"][method]
    comps = res["process_components"]
    weights = result["policy"]["process_weights"]
    rows = [{"component": c, "label": _LABELS[c], "score": comps[c], "weight": weights[c],
             "used": not (comps[c] is None and c == "snippet_validity")} for c in COMPONENTS]
    return pd.DataFrame(rows).set_index("component")


def _pct(v: float | None) -> str:
    return "N/A" if v is None else f"{100 * v:.1f}%"


def format_report(result: dict[str, Any], method: str | None = None, target: float = 75.0) -> str:
    """Plain-text tables like ADDM's console output: unified scores, then process components."""
    res = result["overall"] if method is None else result["methods"][method]
    head = f" {'OVERALL' if method is None else 'METHOD: ' + method}"
    lines = [head, "", " UNIFIED SCORES", f" {'Metric':<18} {'Score':>8}  {'95% CI':<17} Status"]
    for label, key, scale, ci_key in (("AUPRC", "auprc", 100.0, "auprc_ci"), ("Process", "process_score", 1.0, "process_ci"),
                                      ("Consistency", "consistency_score", 1.0, "consistency_ci")):
        v = res[key] * scale
        lo, hi = res.get(ci_key, [None, None])
        ci_txt = "" if lo is None else f"[{lo * scale:.1f}, {hi * scale:.1f}]"
        lines.append(f" {label:<18} {v:>7.1f}%  {ci_txt:<17} {'ok' if v > target else 'low'}")
    lines += ["", " PROCESS COMPONENTS", f" {'Component':<20} {'Score':>8} {'Weight':>7}"]
    for c, row in component_table(result, method).iterrows():
        lines.append(f" {row['label']:<20} {_pct(row['score']):>8} {round(100 * row['weight']):>6}%")
    return "\n".join(lines)
