"""Violations as columns: what the pair table is built from, without a Python object per violation.

`concord evaluate` at 100k samples reads 600k violations; as `Violation` objects (and the lists a row-by-row
build appends to) they took seconds and hundreds of MB. The store reads these columns straight from SQL
(app/schemes/violations/store.py `violation_columns`); `from_samples` makes the same columns from records, so both
paths share one vectorised pair-table build (pairs.py) and give identical tables.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.violations.records import (
    GROUND_TRUTH,
    Violation,
    ViolationSample,
)

ROW_FIELDS = ("sample", "checker", "start", "end", "rule", "category", "explanation", "correction")
CODED_FIELDS = ("unit_checker", "checker", "rule", "category", "explanation", "correction")


def object_array(values: Sequence[object]) -> np.ndarray:
    """A 1-d object array of `values` (np.array would turn a list of str into a fixed-width unicode array)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def str_array(values: Sequence[Any]) -> np.ndarray:
    """`values` as an object array of str (each `str()`ed, as unit keys always were; as they are when all are str)."""
    out = object_array(values)
    return out if pd.api.types.infer_dtype(out, skipna=False) == "string" else object_array([str(v) for v in out])


@dataclass(frozen=True)
class TextCodes:
    """The text columns of `ViolationColumns` as integer codes into `values` (-1: None), one code per distinct
    string across every column: what the store has at hand as it reads them, so the pair table is built from integers
    (factorizing 4 million strings took a fifth of `evaluate_report` at 100k samples). `columns[f]`: the codes of
    `ViolationColumns.f` for f in CODED_FIELDS."""

    values: np.ndarray
    columns: Mapping[str, np.ndarray]

    @classmethod
    def encode(cls, columns: Mapping[str, Sequence[object]]) -> "TextCodes":
        """Codes of plain object columns (tests; a store reading rows assigns them as it goes)."""
        index: dict[object, int] = {}
        coded = {f: np.fromiter((-1 if v is None else index.setdefault(v, len(index)) for v in values), np.int64,
                                len(values)) for f, values in columns.items()}
        return cls(object_array(list(index)), coded)

    def extended(self, extra: Mapping[str, Sequence[object]], keep: Mapping[str, np.ndarray] | None = None) -> "TextCodes":
        """These codes (rows at `keep[f]` when given) followed by those of `extra`'s values, new strings appended."""
        index = {v: i for i, v in enumerate(self.values.tolist())}
        new = {f: np.fromiter((-1 if v is None else index.setdefault(v, len(index)) for v in values), np.int64,
                              len(values)) for f, values in extra.items()}
        mine = {f: c if keep is None or f not in keep else c[keep[f]] for f, c in self.columns.items()}
        return TextCodes(object_array(list(index)),
                         {f: np.concatenate([c, new[f]]) if f in new else c for f, c in mine.items()})


