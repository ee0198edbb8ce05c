"""TRACe scores of many records at once: per-record label counts (one pass), then each variant's formulas on arrays.

Two variants (README.md beside this file compares them on an example where they disagree):

trace_guide (the seed's pseudocode, literally):
    relevance    = min(1, |R| / 20)
    utilization  = 0 if |R| == 0 else min(1, |U| / |R|)
    completeness = |set(R) & set(U)| / |set(R)|;  empty set(R): 1.0 if set(U) is empty else 0.0
    adherence    = 1 if every sentence_support_information entry is fully supported (also when there is none) else 0
ragbench (the released dataset's columns):
    relevance    = |R| / n,  utilization = |U| / n,  n = number of document sentences (NaN when n == 0)
    completeness = |set(R) & set(U)| / |R| (R as given: duplicates count);  1.0 when R is empty
    adherence    = 1 if no response sentence is unsupported else 0
average = the mean of the four. |R|, |U| count the lists as given (duplicates and keys absent from the documents
included), as both definitions do. A score whose labels are missing is NaN.

Where the labels leave adherence open (see TraceLabels.sentence_support): trace_guide reads an entry's null
`fully_supported` from the unsupported list when there is one (RAGBench leaves most flags null), otherwise as
the pseudocode's falsy value; with no support entries at all it falls back to the unsupported list, then to
`adherence_score`. ragbench reads the unsupported list, then `fully_supported is False`, then `adherence_score`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

if TYPE_CHECKING:  # pandas costs ~0.4 s to import; the registry loads this module for every command
    import pandas as pd

from calibration.schemes.trace.records import TraceLabels, TraceRecord

Variant = Literal["trace_guide", "ragbench"]
VARIANTS: tuple[str, ...] = ("trace_guide", "ragbench")
SCORES: tuple[str, ...] = ("relevance", "utilization", "completeness", "adherence")
GUIDE_RELEVANCE_SENTENCES = 20.0  # the seed's fixed denominator ("Total: ~20 sentences")
COUNT_COLUMNS: tuple[str, ...] = ("n_document_sentences", "n_relevant", "n_utilized", "n_relevant_unique",
                                  "n_utilized_unique", "n_overlap", "guide_adherent", "ragbench_adherent")
_NAN = float("nan")


def _flag(v: bool | None) -> float:
    return _NAN if v is None else (1.0 if v else 0.0)


def guide_adherent(labels: TraceLabels) -> float:
    """1.0/0.0/NaN: the seed's "all fully_supported?" over the support entries (see the module docstring)."""
    if labels.support is not None:
        unsup = None if labels.unsupported is None else set(labels.unsupported)
        for s in labels.support:
            ok = s.fully_supported
            if ok is None:
                ok = unsup is not None and s.response_sentence_key not in unsup
            if not ok:
                return 0.0
        return 1.0
    if labels.unsupported is not None:
        return 0.0 if labels.unsupported else 1.0
    return _flag(labels.adherence)


def ragbench_adherent(labels: TraceLabels) -> float:
    """1.0/0.0/NaN: no unsupported response sentence (the list, else the support flags, else adherence_score)."""
    if labels.unsupported is not None:
        return 0.0 if labels.unsupported else 1.0
    if labels.support is not None:
        return 0.0 if any(s.fully_supported is False for s in labels.support) else 1.0
    return _flag(labels.adherence)


def label_counts(records: Sequence[TraceRecord], labels: Sequence[TraceLabels | None] | None = None) -> pd.DataFrame:
    """One row of counts per record (index = record id); `labels` replaces the records' own (e.g. a human's).

    Counts are float with NaN where the labels lack the field, so the formulas propagate "not labeled".
    """
    n = len(records)
    if labels is not None and len(labels) != n:
        raise ValueError(f"{len(labels)} label sets for {n} records")
    out = count_rows([sum([len(d) for d in r.documents_sentences]) for r in records],
                     [r.labels for r in records] if labels is None else labels)
    import pandas as pd

    return pd.DataFrame(out, columns=list(COUNT_COLUMNS), index=pd.Index([r.id for r in records], name="id"))


