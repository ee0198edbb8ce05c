"""Per-unit counts as columns: what a scheme's evaluate hook hands `save_scores` (the review list's machine figures).

At 100k samples that is 400k units per config; as a list of row tuples it was built, transposed back to columns
for the store's digest, and formatted row by row. `UnitScores` keeps the columns (numpy arrays) and still reads
as the sequence of (sample_id, unit, tp, fp, fn, f1) rows any other caller gives, with the same Python values.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np


@dataclass(frozen=True, eq=False)
class UnitScores(Sequence[tuple[str, str, int, int, int, float]]):
    """`sample_id`, `unit`: object arrays of str; `tp`, `fp`, `fn`: int64; `f1`: float64; one element per unit."""

    sample_id: np.ndarray
    unit: np.ndarray
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    f1: np.ndarray

    def __post_init__(self) -> None:
        for name, dtype in (("tp", np.int64), ("fp", np.int64), ("fn", np.int64), ("f1", np.float64)):
            object.__setattr__(self, name, np.asarray(getattr(self, name), dtype=dtype))
        if len({len(c) for c in self.columns()}) > 1:
            raise ValueError("UnitScores: columns of different lengths")

    def columns(self) -> tuple[np.ndarray, ...]:
        return self.sample_id, self.unit, self.tp, self.fp, self.fn, self.f1

    def __len__(self) -> int:
        return len(self.tp)

    def __iter__(self) -> Iterator[tuple[str, str, int, int, int, float]]:
        # plain Python str/int/float via tolist() (one C call per column instead of int()/float() per value)
        return zip(*(c.tolist() for c in self.columns()))

    @overload
    def __getitem__(self, i: int) -> tuple[str, str, int, int, int, float]: ...
    @overload
    def __getitem__(self, i: slice) -> list[tuple[str, str, int, int, int, float]]: ...
    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return list(zip(*(c[i].tolist() for c in self.columns())))
        return tuple(c[i].item() if isinstance(c[i], np.generic) else c[i] for c in self.columns())

    def digest(self, score: str) -> str | None:
        """A digest of the rows (and the headline figure's name) from the columns' bytes, or None when a sample id or
        unit is not a str (then the caller digests the rows one by one). Equal digests, equal rows: the numbers'
        dtypes are fixed, so each column's bytes give every value and its type; the texts are joined by a separator
        they cannot hold (a unit separator would only shift, never merge, two ids: their count is fixed too)."""
        import hashlib

        h = hashlib.blake2b(b"UnitScores/1\x00" + repr(score).encode(), digest_size=16)
        h.update(len(self).to_bytes(8, "little"))
        for texts in (self.sample_id, self.unit):
            # the texts joined by "\x00" and UTF-8 encoded, fed a chunk at a time (the whole joined text of 4M checker
            # names was 200 MB, twice): its length first, counted in a first pass (a chunk's ASCII text is its bytes)
            chunks = range(0, len(texts), _DIGEST_CHUNK)
            total = max(len(chunks) - 1, 0)  # the separators between chunks
            for lo in chunks:
                try:
                    joined = "\x00".join(texts[lo : lo + _DIGEST_CHUNK].tolist())
                except TypeError:
                    return None
                total += len(joined) if joined.isascii() else len(joined.encode("utf-8", "surrogatepass"))
            h.update(total.to_bytes(8, "little"))
            for lo in chunks:
                if lo:
                    h.update(b"\x00")
                h.update("\x00".join(texts[lo : lo + _DIGEST_CHUNK].tolist()).encode("utf-8", "surrogatepass"))
            # every id's length too: "\x00" may sit inside an id, so lengths keep ("a\x00", "b") apart from ("a", "\x00b")
            for lo in chunks:
                part = texts[lo : lo + _DIGEST_CHUNK].tolist()
                h.update(np.fromiter(map(len, part), dtype=np.int64, count=len(part)).tobytes())
        for numbers in (self.tp, self.fp, self.fn, self.f1):
            h.update(memoryview(np.ascontiguousarray(numbers)).cast("B"))  # the array's bytes, not a copy
        return h.hexdigest()


_DIGEST_CHUNK = 1 << 16  # texts per chunk of `UnitScores.digest`
