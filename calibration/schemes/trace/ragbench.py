"""RAGBench release rows (parquet or JSONL, as published) -> trace records, without a conversion step.

A row holds the record fields under the same names, plus seven judge columns that become `judges`, plus the
dataset's own scores and bookkeeping columns, which go to `meta` unchanged. Parquet read through pandas gives
numpy arrays (object arrays of arrays for the keyed sentences) and NaN for missing judge scores; pyarrow's
`to_pylist` and JSON give lists and None. All are accepted. File reading stays in app/io.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from calibration.schemes.base import FieldProblem, Parsed
from calibration.schemes.trace.parse import parse_record

# judge -> Concord score name -> RAGBench column (the paper's Table: trulens, ragas, gpt-3.5 judge)
JUDGE_COLUMNS: dict[str, dict[str, str]] = {
    "trulens": {"adherence": "trulens_groundedness", "relevance": "trulens_context_relevance"},
    "ragas": {"adherence": "ragas_faithfulness", "relevance": "ragas_context_relevance"},
    "gpt3": {"adherence": "gpt3_adherence", "relevance": "gpt3_context_relevance"},
    "gpt35": {"utilization": "gpt35_utilization"},
}
_COLUMN_PATH = {col: f'judges["{judge}"].{metric}' for judge, cols in JUDGE_COLUMNS.items() for metric, col in cols.items()}
_PATH_COLUMN = {v: k for k, v in _COLUMN_PATH.items()}
RECORD_COLUMNS: tuple[str, ...] = (
    "id", "question", "documents", "response", "documents_sentences", "response_sentences",
    "all_relevant_sentence_keys", "all_utilized_sentence_keys", "sentence_support_information",
    "unsupported_response_sentence_keys", "adherence_score",
)
# The dataset's own scores, kept in meta so they can be compared with the `ragbench` variant's.
SCORE_COLUMNS: dict[str, str] = {"relevance": "relevance_score", "utilization": "utilization_score",
                                 "completeness": "completeness_score", "adherence": "adherence_score"}


def plain(value: Any) -> Any:
    """numpy arrays (nested object arrays too), numpy scalars and NaN -> lists, Python scalars and None.

    Hand-written because pandas/pyarrow have no converter for object arrays of arrays; the type checks are
    ordered for speed (strings and lists of strings are most of a row) and a list of plain strings is returned
    as is, not copied (parse_record never mutates its input)."""
    t = type(value)
    if t is str or value is None or t is bool or t is int:
        return value
    if t is float:
        return None if value != value else value
    if t is list or t is np.ndarray:
        if t is np.ndarray and value.dtype != object:
            return plain(value.tolist())
        for v in value:
            if type(v) is not str:
                return [plain(v) for v in value]
        return value if t is list else value.tolist()
    if isinstance(value, tuple):
        return [plain(v) for v in value]
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return plain(value.item())
    return value


def is_ragbench_row(row: Mapping[str, Any]) -> bool:
    """True for a row in the release format (it carries the annotator's keys and at least one judge column)."""
    if not ("documents_sentences" in row and "all_relevant_sentence_keys" in row):
        return False
    if type(row) is dict:  # one pass of C (agreement asks it of every stored payload)
        return not row.keys().isdisjoint(_COLUMN_PATH)
    return any(c in row for c in _COLUMN_PATH)


def ragbench_to_raw(row: Mapping[str, Any]) -> dict[str, Any]:
    """The trace record (a JSON-shaped dict) a RAGBench row stands for; columns not listed above go to meta."""
    raw: dict[str, Any] = {"scheme": "trace"}
    for col in RECORD_COLUMNS:
        if col in row:
            raw[col] = plain(row[col])
    judges: dict[str, dict[str, Any]] = {}
    for judge, cols in JUDGE_COLUMNS.items():
        scores = {metric: plain(row[col]) for metric, col in cols.items() if col in row}
        if scores:
            judges[judge] = scores
    if judges:
        raw["judges"] = judges
    meta = {k: plain(v) for k, v in row.items() if k not in RECORD_COLUMNS and k not in _COLUMN_PATH}
    if meta:
        raw["meta"] = meta
    return raw


def parse_ragbench_row(row: Mapping[str, Any]) -> Parsed:
    """A RAGBench row -> Parsed; problems in judge scores name the RAGBench column (`gpt3_adherence`)."""
    parsed = parse_record(ragbench_to_raw(row))
    if not any(p.field in _PATH_COLUMN for p in parsed.problems):
        return parsed
    problems = tuple(FieldProblem(_PATH_COLUMN.get(p.field, p.field), p.message, p.severity, p.code) for p in parsed.problems)
    return Parsed(parsed.record, problems)


def given_scores(meta: Mapping[str, Any] | None, adherence: bool | None = None) -> dict[str, float]:
    """The dataset's own relevance/utilization/completeness (from meta) and adherence (the label) as floats, NaN if absent."""
    out = {}
    for name, col in SCORE_COLUMNS.items():
        v = adherence if name == "adherence" else (meta or {}).get(col)
        out[name] = math.nan if v is None else float(v)
    return out
