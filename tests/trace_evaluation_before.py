"""calibration/schemes/trace/evaluation.py as it was before issue #28 item 1 (one record object per sample, parsed
from the whole payload; counts per record and per variant): frozen here as the reference the columnar evaluate must
equal byte for byte (tests/test_trace_evaluate_columns.py). Not imported by the app."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from calibration.agreement import (SpearmanCodes, auroc_from_counts, draw_counts, percentile_interval,
                                   resample_index_chunks, spearman_codes, spearman_from_counts)
from calibration.schemes.base import Report, Table
from calibration.schemes.trace.agreement import LABEL_TYPES, judge_scores, sentence_labels
from calibration.schemes.trace.metrics import SCORES, VARIANTS, ragbench_adherent, score_records
from dataclasses import replace as _replace

from calibration.schemes.trace.records import TraceLabels, TraceRecord, human_adherent


def truth_labels(record: TraceRecord, labels: Mapping[str, Any]) -> TraceLabels:
    """records.truth_labels as it was (one replace() per field)."""
    t = record.labels
    if labels.get("relevant") is not None:
        t = _replace(t, relevant=tuple(labels["relevant"]))
    if labels.get("utilized") is not None:
        t = _replace(t, utilized=tuple(labels["utilized"]))
    if labels.get("unsupported") is not None:
        t = _replace(t, support=None, unsupported=tuple(labels["unsupported"]))
    verdict = human_adherent(labels)
    if verdict is not None:
        t = _replace(t, adherence=verdict)
        if labels.get("unsupported") is None:
            t = _replace(t, support=None, unsupported=None)
    return t

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


def truth(record: TraceRecord, labels: Mapping[str, Any]) -> TraceLabels:
    return truth_labels(record, labels)  # the one merge rule (records.truth_labels; the scheme's metrics use it too)


# -- statistics of per-sample sums, on the data (weights 1) and on bootstrap replicates (weights = draw counts) -------
def _confusion(records: Sequence[TraceRecord], a: Sequence[TraceLabels | None], h: Sequence[TraceLabels | None],
               kind: str) -> np.ndarray:
    """(n, 4) per-sample counts tp, fp, fn, tn of the annotator (prediction) against the human (truth)."""
    out = np.zeros((len(records), 4))
    for i, (rec, la, lh) in enumerate(zip(records, a, h, strict=True)):
        if kind == "adherent":
            x = None if la is None else ragbench_adherent(la)
            y = None if lh is None or lh.adherence is None else float(lh.adherence)
            pairs = [] if x is None or y is None or math.isnan(x) else [(x == 1.0, y == 1.0)]
        else:
            sa, sh = sentence_labels(rec, la, kind), sentence_labels(rec, lh, kind)
            pairs = [] if sa is None or sh is None else [
                (v, sh[k]) for k, v in sa.items() if v is not None and sh.get(k) is not None]
        for p, t in pairs:
            out[i, (0 if t else 1) if p else (2 if t else 3)] += 1
    return out


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


JOINT_SHARE = 4  # coded statistics share one count when their joint codes number at most n / JOINT_SHARE


def _joint_codes(coded: Sequence[tuple[np.ndarray, int]], n: int) -> tuple[np.ndarray, int, list[Any]] | None:
    """(each unit's joint code, how many, per statistic (order, starts, codes present, k)) of the coded statistics
    over the same n units, when they are at least two and their joint codes few (else None): a replicate's draws
    are then counted once per joint code, and each statistic's counts summed from those (`_split_counts`), instead
    of one gather and bincount of every draw per statistic (a sixth of `concord evaluate --scheme trace` at 100k)."""
    if len(coded) < 2:
        return None
    distinct, joint = np.unique(np.column_stack([c for c, _ in coded]), axis=0, return_inverse=True)
    if distinct.shape[0] * JOINT_SHARE > n:
        return None
    parts = []
    for j, (_, k) in enumerate(coded):
        col = distinct[:, j]
        order = np.argsort(col, kind="stable")
        present, starts = np.unique(col[order], return_index=True)
        parts.append((order, starts, present, k))
    return joint.ravel().astype(np.int64), distinct.shape[0], parts


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
                shared = None if joint is None else iter(_split_counts(_code_counts(joint[0], joint[1], idx), joint[2]))
                for (stat, c, coded, _), out in zip(stats, reps):
                    if coded is not None:
                        out.append(stat(_code_counts(*coded, idx) if shared is None else next(shared)))
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
def _subsets(records: Sequence[TraceRecord]) -> dict[str, np.ndarray]:
    names = np.array([str((r.meta or {}).get("subset") or "") for r in records])
    out = {ALL: np.ones(len(records), dtype=bool)}
    for name in sorted(set(names) - {""}):
        if len(set(names)) > 1:
            out[name] = names == name
    return out


def _fmt(est: float, low: float, high: float) -> str:
    if math.isnan(est):
        return "–"
    return f"{est:.3f}" + ("" if math.isnan(low) else f" [{low:.3f}, {high:.3f}]")


def evaluate(records: Sequence[TraceRecord], labels: Mapping[tuple[str, str], Mapping[str, Any]],
             options: Mapping[str, Any]) -> Report:
    reference = str(options.get("reference") or "annotator")
    if reference not in ("annotator", "human"):
        raise ValueError(f"reference must be 'annotator' or 'human', got {reference!r}")
    variants = tuple(options.get("variants") or VARIANTS)
    n_boot, seed = int(options.get("n_boot", 1000)), int(options.get("seed", 0))
    alpha = float(options.get("alpha", 0.05))
    intervals = _Intervals(n_boot, seed, alpha)
    ci = intervals.add

    records = list(records)
    own = [labels.get((r.id, ""), {}) for r in records]
    human = [human_labels(h) for h in own]
    checked = np.array([h is not None for h in human])
    data: dict[str, Any] = {"reference": reference, "samples": len(records), "human_samples": int(checked.sum()),
                            "n_boot": n_boot, "labels": {}, "scores": {}, "judges": {}}
    tables: list[Table] = []

    # annotator vs human: sentence labels (and the adherence verdict) over the samples humans labeled
    recs_h = [r for r, c in zip(records, checked) if c]
    ann_h = [r.labels for r in recs_h]
    hum_h = [h for h in human if h is not None]
    rows = []
    for kind in (*LABEL_TYPES, "adherent"):
        conf = _confusion(recs_h, ann_h, hum_h, kind)
        keep = conf.sum(axis=1) > 0
        conf = conf[keep]
        items = int(conf.sum())
        kappa = ci(lambda s: _kappa_f1(s)[0], len(conf), conf)
        f1 = ci(lambda s: _kappa_f1(s)[1], len(conf), conf)
        data["labels"][kind] = {"samples": len(conf), "items": items, "kappa": kappa, "f1": f1}
        rows.append((kind, len(conf), items, kappa, f1))
    tables.append(Table("Annotator vs human: sentence labels (Cohen's kappa, F1 with the human as truth)",
                        ("label", "samples", "items", "kappa [95% CI]", "F1 [95% CI]"), tuple(rows)))

    # annotator vs human: the four scores and their average, per variant
    truths = [truth(r, h) if c else None for r, h, c in zip(records, own, checked)]
    for variant in variants:
        sa = score_records(recs_h, variant)  # type: ignore[arg-type]
        sh = score_records(recs_h, variant, [t for t in truths if t is not None])  # type: ignore[arg-type]
        rows, out = [], {}
        for name in (*SCORES, "average"):
            a, h = sa[name].to_numpy(), sh[name].to_numpy()
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
    subsets = _subsets(records)
    ref_labels: list[TraceLabels | None] = [r.labels for r in records] if reference == "annotator" else truths
    data["means"], headline, refs = {}, [], {}
    for variant in variants:
        ref = refs[variant] = score_records(records, variant, ref_labels)  # type: ignore[arg-type]
        rows, out = [], {}
        for subset, mask in subsets.items():
            res = _means(ref[mask], ci)
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
    judges = judge_scores(records)
    if judges:
        for variant in variants:
            ref = refs[variant]  # the headline's scores of the same labels
            has_ref = ref[list(SCORES)].notna().any(axis=1).to_numpy()
            rows, out = [], {}
            for subset, mask in subsets.items():
                mask = mask & has_ref
                for judge, js in judges.items():
                    res = _judge(ref[mask], js[mask], ci)
                    if res["n"] == 0:
                        continue
                    out.setdefault(subset, {})[judge] = res
                    rows.append((subset, judge, res["n"], res["hallucination_auroc"], res["relevance_rmse"],
                                 res["utilization_rmse"]))
            data["judges"][variant] = out
            tables.append(Table(f"Judges vs {reference} labels ({variant}): hallucination AUROC, relevance and "
                                "utilization RMSE", ("subset", "judge", "n", "AUROC [95% CI]", "relevance RMSE [95% CI]",
                                                     "utilization RMSE [95% CI]"), tuple(rows)))
    intervals.run()
    data = _settle(data)
    tables = [replace(t, rows=tuple(tuple(_fmt(*c) if isinstance(c, list) else c for c in row) for row in t.rows))
              for t in tables]
    notes = [f"{int(checked.sum())} of {len(records)} samples carry human trace labels; intervals: {n_boot} "
             "bootstrap resamples of samples (percentile)."]
    if reference == "human":
        notes.append("Judges are scored on the human-labeled samples only (the annotator's labels as the humans "
                     "corrected them).")
    notes.append("AUROC: roc_auc_score(not adherent, 1 - judge adherence); a judge's missing scores are left out.")
    return Report("trace", tuple(tables), data, tuple(notes))


def _means(scores: pd.DataFrame, ci: Any) -> dict[str, Any]:
    """Each score's mean over the samples that have it (adherence: the share adherent), with its interval over
    samples; `n`: samples with any score."""
    res: dict[str, Any] = {"n": int(scores[list(SCORES)].notna().any(axis=1).sum()) if len(scores) else 0}
    for name in SCORES:
        x = scores[name].to_numpy(dtype=float)
        x = x[~np.isnan(x)]
        res[name] = ci(lambda w, x=x: _mean_w(x, w), x.size) if x.size else (math.nan,) * 3
    return res


def _mean_w(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The mean of `x` per row of weights (ones, or bootstrap draw counts): a function of per-sample sums. Every row
    draws x.size units (integer counts: their float sum is exactly that), so the divisor is x.size, not a second
    pass over the weights."""
    return (w @ x) / x.size


def _judge(ref: pd.DataFrame, js: pd.DataFrame, ci: Any) -> dict[str, Any]:
    res: dict[str, Any] = {"n": int(js.notna().any(axis=1).sum() if len(ref) else 0)}
    y, s = ref["adherence"].to_numpy(), js["adherence"].to_numpy()
    ok = ~(np.isnan(y) | np.isnan(s))
    y, s = (y[ok] == 0.0).astype(float), 1.0 - s[ok]
    two = y.size > 0 and 0 < y.sum() < y.size
    res["hallucination_auroc"] = [math.nan] * 3
    if two:
        codes, k = _auroc_codes(y, s)
        res["hallucination_auroc"] = ci(_auroc_counts, y.size, codes=codes, k=k)
    for m in ("relevance", "utilization"):
        t, p = ref[m].to_numpy(), js[m].to_numpy()
        good = ~(np.isnan(t) | np.isnan(p))
        e = (p[good] - t[good]) ** 2
        res[f"{m}_rmse"] = ci(_rmse_sums, e.size, np.column_stack([e, np.ones(e.size)])) if e.size else [math.nan] * 3
    return res