@dataclass(frozen=True)
class ViolationColumns:
    """Every violation of a set of samples, one array element per violation.

    `sample_ids`: the samples, in order (the pair table's unit order follows it).
    `unit_sample` / `unit_checker`: each (sample index, checker) that has a prediction entry, in any order -- also a
    checker that ran on the sample and found nothing (it owes the ground truth as false negatives).
    Per violation: `sample` (index into `sample_ids`), `checker` (GROUND_TRUTH for the ground truth), `start` /
    `end` (float, NaN when ungrounded), `rule`, `category`, `explanation`, `correction` (str or None). The rows of
    one (sample, checker) are in their list order; (sample, checker) blocks may come in any order.
    `codes`: the text columns as `TextCodes` when the reader has them (else None: the pair table factorizes the
    strings).
    """

    sample_ids: np.ndarray
    unit_sample: np.ndarray
    unit_checker: np.ndarray
    sample: np.ndarray
    checker: np.ndarray
    start: np.ndarray
    end: np.ndarray
    rule: np.ndarray
    category: np.ndarray
    explanation: np.ndarray
    correction: np.ndarray
    codes: TextCodes | None = field(default=None, compare=False)

    @classmethod
    def from_samples(cls, samples: Sequence[ViolationSample]) -> "ViolationColumns":
        """The columns of record objects (calibration, the GUI and tests hold samples as `ViolationSample`s)."""
        unit_sample: list[int] = []
        unit_checker: list[str] = []
        sample: list[int] = []
        checker: list[str] = []
        fields: list[tuple[object, ...]] = []
        for si, s in enumerate(samples):
            preds = [(c, vs) for c, vs in s.predictions.items() if c != GROUND_TRUTH]
            unit_sample.extend([si] * len(preds))
            unit_checker.extend(c for c, _ in preds)
            for c, vs in ((GROUND_TRUTH, s.ground_truth), *preds):
                sample.extend([si] * len(vs))
                checker.extend([c] * len(vs))
                fields.extend((v.start, v.end, v.rule, v.category, v.explanation, v.correction) for v in vs)
        start, end, *texts = zip(*fields) if fields else ((),) * 6
        return cls(object_array([s.id for s in samples]), np.array(unit_sample, dtype=np.int64),
                   object_array(unit_checker), np.array(sample, dtype=np.int64), object_array(checker),
                   np.array(start, dtype=np.float64), np.array(end, dtype=np.float64),  # None -> NaN
                   *(object_array(t) for t in texts))

    def __len__(self) -> int:
        return len(self.sample)

    def window(self, lo: int, hi: int) -> "ViolationColumns":
        """The columns of samples lo..hi-1 (indices into `sample_ids`), renumbered from 0 (tests; the store reads its
        windows by SQL). The text codes are dropped (the pair table then factorizes the strings: the same table)."""
        rows = (self.sample >= lo) & (self.sample < hi)
        units = (self.unit_sample >= lo) & (self.unit_sample < hi)
        return ViolationColumns(self.sample_ids[lo:hi], self.unit_sample[units] - lo, self.unit_checker[units],
                                self.sample[rows] - lo, *(getattr(self, f)[rows] for f in ROW_FIELDS[1:]))

    def with_ground_truth(self, replacements: Mapping[str, Sequence[Violation]]) -> "ViolationColumns":
        """These columns with the ground truth of each sample named in `replacements` replaced by the given list
        (curated ground truth, issue #15; as curation.with_ground_truth does to a record)."""
        index = pd.Index(self.sample_ids)
        named = [sid for sid in replacements if sid in index]
        extra = ViolationColumns.from_samples([ViolationSample(sid, "", tuple(replacements[sid])) for sid in named])
        keep = ~(np.isin(self.sample, index.get_indexer(named)) & (self.checker == GROUND_TRUTH))
        rows = {f: np.concatenate([getattr(self, f)[keep], getattr(extra, f)]) for f in ROW_FIELDS[1:]}
        rows["sample"] = np.concatenate([self.sample[keep], index.get_indexer(extra.sample_ids)[extra.sample]])
        codes = None
        if self.codes is not None:
            added = [f for f in CODED_FIELDS if f != "unit_checker"]
            codes = self.codes.extended({f: getattr(extra, f).tolist() for f in added}, {f: keep for f in added})
        return replace(self, **rows, codes=codes)


@dataclass(frozen=True)
class ColumnWindows:
    """The violations of a set of samples as `ViolationColumns` of consecutive windows of samples, each made when the
    caller gets to it (the store reads a window per query): `concord evaluate` holds one window at a time, so its
    memory does not grow with the project (issue #28). Every sample is in exactly one window, windows in sample
    order; `windows(None)` gives one window of every sample."""

    read: Callable[[int | None], Iterator[ViolationColumns]]

    def windows(self, size: int | None) -> Iterator[ViolationColumns]:
        """Windows of `size` samples (the last may be smaller); None: one window."""
        if size is not None and size < 1:
            raise ValueError(f"window size {size}: need 1 or more samples")
        return self.read(size)

    @classmethod
    def of(cls, columns: ViolationColumns) -> "ColumnWindows":
        """Columns already in memory as windows (sliced by sample: `ViolationColumns.window`)."""
        def read(size: int | None) -> Iterator[ViolationColumns]:
            n = len(columns.sample_ids)
            if size is None or size >= n:
                yield columns
                return
            for lo in range(0, n, size):
                yield columns.window(lo, min(lo + size, n))

        return cls(read)
