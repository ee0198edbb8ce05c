"""`evaluate` for the trace scheme: each score's mean under the reference labels (the headline of a RAG evaluation),
annotator vs human (sentence labels and scores) and judges vs a reference, per RAGBench subset, under both variants,
with bootstrap intervals over samples.

Every interval resamples samples (records) with calibration.agreement.resample_counts: each statistic here is a
function of per-sample sums (confusion counts, squared errors, per-score-value class weights), so a replicate is
one matrix product; Spearman's rho of a replicate is agreement.resampled_spearman's (average ranks from counts,
exactly the rho of the resample). All statistics over the same samples share one pass over the draws. The figures on the full data
are the same functions as agreement.py's (Cohen's kappa, F1, RMSE, roc_auc_score), which a test checks.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from calibration.agreement import (SpearmanCodes, auroc_from_counts, draw_counts, percentile_interval,
                                   resample_index_chunks, spearman_codes, spearman_from_counts)
from calibration.schemes.base import Report, Table
from calibration.schemes.trace.agreement import LABEL_TYPES
from calibration.schemes.trace.columns import TraceColumns
from calibration.schemes.trace.metrics import SCORES, VARIANTS, count_rows, ragbench_adherent, score_arrays
from calibration.schemes.trace.records import JUDGE_METRICS, TraceLabels, TraceRecord, corrected_labels, human_adherent

ALL = "all"
HUMAN_KINDS = ("relevant", "utilized", "unsupported", "adherent")


def human_labels(labels: Mapping[str, Any]) -> TraceLabels | None:
    """The human's own labels of a sample (None when the human labeled none of the trace kinds)."""
    if not any(labels.get(k) is not None for k in HUMAN_KINDS):
        return None
    given: dict[str, Any] = {kind: tuple(labels[kind]) for kind in ("relevant", "utilized", "unsupported")
                             if labels.get(kind) is not None}  # built at once: a replace() per kind cost more
    verdict = human_adherent(labels)
    if verdict is not None:
        given["adherence"] = verdict
    return TraceLabels(**given)


