"""The sample-level human reference the judges are measured against, chosen by `options["reference"]`:

- `any` (default): positive when any annotator who labeled the sample said positive (ordinal: the highest level
  anyone gave). FaithBench's own aggregation: a summary is hallucinated if anyone found a hallucination.
- `majority`: positive when more than half of the annotators said positive (a tie is negative; ordinal: the lower
  median level).
- `adjudicated`: the store's resolved label (adjudicated, else majority, else newest: DESIGN.md), i.e. `labels`.

`any` and `majority` need every annotator's own labels: `options["annotator_labels"]`, a mapping annotator ->
{(sample, unit): {kind: value}} (what the store gives per annotator). Without it they fall back to the resolved
labels, and `reference_levels` says so in its note.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from calibration.schemes.judge.records import JudgeRecord

LABEL = "label"  # the per-sample label kind (scheme.py)
MARKS = "marks"  # the per-sample spans kind
REFERENCES: tuple[str, ...] = ("any", "majority", "adjudicated")
Labels = Mapping[tuple[str, str], Mapping[str, Any]]


def reference_name(options: Mapping[str, Any]) -> str:
    ref = str(options.get("reference") or "any")
    if ref not in REFERENCES:
        raise ValueError(f"reference: expected one of {', '.join(REFERENCES)}, got {ref!r}")
    return ref


def annotator_levels(records: Sequence[JudgeRecord], annotator_labels: Mapping[str, Labels]) -> dict[str, np.ndarray]:
    """Annotator -> (n,) level of each record's label (NaN where that annotator gave none)."""
    out = {}
    for name in sorted(annotator_labels):
        get = annotator_labels[name].get
        where: list[int] = []
        level: list[int] = []
        for i, r in enumerate(records):
            got = get((r.id, ""))
            if got is None:
                continue
            v = got.get(LABEL)
            if r.levels is None:  # binary: `JudgeRecord.level` inline (a bool is 0 or 1, anything else none)
                if v is True or v is False:
                    where.append(i)
                    level.append(int(v))
                continue
            lv = r.level(v)
            if lv is not None:
                where.append(i)
                level.append(lv)
        row = np.full(len(records), np.nan)
        row[where] = level
        out[name] = row
    return out


def reference_levels(records: Sequence[JudgeRecord], labels: Labels, options: Mapping[str, Any],
                     per_annotator: Mapping[str, np.ndarray] | None = None) -> tuple[np.ndarray, str]:
    """(n,) reference level per record (NaN: no human label) and a note on how it was made. `per_annotator`:
    `annotator_levels` of `options["annotator_labels"]` when the caller made them (the report's ceiling reads them
    too: made once)."""
    ref = reference_name(options)
    per = options.get("annotator_labels")
    if ref != "adjudicated" and per:
        levels = np.vstack(list((per_annotator if per_annotator is not None
                                 else annotator_levels(records, per)).values()))
        seen = ~np.isnan(levels)
        out = np.full(len(records), np.nan)
        has = seen.any(axis=0)
        if ref == "any":
            out[has] = np.nanmax(levels[:, has], axis=0)
        else:
            for i in np.flatnonzero(has):
                vals = np.sort(levels[seen[:, i], i])
                out[i] = vals[(vals.size - 1) // 2]  # lower median: a tie of two binary labels is negative
        n_ann = int(seen.sum(axis=0)[has].mean()) if has.any() else 0
        return out, f"reference '{ref}' over {len(per)} annotators (about {n_ann} per labeled sample)"
    out = np.full(len(records), np.nan)
    for i, r in enumerate(records):
        lv = r.level((labels.get((r.id, "")) or {}).get(LABEL))
        if lv is not None:
            out[i] = lv
    note = "reference 'adjudicated': the resolved human label (adjudicated, else majority, else newest)"
    if ref != "adjudicated":
        note = (f"reference '{ref}' asked, but no per-annotator labels were given (options['annotator_labels']): "
                "the resolved human label is used instead")
    return out, note


def binary_reference(records: Sequence[JudgeRecord] | np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(n,) 1.0 positive / 0.0 negative / NaN from reference levels, each record's own `positive_from` (`records`:
    the records, or their `positive_starts` when the caller made them once)."""
    start = records if isinstance(records, np.ndarray) else positive_starts(records)
    return np.where(np.isnan(levels), np.nan, (levels >= start).astype(np.float64))


def positive_starts(records: Sequence[JudgeRecord]) -> np.ndarray:
    """(n,) each record's first positive level (`JudgeRecord.positive_index`)."""
    return np.array([1 if r.levels is None else r.positive_index for r in records], dtype=np.float64)
