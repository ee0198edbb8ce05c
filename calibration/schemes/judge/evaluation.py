"""Judges against the humans: AUROC, balanced accuracy, F1 and Cohen's kappa with bootstrap intervals, and for
probability-like judges a reliability diagram with the expected calibration error.

One bootstrap draw for everything (`agreement.resample_counts` over samples, seeded): every judge and every figure
sees the same resampled samples, so comparisons between judges are paired. A replicate is a vector of draw counts,
so the figures are functions of weighted sums: each judge's scores are ranked once (their distinct values), and a
replicate's draws per class and distinct score (`ClassCounts`, every judge at once) give its AUROC as a weighted
histogram (Mann-Whitney with ties counted one half, equal to scikit-learn's roc_auc_score for weights 1, which a
test checks) and its confusion counts (a decision per distinct score); the ECE is the draw counts' product with
the judge's calibration rows. Every sum but the ECE's is of whole numbers: exact in any order. The decision of a
judge is `columns.decisions` at its threshold (its default, or `thresholds` of the parameters evaluated).
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.agreement import auroc_from_counts, draw_counts, percentile_interval, resample_index_chunks
from calibration.agreement import weighted_auroc  # noqa: F401  re-exported by calibration.schemes.judge
from calibration.schemes.judge.columns import JudgeColumns, decisions
from calibration.search.objectives import f1, kappa

FIGURES: tuple[str, ...] = ("auroc", "balanced_accuracy", "f1", "kappa")
DEFAULT_BINS = 10


def confusion_figures(c: np.ndarray) -> dict[str, np.ndarray]:
    """Balanced accuracy, F1 (0 when undefined, as scikit-learn) and kappa of (..., 4) counts tp, fp, fn, tn; NaN
    where there is no sample at all."""
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    with np.errstate(invalid="ignore", divide="ignore"):
        ba = (tp / (tp + fn) + tn / (tn + fp)) / 2.0
    some = c.sum(axis=-1) > 0
    return {"balanced_accuracy": ba, "f1": np.where(some, f1(tp, fp, fn, tn), np.nan), "kappa": kappa(tp, fp, fn, tn)}


def _ece(sums: np.ndarray, bins: int) -> np.ndarray:
    """(..., ) ECE from (..., 3 * bins) sums [predicted per bin, positives per bin, count per bin]."""
    pred, obs, cnt = sums[..., :bins], sums[..., bins:2 * bins], sums[..., 2 * bins:]
    n = cnt.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(obs - pred).sum(axis=-1) / n


def bin_of(p: np.ndarray, bins: int) -> np.ndarray:
    """Equal-width bins of [0, 1]: floor(p * bins), 1.0 in the last bin."""
    return np.clip(np.floor(np.clip(p, 0.0, 1.0) * bins), 0, bins - 1).astype(np.int64)


class _Judge:
    """What one judge's figures need, built once: its samples, their classes, codes and per-sample rows."""

    def __init__(self, cols: JudgeColumns, j: int, y: np.ndarray, threshold: float, bins: int) -> None:
        s = cols.scores[j]
        self.mask = ~np.isnan(s) & ~np.isnan(y)
        self.y = y[self.mask]
        oriented = cols.oriented()[j][self.mask]
        values, self.code = np.unique(oriented, return_inverse=True)
        self.k = values.size
        d = decisions(s[None, self.mask], np.array([threshold]), cols.high_positive[j:j + 1])[0]
        self.decided = np.zeros(self.k)  # the decision at each distinct score (equal scores, equal decisions)
        self.decided[self.code] = d
        # each of its samples' column in `ClassCounts`: negatives' score codes, then positives'
        self.key = np.where(self.y == 1, self.k, 0) + self.code
        self.probability = bool(cols.probability[j])
        self.bins = bins
        if self.probability:
            p = cols.positive_probability(j)[self.mask]
            onehot = np.zeros((p.size, bins))
            onehot[np.arange(p.size), bin_of(p, bins)] = 1.0
            self.cal_rows = np.hstack([onehot * p[:, None], onehot * self.y[:, None], onehot])

    @property
    def two_classes(self) -> bool:
        return 0 < self.y.sum() < self.y.size

    def figures(self, counts: np.ndarray, reps: int, ws: np.ndarray | None) -> dict[str, np.ndarray]:
        """Every figure for `reps` replicates: `counts` (reps, 2k) their draws per class and distinct score of this
        judge's samples (`ClassCounts`), `ws` (reps, its samples) their draw counts (read by the ECE only)."""
        q, p = counts[:, :self.k], counts[:, self.k:]  # per distinct score: negatives' and positives' draws
        d = self.decided
        # tp fp fn tn: sums of whole numbers (exact in any order), the per-sample rows' sums
        out = confusion_figures(np.stack([p @ d, q @ d, p @ (1 - d), q @ (1 - d)], axis=-1))
        out["auroc"] = auroc_from_counts(p, q) if self.two_classes else np.full(reps, np.nan)
        if self.probability:
            out["ece"] = _ece(ws @ self.cal_rows, self.bins)
        return out


