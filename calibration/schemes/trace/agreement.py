"""Agreement between an annotator's and a human's trace labels, judge evaluation, and the adherence decision grid.

Sentence level (per label type): every document sentence of every record is one item for `relevant` and
`utilized` (label: is its key listed?), every response sentence one item for `supported` (TraceLabels.
sentence_support); Cohen's kappa and F1 (the human as truth) over the pooled items. Keys that point nowhere are
no item (the parser reports them). Records where either side lacks the field are left out.
Score level: RMSE and Spearman between the scores each side's labels give, per score, NaN pairs left out.
Judges, as the RAGBench paper (and its calculate_metrics.py) reports them: RMSE of a judge's relevance and
utilization against the reference scores (judge NaNs left out), and AUROC of its adherence for detecting
hallucinations: roc_auc_score(not adherent, 1 - judge adherence).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pandas costs ~0.4 s to import; evaluate (which reads LABEL_TYPES here) makes no frame
    import pandas as pd

from calibration.agreement import cohen_kappa, spearman
from calibration.schemes.trace.metrics import SCORES, Variant, score_records
from calibration.schemes.trace.records import JUDGE_METRICS, TraceLabels, TraceRecord

LABEL_TYPES: tuple[str, ...] = ("relevant", "utilized", "supported")


def sentence_labels(record: TraceRecord, labels: TraceLabels | None, kind: str) -> dict[str, bool | None] | None:
    """Item (sentence key) -> label for one record and label type; None when the labels lack that field."""
    if labels is None:
        return None
    if kind in ("relevant", "utilized"):
        keys = labels.relevant if kind == "relevant" else labels.utilized
        if keys is None:
            return None
        chosen = set(keys)
        return {k: k in chosen for k in record.document_keys}
    if kind == "supported":
        if labels.support is None and labels.unsupported is None:
            return None
        return labels.sentence_support(record.response_keys)
    raise ValueError(f"unknown label type {kind!r}; known: {', '.join(LABEL_TYPES)}")


def _pairs(records: Sequence[TraceRecord], a: Sequence[TraceLabels | None], b: Sequence[TraceLabels | None],
           kind: str) -> tuple[list[bool], list[bool]]:
    xs: list[bool] = []
    ys: list[bool] = []
    for rec, la, lb in zip(records, a, b, strict=True):
        sa, sb = sentence_labels(rec, la, kind), sentence_labels(rec, lb, kind)
        if sa is None or sb is None:
            continue
        for k, va in sa.items():
            vb = sb.get(k)
            if va is not None and vb is not None:
                xs.append(va)
                ys.append(vb)
    return xs, ys


def label_agreement(records: Sequence[TraceRecord], annotator: Sequence[TraceLabels | None],
                    human: Sequence[TraceLabels | None]) -> pd.DataFrame:
    """Rows relevant/utilized/supported: items, kappa (NaN when one label only), F1 of the annotator vs the human
    (1.0 when neither marks any item positive), and the positive rate of each side."""
    # lazy: scikit-learn costs 1-2 s to import, and `concord evaluate` reads no F1 from here (nor a frame)
    import pandas as pd
    from sklearn.metrics import f1_score

    rows = []
    for kind in LABEL_TYPES:
        a, h = _pairs(records, annotator, human, kind)
        n = len(a)
        rows.append({
            "label": kind, "n": n,
            "kappa": cohen_kappa(h, a) if n else math.nan,
            "f1": float(f1_score(h, a, zero_division=1.0)) if n else math.nan,
            "annotator_rate": float(np.mean(a)) if n else math.nan,
            "human_rate": float(np.mean(h)) if n else math.nan,
        })
    return pd.DataFrame(rows).set_index("label")


def rmse(truth: Sequence[float] | np.ndarray, pred: Sequence[float] | np.ndarray) -> float:
    """Root mean squared error over the pairs where both are numbers (NaN if none)."""
    t, p = np.asarray(truth, dtype=np.float64), np.asarray(pred, dtype=np.float64)
    if t.shape != p.shape:
        raise ValueError(f"lengths differ: {t.shape} != {p.shape}")
    ok = ~(np.isnan(t) | np.isnan(p))
    return float(np.sqrt(np.mean((p[ok] - t[ok]) ** 2))) if ok.any() else math.nan


def score_agreement(records: Sequence[TraceRecord], annotator: Sequence[TraceLabels | None],
                    human: Sequence[TraceLabels | None], variant: Variant = "ragbench") -> pd.DataFrame:
    """Rows relevance/utilization/completeness/adherence/average: n, RMSE and Spearman of the annotator-derived
    scores against the human-derived ones under `variant`."""
    import pandas as pd

    sa = score_records(records, variant, annotator)
    sh = score_records(records, variant, human)
    rows = []
    for name in (*SCORES, "average"):
        a, h = sa[name].to_numpy(), sh[name].to_numpy()
        ok = ~(np.isnan(a) | np.isnan(h))
        n = int(ok.sum())
        rows.append({"score": name, "n": n, "rmse": rmse(h[ok], a[ok]) if n else math.nan,
                     "spearman": spearman(h[ok].tolist(), a[ok].tolist()) if n else math.nan})
    return pd.DataFrame(rows).set_index("score")


def hallucination_auroc(adherent: Sequence[float] | np.ndarray, judge_adherence: Sequence[float] | np.ndarray) -> float:
    """roc_auc_score(not adherent, 1 - judge adherence), NaN pairs left out; NaN when only one class remains."""
    y, s = np.asarray(adherent, dtype=np.float64), np.asarray(judge_adherence, dtype=np.float64)
    if y.shape != s.shape:
        raise ValueError(f"lengths differ: {y.shape} != {s.shape}")
    ok = ~(np.isnan(y) | np.isnan(s))
    y, s = y[ok], s[ok]
    if y.size == 0 or np.unique(y).size < 2:
        return math.nan
    from sklearn.metrics import roc_auc_score  # lazy, as f1_score

    return float(roc_auc_score(y == 0.0, 1.0 - s))


def judge_scores(records: Sequence[TraceRecord]) -> dict[str, pd.DataFrame]:
    """Judge -> frame (index = record id) of its adherence/relevance/utilization, NaN where it gave none."""
    import pandas as pd

    names = sorted({j for r in records for j in r.judges})
    index = pd.Index([r.id for r in records], name="id")
    return {j: pd.DataFrame({m: [r.judges.get(j, {}).get(m, math.nan) for r in records] for m in JUDGE_METRICS},
                            index=index, dtype=np.float64) for j in names}


def judge_report(records: Sequence[TraceRecord], reference: pd.DataFrame | None = None,
                 variant: Variant = "ragbench") -> pd.DataFrame:
    """Per judge: n scored, hallucination AUROC, relevance RMSE, utilization RMSE (NaN when it gives no such score).

    `reference` holds the true relevance/utilization/adherence per record (default: the records' labels scored
    under `variant`, which for RAGBench rows equals the dataset's own columns)."""
    import pandas as pd

    ref = score_records(records, variant) if reference is None else reference
    rows = []
    for judge, js in judge_scores(records).items():
        has = {m: bool(js[m].notna().any()) for m in JUDGE_METRICS}
        rows.append({
            "judge": judge, "n": int(js.notna().any(axis=1).sum()),
            "hallucination_auroc": hallucination_auroc(ref["adherence"], js["adherence"]) if has["adherence"] else math.nan,
            "relevance_rmse": rmse(ref["relevance"], js["relevance"]) if has["relevance"] else math.nan,
            "utilization_rmse": rmse(ref["utilization"], js["utilization"]) if has["utilization"] else math.nan,
        })
    return pd.DataFrame(rows, columns=["judge", "n", "hallucination_auroc", "relevance_rmse", "utilization_rmse"]).set_index("judge")


def adherence_decisions(scores: Sequence[float] | np.ndarray, thresholds: Sequence[float] | np.ndarray) -> np.ndarray:
    """Boolean (thresholds x samples) matrix `score >= t`: the judge calls the response adherent at threshold t.
    A NaN score is never adherent (the comparison is False), so a judge that gave no score counts as flagging."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    t = np.asarray(thresholds, dtype=np.float64).ravel()
    return s[np.newaxis, :] >= t[:, np.newaxis]
