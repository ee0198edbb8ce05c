"""Objectives: how well machine decisions agree with human ones, vectorised over configs, folds and resamples.

Three kinds, by the sufficient statistics they need (so the engine can sum per-cell counts and never keep a
configs x items array):
- "confusion": from summed confusion counts cm[..., human, machine] (k x k): kappa, weighted_kappa
  (quadratic, for ordinal classes), f1 (of class 1; binary), mcc, accuracy.
- "strata": rank agreement across strata (checkers, models): Spearman / Kendall tau-b between the per-stratum
  machine rate and human rate (2 x class-weighted positives / the stratum's rank weight). With violations' weight
  n_gt + n_pred the rate is the checker's F1 (2 matches / (n_gt + n_pred)); by default the weight is the number
  of items, so the rate ranks strata by their share of positive decisions.
- "items": from the item decisions themselves: auroc (binary humans, machine scores), rmse, item_spearman,
  item_kendall (continuous or ordinal decisions).
Conventions follow calibration.agreement (scikit-learn / scipy): kappa is NaN when both sides use a single
label, MCC and F1 are 0.0 when undefined, correlations are NaN when a side is constant. Binary formulas are
written on TP/FP/FN/TN so that integer counts give bit-identical scores whatever the summation order.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


def _f(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


# ---------------------------------------------------------------- binary, on TP/FP/FN/TN
def kappa(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
    """Cohen's kappa of machine vs human decisions (binary)."""
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where(pe < 1.0, k, np.nan)


def f1(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
    """F1 of the positive class (class 1)."""
    tp, fp, fn = map(_f, (tp, fp, fn))
    den = 2 * tp + fp + fn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, 2 * tp / den, 0.0)


def accuracy(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (tp + tn) / n, np.nan)


def mcc(tp: Any, fp: Any, fn: Any, tn: Any) -> np.ndarray:
    """Matthews correlation; 0.0 when a side is constant (as scikit-learn)."""
    tp, fp, fn, tn = map(_f, (tp, fp, fn, tn))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (tp * tn - fp * fn) / den, 0.0)


