"""The rubric's `label_items_many` (issue #28): the human ceiling draws the items of every distinct label of a shared
unit (at 100k samples ~575k rows of ~6 excerpts), but those labels are few distinct values repeated over the samples
(an annotator's buckets for a trait are much the same from sample to sample). So each distinct value is read once,
found by its JSON text (orjson, C), and the rows take their value's items by array indexing.

Exactly `label_items` per row as the per-excerpt loop had it, codes included: an item is numbered by its normalised
text in order of first appearance over the excerpts the loop read, counting those of a row it then dropped (a row
is dropped at its first bucket that cannot be iterated or excerpt that is not a string; what came before was coded).
A repeated value adds no new code (its excerpts were numbered where it first appeared), and equal JSON means equal
buckets, iterated alike; a value orjson cannot write (not JSON data) is read on its own.
"""
from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

from calibration.schemes.rubric.buckets import normalize_excerpt
from calibration.schemes.rubric.traits import BUCKET_NAMES

_READ_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)  # a row label_items cannot read


class _ItemCodes(dict):
    """Excerpt as given -> the number of its normalised key (`normalize_excerpt`), numbered in order of first
    appearance; each distinct excerpt normalised once (the annotators of a unit repeat them)."""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: dict[str, int] = {}

    def __missing__(self, excerpt: str) -> int:
        code = self[excerpt] = self.by_key.setdefault(normalize_excerpt(excerpt), len(self.by_key))
        return code


def bucket_items_many(records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                      ) -> tuple[Any, Any, Any]:
    """(row, item code, bucket name) arrays of the `buckets` rows of `rows` whose sample has a record."""
    import numpy as np
    import orjson

    get, dumps = records.get, orjson.dumps
    number: dict[bytes, int] = {}  # a value's JSON -> its number among the distinct values
    values: list[Any] = []  # the distinct values, in order of first appearance
    taken = array("q")  # the rows read (8 bytes each, no int objects: 100k samples give ~400k rows)
    which = array("q")  # each row read's value number
    for i, (sid, _unit, kind, value) in enumerate(rows):
        if kind != "buckets" or get(sid) is None:
            continue
        try:
            k = number.setdefault(dumps(value), len(values))
        except TypeError:  # orjson.JSONEncodeError: not JSON data, read on its own
            k = len(values)
        if k == len(values):
            values.append(value)
        taken.append(i)
        which.append(k)
    items, buckets, counts = _value_items(values)
    w = np.asarray(which, dtype=np.int64)
    n = counts[w]
    starts = (np.cumsum(counts) - counts)[w]
    at = np.arange(int(n.sum()), dtype=np.int64) + np.repeat(starts - (np.cumsum(n) - n), n)
    names = np.empty(len(BUCKET_NAMES), dtype=object)
    names[:] = list(BUCKET_NAMES)
    return np.repeat(np.asarray(taken, dtype=np.int64), n), items[at], names[buckets[at]]


def _value_items(values: list[Any]) -> tuple[Any, Any, Any]:
    """(item codes, bucket numbers, how many per value) of each value in turn, as label_items reads it: a later
    bucket's excerpt replaces the value, not the place; a value it cannot read has none."""
    import numpy as np

    code = _ItemCodes().__getitem__
    bucket_of = {name: b for b, name in enumerate(BUCKET_NAMES)}.__getitem__
    item: list[int] = []
    bucket: list[int] = []
    counts: list[int] = []
    for value in values:
        out: dict[int, str] = {}
        try:
            b = value or {}
            for name in BUCKET_NAMES:
                for e in b.get(name, ()):
                    out[code(e)] = name
        except _READ_ERRORS:
            out = {}
        item += out
        bucket += map(bucket_of, out.values())
        counts.append(len(out))
    return (np.asarray(item, dtype=np.int64), np.asarray(bucket, dtype=np.int64),
            np.asarray(counts, dtype=np.int64))