class ClassCounts:
    """Every judge's draws per class and distinct score (`_Judge.key`) for rows of draws: the columns of all judges
    side by side (`widths`), whole numbers (exact in any order: the sums the per-sample rows gave). Samples with the
    same key under every judge (a pattern) are counted together when there are few patterns (at most half the
    samples, and a small pattern table): a replicate is then a bincount of its drawn samples' patterns times that
    table; else a sparse (keys, samples) matrix times the draw counts."""

    def __init__(self, judges: Sequence[_Judge], n: int) -> None:
        from calibration.agreement import distinct_rows

        self.widths = np.cumsum([0, *(2 * jd.k for jd in judges)])
        width = int(self.widths[-1])
        keys = np.full((n, len(judges)), -1, dtype=np.int64)
        for j, (jd, off) in enumerate(zip(judges, self.widths)):
            keys[jd.mask, j] = jd.key + off
        patterns, self.pattern = distinct_rows(keys) if n and len(judges) else (keys[:0], np.zeros(n, dtype=np.int64))
        self.by_pattern = 2 * len(patterns) <= n and len(patterns) * width <= 20_000_000
        has = patterns >= 0
        if self.by_pattern:
            self.table = np.zeros((len(patterns), width))
            self.table[np.nonzero(has)[0], patterns[has]] = 1.0
        else:
            from scipy import sparse  # only when drawn per sample

            rows, j = np.nonzero(keys >= 0)
            self.table = sparse.csr_matrix((np.ones(rows.size), (keys[rows, j], rows)), shape=(width, n))

    def of(self, idx: np.ndarray, w: np.ndarray | None) -> np.ndarray:
        """(reps, width) sums for the replicates drawing the samples `idx` (reps, size), whose draw counts over the
        n samples are `w` (reps, n); w is only read without patterns (None: made from idx)."""
        if not self.by_pattern:
            return np.asarray((self.table @ (draw_counts(idx, self.pattern.size) if w is None else w).T).T)
        size = self.table.shape[0]
        drawn = np.empty((idx.shape[0], size))
        for r in range(idx.shape[0]):
            drawn[r] = np.bincount(self.pattern[idx[r]], minlength=size)
        return drawn @ self.table


def reliability(p: np.ndarray, y: np.ndarray, bins: int = DEFAULT_BINS) -> list[dict[str, Any]]:
    """Reliability diagram rows over equal-width bins of predicted P(positive): bin edges, mean predicted,
    observed positive rate, count (empty bins left out)."""
    b = bin_of(p, bins)
    out = []
    for i in range(bins):
        sel = b == i
        if sel.any():
            out.append({"low": i / bins, "high": (i + 1) / bins, "mean_predicted": float(p[sel].mean()),
                        "observed_rate": float(y[sel].mean()), "count": int(sel.sum())})
    return out


def expected_calibration_error(p: np.ndarray, y: np.ndarray, bins: int = DEFAULT_BINS) -> float:
    """sum over bins of count / n x |observed rate - mean predicted| (NaN with no sample)."""
    rows = reliability(p, y, bins)
    n = sum(r["count"] for r in rows)
    return sum(r["count"] / n * abs(r["observed_rate"] - r["mean_predicted"]) for r in rows) if n else math.nan


def judge_figures(cols: JudgeColumns, y: np.ndarray, thresholds: np.ndarray, *, n_boot: int = 1000, seed: int = 0,
                  ci: float = 0.95, bins: int = DEFAULT_BINS) -> dict[str, dict[str, Any]]:
    """Judge -> {n, positives, threshold, probability, figure: {estimate, low, high}, ..., reliability}: every
    figure of every judge against the binary reference y (n,) (NaN = no label), with paired intervals."""
    n = y.size
    judges = [_Judge(cols, j, y, float(thresholds[j]), bins) for j in range(len(cols.names))]
    counter = ClassCounts(judges, n)
    widths = counter.widths
    dense = any(jd.probability for jd in judges) or not counter.by_pattern  # the draw counts of every sample

    def each(idx: np.ndarray, w: np.ndarray | None) -> list[dict[str, np.ndarray]]:
        """Every judge's figures for the replicates drawing `idx` (draw counts w): the class counts of all judges
        at once; w on a judge's samples taken once per distinct set of samples (the probability-like judges' ECE
        product)."""
        counts = counter.of(idx, w)
        taken: dict[bytes, np.ndarray] = {}
        out = []
        for jd, lo, hi in zip(judges, widths[:-1], widths[1:]):
            ws = None
            if jd.probability:
                key = jd.mask.tobytes()
                ws = taken.get(key)
                if ws is None:
                    ws = taken[key] = w[:, jd.mask]
            out.append(jd.figures(counts[:, lo:hi], idx.shape[0], ws))
        return out

    est = each(np.arange(n)[None, :], np.ones((1, n)))  # every sample once
    reps: list[dict[str, list[np.ndarray]]] = [{k: [] for k in e} for e in est]
    if n_boot > 0 and n:
        for idx in resample_index_chunks(n, n_boot, seed):  # resample_counts' stream: the same replicates
            for got, r in zip(each(idx, draw_counts(idx, n) if dense else None), reps):
                for k, v in got.items():
                    r[k].append(v)
    out: dict[str, dict[str, Any]] = {}
    for j, (jd, e, r) in enumerate(zip(judges, est, reps)):
        res: dict[str, Any] = {"n": int(jd.y.size), "positives": int(jd.y.sum()), "threshold": float(thresholds[j]),
                               "high_means_positive": bool(cols.high_positive[j]), "probability": jd.probability}
        for k, v in e.items():
            low, high = percentile_interval(np.concatenate(r[k]), 1 - ci) if r[k] else (math.nan, math.nan)
            res[k] = {"estimate": float(v[0]), "low": low, "high": high}
        if jd.probability:
            res["reliability"] = reliability(cols.positive_probability(j)[jd.mask], jd.y, bins)
        out[cols.names[j]] = res
    return out


