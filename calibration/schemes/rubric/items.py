"""The rubric's `label_items_many` as array work (issue #28): the human ceiling draws the items of every distinct
label of a shared unit (575k rows of ~8 excerpts at 100k samples), and a dict lookup and store per excerpt was most
of its time. Here Python touches each row once (its four bucket lists gathered) and each distinct excerpt once (its
normalised key); flattening, coding and the per-row "later bucket wins, first place kept" are numpy/pandas.

Exactly `label_items` per row as the per-excerpt loop had it, codes included: an item is numbered by its normalised
text in order of first appearance over the excerpts the loop read, counting those of a row it then dropped (a row
is dropped at its first bucket that cannot be iterated or excerpt that is not a string; what came before was coded).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, repeat
from typing import Any

from calibration.schemes.rubric.traits import BUCKET_NAMES

_READ_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError)  # a row label_items cannot read
_EMPTY = ((),) * len(BUCKET_NAMES)


def bucket_items_many(records: Mapping[str, Any], rows: Sequence[tuple[str, str, str, Any]]
                      ) -> tuple[Any, Any, Any]:
    """(row, item code, bucket name) arrays of the `buckets` rows of `rows` whose sample has a record."""
    import numpy as np

    get = records.get
    taken: list[int] = []  # the rows read, each with len(BUCKET_NAMES) segments in `segs`
    segs: list[Any] = []
    for i, (sid, _unit, kind, value) in enumerate(rows):
        if kind != "buckets" or get(sid) is None:
            continue
        try:
            segs += map((value or {}).get, BUCKET_NAMES, _EMPTY)
        except _READ_ERRORS:
            continue  # no bucket read: nothing coded
        taken.append(i)
    n_b = len(BUCKET_NAMES)
    try:
        lens = np.fromiter(map(len, segs), dtype=np.int64, count=len(segs))
        flat = list(chain.from_iterable(segs))
        bad_seg = None
    except TypeError:  # a bucket that is not a list (None, a number): iterated as the loop iterated it
        segs = [_listed(s) for s in segs]
        bad_seg = np.fromiter((s is None for s in segs), dtype=bool, count=len(segs))
        lens = np.fromiter((0 if s is None else len(s) for s in segs), dtype=np.int64, count=len(segs))
        flat = list(chain.from_iterable(s for s in segs if s is not None))
    del segs
    n = len(flat)
    seg_of = np.repeat(np.arange(len(lens), dtype=np.int64), lens)  # each excerpt's segment
    row_at = seg_of // n_b  # each excerpt's index into `taken`
    cut = _cuts(flat, lens, bad_seg, len(taken), n_b)  # per taken row: where its reading stopped (n: never)
    coded = np.ones(n, dtype=bool) if cut is None else np.arange(n) < cut[row_at]
    excerpts = _objects(flat if cut is None else [e for e, c in zip(flat, coded.tolist()) if c])
    del flat
    code = np.full(n, -1, dtype=np.int64)
    code[coded] = _key_codes(excerpts)
    keep = coded if cut is None else coded & (cut == n)[row_at]
    row = np.asarray(taken, dtype=np.int64)[row_at[keep]]
    item = code[keep]
    bucket = (seg_of % n_b)[keep]
    row, item, bucket = _last_bucket_first_place(row, item, bucket)
    names = np.empty(n_b, dtype=object)
    names[:] = list(BUCKET_NAMES)
    return row, item, names[bucket]


def _listed(segment: Any) -> list[Any] | None:
    """A bucket's excerpts as iterating it gives them (a string's characters, a dict's keys), None if it cannot be."""
    try:
        return list(segment)
    except TypeError:
        return None


def _cuts(flat: list[Any], lens: Any, bad_seg: Any, n_rows: int, n_b: int) -> Any:
    """Per row read, the position in `flat` where the loop stopped reading it (`len(flat)` when it read it all: kept),
    at its first bucket it could not iterate or first excerpt not a string; None when every row was read whole."""
    import numpy as np

    n = len(flat)
    if set(map(type, flat)) <= {str}:  # every excerpt a string: the common case, checked in C
        bad_pos = np.zeros(0, dtype=np.int64)
    else:
        bad_pos = np.flatnonzero(~np.fromiter(map(isinstance, flat, repeat(str)), dtype=bool, count=n))
    if bad_seg is None and not len(bad_pos):
        return None
    starts = np.cumsum(lens) - lens
    bad_s = np.flatnonzero(bad_seg) if bad_seg is not None else np.zeros(0, dtype=np.int64)
    seg_of_bad = np.repeat(np.arange(len(lens), dtype=np.int64), lens)[bad_pos]
    cut = np.full(n_rows, n, dtype=np.int64)
    np.minimum.at(cut, np.concatenate([bad_s // n_b, seg_of_bad // n_b]), np.concatenate([starts[bad_s], bad_pos]))
    return cut


def _objects(values: list[Any]) -> Any:
    import numpy as np

    return np.fromiter(values, dtype=object, count=len(values))


def _key_codes(excerpts: Any) -> Any:
    """Each excerpt's normalised key (`normalize_excerpt`) numbered in order of first appearance: each distinct
    excerpt normalised once, in order of its first appearance (so its key's first appearance is in order too)."""
    import pandas as pd

    raw, distinct = pd.factorize(excerpts, sort=False)
    keys = _objects([e.strip().casefold() for e in distinct])  # buckets.normalize_excerpt
    key_code, _ = pd.factorize(keys, sort=False)
    return key_code[raw]


def _last_bucket_first_place(row: Any, item: Any, bucket: Any) -> tuple[Any, Any, Any]:
    """One entry per (row, item), in the place of its first excerpt, with the bucket of its last (as label_items'
    dict: a later bucket's excerpt replaces the value, not the place)."""
    import numpy as np
    import pandas as pd

    pair = pd.Index(row * (int(item.max(initial=-1)) + 1) + item)
    repeated = pair.duplicated(keep="first")
    if not repeated.any():
        return row, item, bucket
    first, last = ~repeated, ~pair.duplicated(keep="last")
    pair_id, _ = pd.factorize(pair, sort=False)  # numbered by first appearance: the order of `first`
    out = np.empty(int(first.sum()), dtype=np.int64)
    out[pair_id[last]] = bucket[last]
    return row[first], item[first], out