def count_rows(n_documents: Sequence[int], labels: Sequence[TraceLabels | None]) -> np.ndarray:
    """(n, len(COUNT_COLUMNS)) float64: `label_counts`' rows from each sample's document sentence count and labels
    (None: not labeled), without record objects (evaluate reads columns, calibration.schemes.trace.columns)."""
    nan = _NAN
    rows: list[tuple[float, ...]] = []
    append = rows.append
    for n_doc, lab in zip(n_documents, labels, strict=True):  # plain tuples, one numpy conversion at the end
        if lab is None:
            append((n_doc, nan, nan, nan, nan, nan, nan, nan))
            continue
        rel, utl = lab.relevant, lab.utilized
        rset = None if rel is None else set(rel)
        uset = None if utl is None else set(utl)
        append((n_doc,
                nan if rel is None else len(rel), nan if utl is None else len(utl),
                nan if rset is None else len(rset), nan if uset is None else len(uset),
                nan if rset is None or uset is None else len(rset & uset),
                guide_adherent(lab), ragbench_adherent(lab)))
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(COUNT_COLUMNS))


def _guide(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    nr, nu, nru, nuu, ov = c["n_relevant"], c["n_utilized"], c["n_relevant_unique"], c["n_utilized_unique"], c["n_overlap"]
    with np.errstate(invalid="ignore", divide="ignore"):
        relevance = np.minimum(1.0, nr / GUIDE_RELEVANCE_SENTENCES)
        utilization = np.where(nr == 0, 0.0, np.minimum(1.0, nu / nr))
        completeness = np.where(nru == 0, np.where(nuu == 0, 1.0, 0.0), ov / nru)
    utilization[np.isnan(nr) | np.isnan(nu)] = np.nan  # np.where would turn "R empty, U unlabeled" into 0.0
    completeness[np.isnan(nru) | np.isnan(nuu)] = np.nan
    return {"relevance": relevance, "utilization": utilization, "completeness": completeness,
            "adherence": c["guide_adherent"].copy()}


def _ragbench(c: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    n, nr, nu, ov = c["n_document_sentences"], c["n_relevant"], c["n_utilized"], c["n_overlap"]
    with np.errstate(invalid="ignore", divide="ignore"):
        relevance = np.where(n > 0, nr / n, np.nan)
        utilization = np.where(n > 0, nu / n, np.nan)
        completeness = np.where(nr == 0, 1.0, ov / nr)
    completeness[np.isnan(nr) | np.isnan(ov)] = np.nan
    return {"relevance": relevance, "utilization": utilization, "completeness": completeness,
            "adherence": c["ragbench_adherent"].copy()}


def scores_from_counts(counts: pd.DataFrame, variant: Variant = "ragbench") -> pd.DataFrame:
    """The four scores and their average per row of `label_counts`, under one variant."""
    s = score_arrays(counts[list(COUNT_COLUMNS)].to_numpy(dtype=np.float64), variant)
    import pandas as pd

    return pd.DataFrame(s, index=counts.index)


def score_arrays(counts: np.ndarray, variant: Variant = "ragbench") -> dict[str, np.ndarray]:
    """`scores_from_counts` of `count_rows`' array: score name -> (n,) float64, the average last."""
    cols = {name: np.ascontiguousarray(counts[:, i]) for i, name in enumerate(COUNT_COLUMNS)}
    if variant == "trace_guide":
        s = _guide(cols)
    elif variant == "ragbench":
        s = _ragbench(cols)
    else:
        raise ValueError(f"unknown trace variant {variant!r}; known: {', '.join(VARIANTS)}")
    # summed in SCORES order like the reference, so both give the same float
    s["average"] = (((s["relevance"] + s["utilization"]) + s["completeness"]) + s["adherence"]) / 4.0
    return s


def score_records(records: Sequence[TraceRecord], variant: Variant = "ragbench",
                  labels: Sequence[TraceLabels | None] | None = None) -> pd.DataFrame:
    """Scores of every record (index = id) from its own labels, or from `labels` (one per record)."""
    return scores_from_counts(label_counts(records, labels), variant)