def ceiling(records_ids: Sequence[str], levels: Mapping[str, np.ndarray], judge_votes: Mapping[str, np.ndarray],
            *, n_boot: int, seed: int, ci: float) -> dict[str, Any] | None:
    """The human ceiling beside each judge (calibration.annotators.item_agreement on the binary sample label):
    Fleiss' kappa and Krippendorff's alpha among the annotators with intervals, their mean pairwise Cohen's kappa,
    and per judge the mean of its Cohen's kappas against each annotator (comparable with the humans' mean pairwise
    kappa). None with fewer than two annotators."""
    if len(levels) < 2:
        return None
    from calibration.annotators import CodedItems, item_agreement

    humans = _coded_humans(levels, records_ids)
    hh = item_agreement(humans, n_boot=n_boot, seed=seed, ci=ci)
    if not hh["pairs"]:
        return None
    pair_kappas = [p["kappa"]["estimate"] for p in hh["pairs"] if math.isfinite(p["kappa"]["estimate"])]
    out: dict[str, Any] = {"annotators": len(levels), "samples": hh["n_items"], "fleiss_kappa": hh["overall"]["kappa"],
                           "alpha": hh["overall"]["alpha"],
                           "mean_pair_kappa": float(np.mean(pair_kappas)) if pair_kappas else math.nan,
                           "pairs": [{"a": p["a"], "b": p["b"], "n": p["n_items"], "kappa": p["kappa"]}
                                     for p in hh["pairs"]], "judges": {}}
    judge_code = len(humans.annotators)
    for judge, votes in judge_votes.items():
        has = np.flatnonzero(~np.isnan(votes))
        rows = CodedItems(np.concatenate([humans.sample, has]), np.zeros(len(humans) + has.size, dtype=np.int64),
                          np.concatenate([humans.annotator, np.full(has.size, judge_code, dtype=np.int64)]),
                          np.concatenate([humans.category, votes[has].astype(np.int64)]),
                          [*humans.annotators, "\x00judge"], humans.categories, samples=humans.samples)
        each = item_agreement(rows, n_boot=0)
        ks = [p["kappa"]["estimate"] for p in each["pairs"] if "\x00judge" in (p["a"], p["b"])
              and math.isfinite(p["kappa"]["estimate"])]
        out["judges"][judge] = float(np.mean(ks)) if ks else math.nan
    return out


def _coded_humans(levels: Mapping[str, np.ndarray], records_ids: Sequence[str]) -> Any:
    """The annotators' binary labels as `CodedItems` (sample = record index, one item per sample, category = the
    0/1 label), entries in the order the rows (sample, "label", annotator, label) were once listed: per annotator
    (in `levels` order) the records they labeled, so samples count in the same order of first appearance and the
    figures are those of the rows, bit for bit (calibration.annotators), without a tuple per label."""
    from calibration.annotators import CodedItems

    names = list(levels)
    has = [np.flatnonzero(~np.isnan(row)) for row in levels.values()]
    sample = np.concatenate([h.astype(np.int64) for h in has]) if has else np.zeros(0, dtype=np.int64)
    annotator = np.concatenate([np.full(h.size, a, dtype=np.int64) for a, h in enumerate(has)]) if has else sample
    category = (np.concatenate([row[h] for row, h in zip(levels.values(), has)]).astype(np.int64) if has
                else sample)
    return CodedItems(sample, np.zeros(sample.size, dtype=np.int64), annotator, category, names, [0, 1],
                      samples=list(records_ids), items=["label"])
