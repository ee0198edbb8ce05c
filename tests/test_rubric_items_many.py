"""Issue #28: the rubric's `label_items_many` as array work (calibration/schemes/rubric/items.py) gives exactly the
arrays of the per-excerpt loop it replaced (copied below verbatim), codes included, on generated rows: repeated
excerpts in other spellings and across buckets, and every kind of row the loop could not read."""
from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pytest

from calibration.schemes.rubric.buckets import normalize_excerpt
from calibration.schemes.rubric.scheme import SCHEME
from calibration.schemes.rubric.traits import BUCKET_NAMES


class _ItemCodes(dict):
    """(verbatim from scheme.py before the array version)"""

    def __init__(self) -> None:
        super().__init__()
        self.by_key: dict[str, int] = {}

    def __missing__(self, excerpt: str) -> int:
        code = self[excerpt] = self.by_key.setdefault(normalize_excerpt(excerpt), len(self.by_key))
        return code


def _old_label_items_many(records: Any, rows: Any) -> tuple[Any, Any, Any]:
    """RubricScheme.label_items_many before the array version (verbatim but for `self`)."""
    code = _ItemCodes().__getitem__  # excerpt as given -> its normalised key's number
    bucket_of = {name: b for b, name in enumerate(BUCKET_NAMES)}.__getitem__
    row: list[int] = []
    item: list[int] = []
    bucket: list[int] = []
    for i, (sid, _unit, kind, value) in enumerate(rows):
        if kind != "buckets" or records.get(sid) is None:
            continue
        out: dict[int, str] = {}  # as label_items: a later bucket's excerpt replaces the value, not the place
        try:
            buckets = value or {}
            for name in BUCKET_NAMES:
                for e in buckets.get(name, ()):
                    out[code(e)] = name
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            continue
        if out:
            row += [i] * len(out)
            item += out
            bucket += map(bucket_of, out.values())
    names = np.empty(len(BUCKET_NAMES), dtype=object)
    names[:] = list(BUCKET_NAMES)
    return (np.asarray(row, dtype=np.int64), np.asarray(item, dtype=np.int64),
            names[np.asarray(bucket, dtype=np.int64)])


WORDS = ["alpha", " Alpha", "ALPHA ", "beta", "Beta", "straße", "STRASSE", "gamma delta", "", "  ", "é", "É",
         "the answer is 42", "The answer is 42."]
ODD_EXCERPTS: list[Any] = [3, None, 1.5, float("nan"), True, ["x"], {"y": 1}, 2**70]
ODD_VALUES: list[Any] = [None, 0, "", [], "text", ["tp"], True, 7, {"tp": None}, {"fn": 4},
                         {"tp": "gamma"}, {"fp": {"delta": 1, "alpha": 2}}, {"tn": ("beta",)}, {"other": ["alpha"]},
                         {"tp": {"alpha", "beta"}}, {1: ["x"], "fn": ["beta"]}, {"tp": float("nan")},
                         {"tp": ["\ud800 Alpha", "beta"]}]  # not JSON too (a set, an int key, a lone surrogate)


def _value(rng: np.random.Generator, odd: float) -> Any:
    if rng.random() < odd:
        return ODD_VALUES[int(rng.integers(len(ODD_VALUES)))]
    out: dict[str, Any] = {}
    for b in BUCKET_NAMES:
        r = rng.random()
        if r < 0.1:
            continue  # a missing bucket
        if r < 0.1 + odd / 4:
            out[b] = None if rng.random() < 0.5 else 5  # a bucket that cannot be iterated
            continue
        words: list[Any] = [WORDS[int(k)] for k in rng.integers(len(WORDS), size=int(rng.integers(0, 5)))]
        if words and rng.random() < odd / 2:
            words.insert(int(rng.integers(len(words) + 1)), ODD_EXCERPTS[int(rng.integers(len(ODD_EXCERPTS)))])
        out[b] = words
    return out


def _rows(seed: int, n: int, odd: float) -> tuple[dict[str, Any], list[tuple[str, str, str, Any]]]:
    """Values drawn fresh or (most) from a pool, as the same object or an equal copy (the ceiling decodes each)."""
    rng = np.random.default_rng(seed)
    records = {f"s{i}": object() for i in range(30)}
    records["s0"] = None  # a sample without its record reads as none
    pool = [_value(rng, odd) for _ in range(150)]
    rows = []
    for _ in range(n):
        r = rng.random()
        value = _value(rng, odd) if r < 0.3 else pool[int(rng.integers(len(pool)))]
        rows.append((f"s{int(rng.integers(33))}", "t", "buckets" if rng.random() < 0.9 else "status",
                     copy.deepcopy(value) if r > 0.6 else value))
    return records, rows


def _same(got: tuple[Any, Any, Any], want: tuple[Any, Any, Any]) -> None:
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert g.tolist() == w.tolist()


@pytest.mark.parametrize("seed,odd", [(0, 0.0), (1, 0.0), (2, 0.05), (3, 0.2), (4, 0.6)])
def test_label_items_many_equals_the_per_excerpt_loop(seed: int, odd: float) -> None:
    records, rows = _rows(seed, 3000, odd)
    want = _old_label_items_many(records, rows)
    _same(SCHEME.label_items_many(records, rows), want)
    assert len(want[0]) > 1000  # the rows gave items
    if odd:  # and some rows read gave none (dropped, or empty)
        read = {i for i, r in enumerate(rows) if r[2] == "buckets" and records.get(r[0]) is not None}
        assert len(read - set(want[0].tolist())) > 10


def test_label_items_many_of_rows_without_items() -> None:
    records = {"a": object()}
    for rows in ([], [("a", "t", "buckets", None)], [("a", "t", "buckets", {"tp": None})],
                 [("b", "t", "buckets", {"tp": ["x"]})], [("a", "t", "status", "done")]):
        got = SCHEME.label_items_many(records, rows)
        _same(got, _old_label_items_many(records, rows))
        assert len(got[0]) == 0


def test_a_row_dropped_part_way_keeps_the_codes_it_took() -> None:
    """The loop numbered 'b' before it met the 3 and dropped the row: 'a' then gets code 1, not 0."""
    records = {"s": object()}
    rows = [("s", "t", "buckets", {"tp": ["b", 3, "c"]}), ("s", "t", "buckets", {"fn": ["a", "B "], "fp": ["c"]})]
    row, item, bucket = SCHEME.label_items_many(records, rows)
    assert row.tolist() == [1, 1, 1] and item.tolist() == [1, 0, 2] and bucket.tolist() == ["fn", "fn", "fp"]
    _same((row, item, bucket), _old_label_items_many(records, rows))