# -- statistics of per-sample sums, on the data (weights 1) and on bootstrap replicates (weights = draw counts) -------
def _kappa_f1(c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cohen's kappa and F1 (1.0 with no positive on either side, as agreement.label_agreement) of (.., 4) counts."""
    tp, fp, fn, tn = (c[..., i] for i in range(4))
    n = tp + fp + fn + tn
    with np.errstate(invalid="ignore", divide="ignore"):
        po = (tp + tn) / n
        pe = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / n**2
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
        f1 = np.where(tp + fp + fn == 0, 1.0, 2 * tp / (2 * tp + fp + fn))
    return np.where(n > 0, kappa, np.nan), np.where(n > 0, f1, np.nan)


def _auroc_codes(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, int]:
    """Each unit's (distinct score, class) code, 2 * score code + positive, and how many codes: the draws landing
    on each are a replicate's weighted AUROC's counts (`_auroc_counts`)."""
    values, inv = np.unique(s, return_inverse=True)
    return 2 * inv.ravel().astype(np.int64) + (y > 0), 2 * values.size


def _auroc_counts(counts: np.ndarray) -> np.ndarray:
    """Weighted Mann-Whitney AUROC of positives y (hallucinated) scored s from (reps, codes) draws per
    `_auroc_codes` code (ties count 1/2): agreement.weighted_auroc of the draw counts. Equals roc_auc_score(y, s)
    for unit weights; NaN when a class is absent."""
    return auroc_from_counts(counts[:, 1::2], counts[:, 0::2])


def _spearman(codes: SpearmanCodes) -> Any:
    return lambda counts: spearman_from_counts(counts, codes)


def _code_counts(codes: np.ndarray, k: int, idx: np.ndarray) -> np.ndarray:
    """(reps, k) float: the draws of each replicate (rows of unit indices `idx`) landing on each of k codes, in one
    bincount of the drawn codes offset per replicate."""
    reps = idx.shape[0]
    drawn = codes[idx]
    drawn += np.arange(0, reps * k, k, dtype=drawn.dtype)[:, None]
    return np.bincount(drawn.ravel(), minlength=reps * k).reshape(reps, k).astype(np.float64)


def _weighted_code_counts(codes: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
    """`_code_counts` from the replicates' draw counts per unit `w` (reps, n), when they are at hand: one weighted
    bincount of the n codes per replicate instead of a gather and bincount of every draw (a third of the time at
    100k samples). Sums of whole numbers below 2**53: the very floats, in any order."""
    out = np.empty((w.shape[0], k))
    for r in range(w.shape[0]):
        out[r] = np.bincount(codes, weights=w[r], minlength=k)
    return out


JOINT_SHARE = 4  # coded statistics share one count when their joint codes number at most n / JOINT_SHARE


def _joint_codes(coded: Sequence[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, int, list[Any]] | None:
    """(each unit's joint code, how many, per statistic (order, starts, codes present, k)) of the coded statistics
    over the same n units, when they are at least two and their joint codes few (else None): a replicate's draws
    are then counted once per joint code, and each statistic's counts summed from those (`_split_counts`), instead
    of one gather and bincount of every draw per statistic (a sixth of `concord evaluate --scheme trace` at 100k)."""
    if len(coded) < 2:
        return None
    distinct, joint = _distinct_code_rows([c for c, _ in coded], [k for _, k in coded])
    if distinct.shape[0] * JOINT_SHARE > n:
        return None
    parts = []
    for j, (_, k) in enumerate(coded):
        col = distinct[:, j]
        order = np.argsort(col, kind="stable")
        present, starts = np.unique(col[order], return_index=True)
        parts.append((order, starts, present, k))
    return joint.ravel().astype(np.int64), distinct.shape[0], parts


def _distinct_code_rows(codes: Sequence[np.ndarray], ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(np.column_stack(codes), axis=0, return_inverse=True) of code columns (column j in 0..ks[j]-1):
    the same sorted distinct rows and inverse, from one 1-d unique of each row read as a mixed-radix number (first
    column most significant: the same order), when those fit in int64; a row-wise unique sorts whole rows (a tenth
    of trace's bootstrap at 100k samples)."""
    if math.prod(max(int(k), 1) for k in ks) >= 2**62:
        distinct, inverse = np.unique(np.column_stack(codes), axis=0, return_inverse=True)
        return distinct, inverse.ravel()
    number = np.zeros(len(codes[0]), dtype=np.int64)
    for c, k in zip(codes, ks, strict=True):
        number *= max(int(k), 1)
        number += c
    values, inverse = np.unique(number, return_inverse=True)
    distinct = np.empty((values.size, len(codes)), dtype=np.int64)
    for j in range(len(codes) - 1, -1, -1):
        k = max(int(ks[j]), 1)
        distinct[:, j] = values % k
        values = values // k
    return distinct, inverse.ravel()


def _split_counts(counts: np.ndarray, parts: Sequence[Any]) -> list[np.ndarray]:
    """Each statistic's (reps, k) counts from the (reps, K) counts per joint code: sums of integers, so the very
    floats `_code_counts` gives."""
    out = []
    for order, starts, present, k in parts:
        c = np.zeros((counts.shape[0], k))
        c[:, present] = np.add.reduceat(counts[:, order], starts, axis=1)
        out.append(c)
    return out


class _Intervals:
    """Every interval of one report, drawn together: `add(stat, n)` gives [estimate, low, high] of `stat(weights)`
    for weights (reps, n) (ones, then bootstrap draw counts), the interval filled by `run()`. The statistics over n
    units share one pass over `resample_index_chunks(n, n_boot, seed)` (the draws `resample_counts` counts): the
    same replicates each one drew on its own before (same seed and n), drawn once instead of once per statistic.
    `add(stat, n, columns)`: `stat` is a function of the weighted column sums of `columns` (n, m) instead; all such
    columns over n units are summed in one matrix product per chunk of replicates. `add(stat, n, codes=c, k=k)`:
    `stat` is a function of the (reps, k) draws landing on each unit's code (0..k-1), counted from the drawn
    indices (the AUROC and Spearman counts: integers, so the same as the product with the draw counts they were,
    without the dense weights)."""

    def __init__(self, n_boot: int, seed: int, alpha: float) -> None:
        self.n_boot, self.seed, self.alpha = n_boot, seed, alpha
        self.pending: dict[int, list[tuple[Any, np.ndarray | None, tuple[np.ndarray, int] | None, list[float]]]] = {}

    def add(self, stat: Any, n: int, columns: np.ndarray | None = None, *, codes: np.ndarray | None = None,
            k: int = 0) -> list[float]:
        if not n:  # nothing labeled: no figure (reshape(0, -1) cannot infer the columns)
            return [math.nan, math.nan, math.nan]
        if columns is not None:
            columns = np.asarray(columns, dtype=np.float64).reshape(n, -1)
        coded = None if codes is None else (np.asarray(codes, dtype=np.int64).ravel(), k)
        ones = np.ones((1, n))
        if coded is not None:
            est = float(stat(np.bincount(coded[0], minlength=k)[None, :].astype(np.float64))[0])
        else:
            est = float((stat(ones) if columns is None else stat(ones @ columns))[0])
        slot = [est, math.nan, math.nan]
        if self.n_boot and not math.isnan(est):
            self.pending.setdefault(n, []).append((stat, columns, coded, slot))
        return slot

    def run(self) -> None:
        for n, stats in self.pending.items():
            blocks = {id(c): c for _, c, _, _ in stats if c is not None}  # kappa and F1 share their counts
            where, lo = {}, 0
            for key, c in blocks.items():
                where[key] = slice(lo, lo + c.shape[1])
                lo += c.shape[1]
            stacked = np.hstack(list(blocks.values())) if blocks else None
            weighted = stacked is not None or any(c is None and d is None for _, c, d, _ in stats)
            reps: list[list[np.ndarray]] = [[] for _ in stats]
            joint = _joint_codes([d for _, _, d, _ in stats if d is not None], n)
            for idx in resample_index_chunks(n, self.n_boot, self.seed):
                w = draw_counts(idx, n) if weighted else None  # resample_counts' weights
                sums = None if stacked is None else w @ stacked  # type: ignore[operator]
                count = _code_counts if w is None else (lambda codes, k, _: _weighted_code_counts(codes, k, w))  # noqa: B023
                shared = None if joint is None else iter(_split_counts(count(joint[0], joint[1], idx), joint[2]))
                for (stat, c, coded, _), out in zip(stats, reps):
                    if coded is not None:
                        out.append(stat(count(*coded, idx) if shared is None else next(shared)))
                    else:
                        out.append(stat(w) if c is None else stat(sums[:, where[id(c)]]))  # type: ignore[index]
            for (_, _, _, slot), out in zip(stats, reps):
                slot[1:] = percentile_interval(np.concatenate(out), self.alpha)
        self.pending.clear()


def _rmse_sums(s: np.ndarray) -> np.ndarray:
    """RMSE from sums of [squared error, 1] columns."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.sqrt(s[:, 0] / s[:, 1])


def _settle(x: Any) -> Any:
    """The report with its [estimate, low, high] slots as tuples (data) or formatted (table cells)."""
    if isinstance(x, dict):
        return {k: _settle(v) for k, v in x.items()}
    return tuple(x) if isinstance(x, list) else x


# -- the report ----------------------------------------------------------------------------------------------------
def _subsets(subsets: Sequence[str]) -> dict[str, np.ndarray]:
    names = np.array(subsets, dtype=object)
    distinct = set(subsets)
    out = {ALL: np.ones(len(subsets), dtype=bool)}
    for name in sorted(distinct - {""}):
        if len(distinct) > 1:
            out[name] = names == name
    return out


def _fmt(est: float, low: float, high: float) -> str:
    if math.isnan(est):
        return "–"
    return f"{est:.3f}" + ("" if math.isnan(low) else f" [{low:.3f}, {high:.3f}]")


def _judge_arrays(cols: TraceColumns) -> dict[str, dict[str, np.ndarray]]:
    """Judge (sorted) -> metric -> (n,) its scores, NaN where it gave none (agreement.judge_scores' frames)."""
    out = {j: {m: np.full(len(cols), np.nan) for m in JUDGE_METRICS} for j in sorted(cols.judges)}
    for (j, m), (samples, scores) in cols.judge_scores.items():
        if m in out[j]:
            out[j][m][np.asarray(samples, dtype=np.int64)] = np.asarray(scores, dtype=np.float64)
    return out


def _scores_table(counts: np.ndarray, variant: str) -> dict[str, np.ndarray]:
    return score_arrays(counts, variant)  # type: ignore[arg-type]


def evaluate(records: TraceColumns | Sequence[TraceRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]],
             options: Mapping[str, Any]) -> Report:
    """The report of samples given as columns (a project's, app/schemes/trace/store.py) or as records."""
    reference = str(options.get("reference") or "annotator")
    if reference not in ("annotator", "human"):
        raise ValueError(f"reference must be 'annotator' or 'human', got {reference!r}")
    variants = tuple(options.get("variants") or VARIANTS)
    n_boot, seed = int(options.get("n_boot", 1000)), int(options.get("seed", 0))
    alpha = float(options.get("alpha", 0.05))
    intervals = _Intervals(n_boot, seed, alpha)
    ci = intervals.add

    cols = records if isinstance(records, TraceColumns) else TraceColumns.from_records(records)
    n = len(cols)
    own: dict[int, Mapping[str, Any]] = {}  # sample index -> its human labels (unit '')
    index = {sid: i for i, sid in enumerate(cols.ids)}
    for (sid, unit), value in labels.items():
        if unit == "" and sid in index:
            own[index[sid]] = value
    human: dict[int, TraceLabels] = {}
    for i in sorted(own):
        h = human_labels(own[i])
        if h is not None:
            human[i] = h
    rows_h = np.fromiter(human, dtype=np.int64, count=len(human))  # the samples humans labeled, in order
    checked = np.zeros(n, dtype=bool)
    checked[rows_h] = True
    data: dict[str, Any] = {"reference": reference, "samples": n, "human_samples": int(checked.sum()),
                            "n_boot": n_boot, "labels": {}, "scores": {}, "judges": {}}
    tables: list[Table] = []

    # annotator vs human: sentence labels (and the adherence verdict) over the samples humans labeled
    confusion = _confusions(cols, human)
    rows = []
    for kind in (*LABEL_TYPES, "adherent"):
        conf = confusion[kind]
        keep = conf.sum(axis=1) > 0
        conf = conf[keep]
        items = int(conf.sum())
        kappa = ci(lambda s: _kappa_f1(s)[0], len(conf), conf)
        f1 = ci(lambda s: _kappa_f1(s)[1], len(conf), conf)
        data["labels"][kind] = {"samples": len(conf), "items": items, "kappa": kappa, "f1": f1}
        rows.append((kind, len(conf), items, kappa, f1))
    tables.append(Table("Annotator vs human: sentence labels (Cohen's kappa, F1 with the human as truth)",
                        ("label", "samples", "items", "kappa [95% CI]", "F1 [95% CI]"), tuple(rows)))

    # annotator vs human: the four scores and their average, per variant (counts once, each variant's formulas)
    annotator_counts = count_rows(cols.n_documents, cols.labels)
    truths = {i: corrected_labels(cols.labels[i], own[i]) for i in human}
    truth_counts = count_rows([cols.n_documents[i] for i in human], list(truths.values()))
    for variant in variants:
        sa = _scores_table(annotator_counts[rows_h], variant)
        sh = _scores_table(truth_counts, variant)
        rows, out = [], {}
        for name in (*SCORES, "average"):
            a, h = sa[name], sh[name]
            ok = ~(np.isnan(a) | np.isnan(h))
            a, h = a[ok], h[ok]
            rmse = ci(_rmse_sums, a.size, np.column_stack([(a - h) ** 2, np.ones(a.size)]))
            sp = spearman_codes(a, h)
            rho = ci(_spearman(sp), a.size, codes=sp.pair, k=sp.px.size)
            out[name] = {"n": int(a.size), "rmse": rmse, "spearman": rho}
            rows.append((name, int(a.size), rmse, rho))
        data["scores"][variant] = out
        tables.append(Table(f"Annotator vs human scores ({variant}): RMSE and Spearman over human-labeled samples",
                            ("score", "n", "RMSE [95% CI]", "Spearman [95% CI]"), tuple(rows)))

    # the headline: each score's mean under the reference labels, per subset and variant
    subsets = _subsets(cols.subsets)
    if reference == "annotator":
        ref_counts = annotator_counts
    else:  # unlabeled samples: no labels, NaN scores
        ref_counts = count_rows(cols.n_documents, [None] * n)
        ref_counts[rows_h] = truth_counts
    data["means"], headline, refs = {}, [], {}
    same: dict[bytes, list[float]] = {}  # scores equal under both variants (often completeness, adherence): one interval
    for variant in variants:
        ref = refs[variant] = _scores_table(ref_counts, variant)
        rows, out = [], {}
        for subset, mask in subsets.items():
            res = _means({k: v[mask] for k, v in ref.items()}, ci, same)
            if res["n"] == 0:
                continue
            out[subset] = res
            rows.append((subset, res["n"], *(_fmt(*res[name]) for name in SCORES)))
        data["means"][variant] = out
        headline.append(Table(f"Mean scores ({variant}, {reference} labels): the figures a RAG evaluation reports",
                            ("subset", "n", "relevance [95% CI]", "utilization [95% CI]", "completeness [95% CI]",
                             "adherence rate [95% CI]"), tuple(rows)))
    tables[:0] = headline  # first: what a reader of a RAG evaluation looks for

    # judges vs the reference scores, per subset and variant
    judges = _judge_arrays(cols)
    if judges:
        for variant in variants:
            ref = refs[variant]  # the headline's scores of the same labels
            has_ref = ~np.all(np.isnan(np.column_stack([ref[name] for name in SCORES])), axis=1)
            rows, out = [], {}
            for subset, mask in subsets.items():
                mask = mask & has_ref
                part = {k: v[mask] for k, v in ref.items()}
                for judge, js in judges.items():
                    res = _judge(part, {m: v[mask] for m, v in js.items()}, ci)
                    if res["n"] == 0:
                        continue
                    out.setdefault(subset, {})[judge] = res
                    rows.append((subset, judge, res["n"], res["hallucination_auroc"], res["relevance_rmse"],
                                 res["utilization_rmse"]))
            data["judges"][variant] = out
            tables.append(Table(f"Judges vs {reference} labels ({variant}): hallucination AUROC, relevance and "
                                "utilization RMSE", ("subset", "judge", "n", "AUROC [95% CI]", "relevance RMSE [95% CI]",
                                                     "utilization RMSE [95% CI]"), tuple(rows)))
    del own, human, truths, index, confusion, judges  # per-sample objects the draws below do not need: let them go
    intervals.run()
    data = _settle(data)
    tables = [replace(t, rows=tuple(tuple(_fmt(*c) if isinstance(c, list) else c for c in row) for row in t.rows))
              for t in tables]
    notes = [f"{int(checked.sum())} of {n} samples carry human trace labels; intervals: {n_boot} "
             "bootstrap resamples of samples (percentile)."]
    if reference == "human":
        notes.append("Judges are scored on the human-labeled samples only (the annotator's labels as the humans "
                     "corrected them).")
    notes.append("AUROC: roc_auc_score(not adherent, 1 - judge adherence); a judge's missing scores are left out.")
    return Report("trace", tuple(tables), data, tuple(notes))


def _confusions(cols: TraceColumns, human: Mapping[int, TraceLabels]) -> dict[str, np.ndarray]:
    """Label type -> (samples humans labeled, 4) counts tp, fp, fn, tn of the annotator (prediction) against the
    human (truth), per sample in order: agreement.sentence_labels' items (each distinct sentence key once, the
    sentences either side leaves open left out) counted with sets instead of a dict per side and sample."""
    out = {kind: np.zeros((len(human), 4)) for kind in (*LABEL_TYPES, "adherent")}
    rel, utl, sup, adh = (out[k] for k in (*LABEL_TYPES, "adherent"))
    for row, (i, lh) in enumerate(human.items()):
        la = cols.labels[i]
        for counts, a, h in ((rel, la.relevant, lh.relevant), (utl, la.utilized, lh.utilized)):
            if a is not None and h is not None:
                keys = set(cols.document_keys[i])
                pa, ph = keys.intersection(a), keys.intersection(h)
                tp = len(pa & ph)
                counts[row] = (tp, len(pa) - tp, len(ph) - tp, len(keys) - len(pa | ph))
        if (la.support is not None or la.unsupported is not None) and lh.unsupported is not None:
            flags = la.sentence_support(cols.response_keys[i])  # human: not listed = supported, as sentence_support
            listed = set(lh.unsupported)
            tp = fp = fn = tn = 0
            for k, v in flags.items():
                if v is None:
                    continue
                t = k not in listed
                if v:
                    tp, fp = (tp + 1, fp) if t else (tp, fp + 1)
                else:
                    fn, tn = (fn + 1, tn) if t else (fn, tn + 1)
            sup[row] = (tp, fp, fn, tn)
        x = ragbench_adherent(la)
        if lh.adherence is not None and not math.isnan(x):
            y = float(lh.adherence)
            adh[row, (0 if y == 1.0 else 1) if x == 1.0 else (2 if y == 1.0 else 3)] = 1
    return out


def _means(scores: Mapping[str, np.ndarray], ci: Any, same: dict[bytes, list[float]]) -> dict[str, Any]:
    """Each score's mean over the samples that have it (adherence: the share adherent), with its interval over
    samples; `n`: samples with any score. `same`: the slot of each array of values already asked for (the same
    values, the same draws: the very figures), shared instead of drawn again."""
    size = len(scores[SCORES[0]])
    res: dict[str, Any] = {"n": int((~np.all(np.isnan(np.column_stack([scores[name] for name in SCORES])), axis=1))
                                    .sum()) if size else 0}
    for name in SCORES:
        x = np.asarray(scores[name], dtype=float)
        x = x[~np.isnan(x)]
        if not x.size:
            res[name] = (math.nan,) * 3
            continue
        key = x.tobytes()
        if key not in same:
            same[key] = ci(lambda w, x=x: _mean_w(x, w), x.size)
        res[name] = same[key]
    return res


def _mean_w(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The mean of `x` per row of weights (ones, or bootstrap draw counts): a function of per-sample sums. Every row
    draws x.size units (integer counts: their float sum is exactly that), so the divisor is x.size, not a second
    pass over the weights."""
    return (w @ x) / x.size


def _judge(ref: Mapping[str, np.ndarray], js: Mapping[str, np.ndarray], ci: Any) -> dict[str, Any]:
    size = len(ref[SCORES[0]])
    res: dict[str, Any] = {"n": int((~np.all(np.isnan(np.column_stack([js[m] for m in JUDGE_METRICS])), axis=1)).sum())
                           if size else 0}
    y, s = ref["adherence"], js["adherence"]
    ok = ~(np.isnan(y) | np.isnan(s))
    y, s = (y[ok] == 0.0).astype(float), 1.0 - s[ok]
    two = y.size > 0 and 0 < y.sum() < y.size
    res["hallucination_auroc"] = [math.nan] * 3
    if two:
        codes, k = _auroc_codes(y, s)
        res["hallucination_auroc"] = ci(_auroc_counts, y.size, codes=codes, k=k)
    for m in ("relevance", "utilization"):
        t, p = ref[m], js[m]
        good = ~(np.isnan(t) | np.isnan(p))
        e = (p[good] - t[good]) ** 2
        res[f"{m}_rmse"] = ci(_rmse_sums, e.size, np.column_stack([e, np.ones(e.size)])) if e.size else [math.nan] * 3
    return res