def _binary(fn: Callable[..., np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda cm: fn(cm[..., 1, 1], cm[..., 0, 1], cm[..., 1, 0], cm[..., 0, 0])


# ---------------------------------------------------------------- k x k confusion
def kappa_cm(cm: np.ndarray) -> np.ndarray:
    """Cohen's kappa from confusion counts (..., k, k)."""
    if cm.shape[-1] == 2:
        return _binary(kappa)(cm)
    cm = _f(cm)
    n = cm.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        po = np.trace(cm, axis1=-2, axis2=-1) / n
        pe = (cm.sum(-1) * cm.sum(-2)).sum(-1) / (n * n)
        k = (po - pe) / (1.0 - pe)
    return np.where(pe < 1.0, k, np.nan)


def weighted_kappa_cm(cm: np.ndarray) -> np.ndarray:
    """Quadratic-weighted kappa (scikit-learn's cohen_kappa_score(weights="quadratic")) for ordinal classes."""
    cm = _f(cm)
    k = cm.shape[-1]
    i = np.arange(k)
    w = (i[:, None] - i[None, :]) ** 2.0
    n = cm.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = cm.sum(-1)[..., :, None] * cm.sum(-2)[..., None, :] / n[..., None, None]
        den = (w * expected).sum(axis=(-2, -1))
        return np.where(den > 0, 1.0 - (w * cm).sum(axis=(-2, -1)) / den, np.nan)


def mcc_cm(cm: np.ndarray) -> np.ndarray:
    """Matthews correlation (multiclass as scikit-learn); 0.0 when undefined."""
    if cm.shape[-1] == 2:
        return _binary(mcc)(cm)
    cm = _f(cm)
    t, p = cm.sum(-1), cm.sum(-2)
    c, s = np.trace(cm, axis1=-2, axis2=-1), cm.sum(axis=(-2, -1))
    cov_tp = c * s - (t * p).sum(-1)
    den = np.sqrt((s * s - (p * p).sum(-1)) * (s * s - (t * t).sum(-1)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, cov_tp / den, 0.0)


def accuracy_cm(cm: np.ndarray) -> np.ndarray:
    if cm.shape[-1] == 2:
        return _binary(accuracy)(cm)
    cm = _f(cm)
    n = cm.sum(axis=(-2, -1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, np.trace(cm, axis1=-2, axis2=-1) / n, np.nan)


def balanced_accuracy_cm(cm: np.ndarray) -> np.ndarray:
    """Mean recall over the classes the humans used (scikit-learn's balanced_accuracy_score): the figure a judge is
    read by when one class is rare (FaithBench: hallucinated or not); NaN without any human decision."""
    cm = _f(cm)
    support = cm.sum(-1)  # (..., k) human decisions per class
    with np.errstate(invalid="ignore", divide="ignore"):
        recall = np.diagonal(cm, axis1=-2, axis2=-1) / support
        used = support > 0
        n_used = used.sum(-1)
        return np.where(n_used > 0, np.where(used, recall, 0.0).sum(-1) / n_used, np.nan)


# ---------------------------------------------------------------- rank agreement
def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's rho along the last axis (average ranks for ties); NaN when a side is constant."""
    from scipy import stats  # here: scipy.stats costs ~1 s to import and only the rank objectives use it

    rx = stats.rankdata(x, axis=-1)
    ry = np.broadcast_to(stats.rankdata(y, axis=-1), rx.shape)
    dx = rx - rx.mean(axis=-1, keepdims=True)
    dy = ry - ry.mean(axis=-1, keepdims=True)
    den = np.sqrt((dx * dx).sum(-1) * (dy * dy).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (dx * dy).sum(-1) / den, np.nan)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b along the last axis (scipy's default variant); NaN when a side is constant. O(n^2): strata."""
    x = np.asarray(x, dtype=np.float64)
    y = np.broadcast_to(np.asarray(y, dtype=np.float64), x.shape)
    i, j = np.triu_indices(x.shape[-1], k=1)
    sx = np.sign(x[..., i] - x[..., j])
    sy = np.sign(y[..., i] - y[..., j])
    n0 = i.size
    den = np.sqrt((n0 - (sx == 0).sum(-1)) * (n0 - (sy == 0).sum(-1)).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (sx * sy).sum(-1) / den, np.nan)


def strata_rank(objective: str, machine: np.ndarray, human: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Rank agreement across strata of machine / weight vs human / weight, along the last axis (..., S).

    Strata with nothing to weigh (weight 0 in every position given) are left out; fewer than two left: NaN.
    """
    weight = np.asarray(weight, dtype=np.float64)
    keep = weight.reshape(-1, weight.shape[-1]).max(axis=0) > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        fm = 2.0 * machine[..., keep] / weight[..., keep]
        fh = 2.0 * np.asarray(human)[..., keep] / weight[..., keep]
    fm, fh = np.nan_to_num(fm, nan=0.0), np.nan_to_num(fh, nan=0.0)
    if keep.sum() < 2:
        return np.full(fm.shape[:-1], np.nan)
    return (spearman_rows if objective == "spearman" else kendall_rows)(fm, fh)


def strata_score(objective: str, cm: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """`strata_rank` from per-stratum confusion counts (..., S, k, k): class-weighted machine and human totals."""
    cls = np.arange(cm.shape[-1], dtype=np.float64)
    machine = (_f(cm.sum(-2)) * cls).sum(-1)
    human = (_f(cm.sum(-1)) * cls).sum(-1)
    return strata_rank(objective, machine, human, weight)


# ---------------------------------------------------------------- on item decisions
def auroc(d: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Area under the ROC curve of machine scores d (c, n) for binary human labels y (n,); NaN with one class."""
    y = np.asarray(y) == 1
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return np.full(d.shape[0], np.nan)
    from scipy import stats  # see spearman_rows

    ranks = stats.rankdata(_f(d), axis=-1)
    return (ranks[:, y].sum(-1) - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg)


def rmse(d: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.sqrt(((_f(d) - _f(y)) ** 2).mean(-1)) if d.shape[-1] else np.full(d.shape[0], np.nan)


def item_spearman(d: np.ndarray, y: np.ndarray) -> np.ndarray:
    return spearman_rows(_f(d), _f(y)) if d.shape[-1] > 1 else np.full(d.shape[0], np.nan)


def item_kendall(d: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b (scipy, O(n log n)) per config; NaN when a side is constant."""
    out = np.full(d.shape[0], np.nan)
    if d.shape[-1] < 2 or np.ptp(y) == 0:
        return out
    from scipy import stats  # see spearman_rows

    for i, row in enumerate(_f(d)):
        if np.ptp(row) > 0:
            out[i] = stats.kendalltau(row, y).statistic
    return out


@dataclass(frozen=True)
class Objective:
    name: str
    kind: str  # "confusion" | "strata" | "items"
    fn: Callable[..., np.ndarray]
    description: str
    sign: float = 1.0  # +1: higher is better; -1: lower is better (rmse)
    binary_only: bool = False
    needs_classes: bool = True  # decisions must be classes (no continuous problems)

    def check(self, n_classes: int, has_strata: bool) -> None:
        """Raise ValueError when this objective cannot score a problem of this shape."""
        if self.needs_classes and n_classes < 2:
            raise ValueError(f"objective {self.name!r} needs class decisions; the problem's are continuous")
        if self.binary_only and n_classes != 2:
            raise ValueError(f"objective {self.name!r} needs binary decisions; the problem has {n_classes} classes")
        if self.kind == "strata" and not has_strata:
            raise ValueError(f"objective {self.name!r} ranks strata; the problem's units have no 'stratum'")


REGISTRY: dict[str, Objective] = {o.name: o for o in (
    Objective("kappa", "confusion", kappa_cm, "Cohen's kappa of item decisions"),
    Objective("weighted_kappa", "confusion", weighted_kappa_cm, "quadratic-weighted kappa (ordinal classes)"),
    Objective("f1", "confusion", _binary(f1), "F1 of the positive class", binary_only=True),
    Objective("mcc", "confusion", mcc_cm, "Matthews correlation"),
    Objective("accuracy", "confusion", accuracy_cm, "share of items decided as the humans did"),
    Objective("balanced_accuracy", "confusion", balanced_accuracy_cm,
              "mean recall over the classes the humans used (a rare class counts as much as a common one)"),
    Objective("spearman", "strata", strata_rank, "Spearman rho of the strata's machine vs human rates"),
    Objective("kendall", "strata", strata_rank, "Kendall tau-b of the strata's machine vs human rates"),
    Objective("auroc", "items", auroc, "AUROC of machine scores for binary human labels", binary_only=True,
              needs_classes=False),
    Objective("rmse", "items", rmse, "root mean squared error of decisions", sign=-1.0, needs_classes=False),
    Objective("item_spearman", "items", item_spearman, "Spearman rho of item decisions", needs_classes=False),
    Objective("item_kendall", "items", item_kendall, "Kendall tau-b of item decisions", needs_classes=False),
)}
OBJECTIVES: tuple[str, ...] = tuple(REGISTRY)
PAIR_OBJECTIVES: tuple[str, ...] = ("kappa", "f1", "accuracy", "mcc")  # the violations CLI's item-level choices
CHECKER_OBJECTIVES: tuple[str, ...] = ("spearman", "kendall")


def get(name: str) -> Objective:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"objective: expected one of {list(OBJECTIVES)}, got {name!r}") from None


def score_confusion(objective: Objective, cm: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """A confusion or strata objective from counts (..., k, k), or (..., S, k, k) with weight (..., S)."""
    if objective.kind == "strata":
        return strata_score(objective.name, cm, weight)
    return objective.fn(cm)
