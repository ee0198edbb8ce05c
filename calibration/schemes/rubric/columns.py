"""The rubric units `evaluate` reads, as columns (issue #28): a unit is its sample id, a trait code and a code of its
LLM buckets among the distinct ones. A project's buckets are few distinct values repeated over the samples (at 100k
samples, 205k units had 40 distinct LLM buckets and ~300 distinct human ones), so each distinct value is decoded,
normalised and aligned once, and the per-unit figures are taken by array indexing (evaluation.py).

The store reads them straight from SQL (app/schemes/rubric/store.py, the buckets left as JSON text); records read
in Python give the same columns (`rubric_columns`), so both take one path.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from calibration.schemes.rubric.records import RubricSample

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class RubricColumns:
    """The units with LLM buckets, in record order then the record's trait order (what `evaluate_report` iterated)."""

    traits: Sequence[Mapping[str, Any]]  # the trait definitions, indexed by `trait`
    values: Sequence[Any]  # the distinct LLM buckets, indexed by `value`: JSON text when `encoded`, else as given
    sample: Sequence[str]  # each unit's sample id
    trait: np.ndarray  # (units,) int64
    value: np.ndarray  # (units,) int64
    encoded: bool = False

    def __len__(self) -> int:
        return len(self.sample)


class ValueCodes:
    """A value -> its number among the distinct ones, found by its JSON text (orjson, C); a value orjson cannot write
    (not JSON data) gets a number of its own. Equal JSON means equal buckets, read alike."""

    def __init__(self) -> None:
        import orjson

        self._dumps = orjson.dumps
        self._number: dict[bytes, int] = {}
        self.values: list[Any] = []

    def __call__(self, value: Any) -> int:
        try:
            k = self._number.setdefault(self._dumps(value), len(self.values))
        except TypeError:  # orjson.JSONEncodeError
            k = len(self.values)
        if k == len(self.values):
            self.values.append(value)
        return k


def rubric_columns(records: Sequence[RubricSample]) -> RubricColumns:
    """The columns of records read in Python: a trait definition is coded by the dict itself (a project's records
    share one dict per trait), the buckets by their JSON text (`ValueCodes`)."""
    from array import array

    import numpy as np

    defs: dict[int, int] = {}  # id(definition) -> its code
    kept: list[Mapping[str, Any]] = []  # the definitions (kept alive: their ids stay theirs)
    code = ValueCodes()
    sample: list[str] = []
    trait, value = array("q"), array("q")
    for record in records:
        for t in record.traits:
            buckets = record.buckets.get(t["name"])
            if buckets is None:
                continue
            d = defs.get(id(t))
            if d is None:
                d = defs[id(t)] = len(kept)
                kept.append(t)
            sample.append(record.id)
            trait.append(d)
            value.append(code(buckets))
    return RubricColumns(tuple(kept), code.values, sample, np.asarray(trait, dtype=np.int64),
                         np.asarray(value, dtype=np.int64))
