"""Objectives computed from confusion counts, vectorised over any leading axes (configs, folds, resamples).

Pair level: the machine's decision for a candidate pair (matched or not) against the human's. Counting
TP/FP/FN/TN per config is enough, so no per-config decision array is ever materialised.
Checker level: does the metric rank checkers as the humans do? Spearman / Kendall tau-b between per-checker
F1 from the machine's matches and from the human's (F1 = 2 * matches / (n_gt + n_pred)).
Conventions follow calibration.agreement (scikit-learn / scipy): kappa is NaN when both sides use a single
label, MCC and F1 are 0.0 when undefined, correlations are NaN when a side is constant.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

PAIR_OBJECTIVES: tuple[str, ...] = ("kappa", "f1", "accuracy", "mcc")
CHECKER_OBJECTIVES: tuple[str, ...] = ("spearman", "kendall")
OBJECTIVES: tuple[str, ...] = PAIR_OBJECTIVES + CHECKER_OBJECTIVES


def _f(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def kappa(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Cohen's kappa of machine vs human decisions (binary)."""
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where(pe < 1.0, k, np.nan)


def f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """F1 of the "match" class."""
    tp, fp, fn = map(_f, (tp, fp, fn))
    den = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 2 * tp / den, 0.0)


def accuracy(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (tp + tn) / n, np.nan)


def mcc(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray, tn: np.ndarray) -> np.ndarray:
    """Matthews correlation; 0.0 when a side is constant (as scikit-learn)."""
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (tp * tn - fp * fn) / den, 0.0)


PAIR_FUNCS = {"kappa": kappa, "f1": f1, "accuracy": accuracy, "mcc": mcc}


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho along the last axis (average ranks for ties); NaN when a side is constant."""
    rx = stats.rankdata(x, axis=-1)
    ry = np.broadcast_to(stats.rankdata(y, axis=-1), rx.shape)
    dx = rx - rx.mean(axis=-1, keepdims=True)
    dy = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((dx * dx).sum(-1) * (dy * dy).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(-1) / den, np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (scipy's default variant); NaN when a side is constant."""
    x = np.asarray(x, dtype=np.float64)
    y = np.broadcast_to(np.asarray(y, dtype=np.float64), x.shape)
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[..., i] - y[..., j])
    n0 = i.size
    den = np.sqrt((n0 - (sx == 0).sum(-1)) * (n0 - (sy == 0).sum(-1)).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sy).sum(-1) / den, np.nan)


@dataclass(frozen=True)
class UnitTotals:
    """Per-unit constants the objectives need besides the machine's match counts."""

    pairs: np.ndarray  # (U,) candidate pairs
    positives: np.ndarray  # (U,) human matches
    n_gt: np.ndarray  # (U,)
    n_pred: np.ndarray  # (U,)
    checker: np.ndarray  # (U,) checker index of the unit
    n_checkers: int


def pair_score(objective: str, counts: np.ndarray, pairs: np.ndarray | float, positives: np.ndarray | float) -> np.ndarray:
    """Pair-level objective from summed counts (..., 2) [machine matches on human-negative, human-positive]."""
    fp, tp = counts[..., 0], counts[..., 1]
    fn = positives - tp
    tn = pairs - positives - fp
    return PAIR_FUNCS[objective](tp, fp, fn, tn)


def checker_score(
    objective: str, machine: np.ndarray, human: np.ndarray, denom: np.ndarray
) -> np.ndarray:
    """Rank agreement across checkers from per-checker machine matches (..., K), human matches and n_gt+n_pred.

    Checkers with nothing to score (n_gt + n_pred == 0 in every position) are left out.
    """
    keep = np.asarray(denom).reshape(-1, denom.shape[-1]).max(axis=0) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        fm = 2.0 * machine[..., keep] / denom[..., keep]
        fh = 2.0 * human[..., keep] / denom[..., keep]
    fm, fh = np.nan_to_num(fm, nan=0.0), np.nan_to_num(fh, nan=0.0)
    if keep.sum() < 2:
        return np.full(fm.shape[:-1], np.nan)
    return (spearman_rows if objective == "spearman" else kendall_rows)(fm, fh)


def score_units(objective: str, counts: np.ndarray, totals: UnitTotals, units: np.ndarray | None = None) -> np.ndarray:
    """Objective over the selected units (bool mask or index array; all when None) of counts (..., U, 2)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {list(OBJECTIVES)}, got {objective!r}")
    sel = np.arange(totals.pairs.size) if units is None else np.asarray(units)
    if sel.dtype == bool:
        sel = np.flatnonzero(sel)
    c = counts[..., sel, :]
    if objective in PAIR_FUNCS:
        return pair_score(objective, c.sum(axis=-2), totals.pairs[sel].sum(), totals.positives[sel].sum())
    onehot = np.zeros((sel.size, totals.n_checkers))
    onehot[np.arange(sel.size), totals.checker[sel]] = 1.0
    machine = c.sum(axis=-1).astype(np.float64) @ onehot
    human = totals.positives[sel].astype(np.float64) @ onehot
    denom = (totals.n_gt[sel] + totals.n_pred[sel]).astype(np.float64) @ onehot
    return checker_score(objective, machine, human, denom)
