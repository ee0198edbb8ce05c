"""`whole_sample_fetches`: the one rule label_column_chunks and label_code_chunks cut their fetches by."""
from __future__ import annotations

import random
from typing import Any

import pytest

from app.store.decisions import whole_sample_fetches


class _Cursor:
    def __init__(self, rows: list[tuple]) -> None:
        self.rows, self.at = rows, 0

    def fetchmany(self, size: int) -> list[tuple]:
        got = self.rows[self.at:self.at + size]
        self.at += len(got)
        return got


def _rows(rng: random.Random) -> list[tuple]:
    rows = []
    for s in range(rng.randint(0, 30)):
        for u in range(rng.randint(1, 4)):
            for a in rng.sample(["ana", "ben", "cy"], rng.randint(1, 3)):
                rows.append((f"s{s:03d}", f"u{u}", "kind", a, "1"))
    return rows


@pytest.mark.parametrize("seed", range(40))
def test_fetches_hold_every_kept_row_once_and_whole_samples(seed: int) -> None:
    rng = random.Random(seed)
    rows = _rows(rng)
    excluded: Any = {(r[0], r[1], r[3]) for r in rows if rng.random() < 0.2} if seed % 2 else None
    size = rng.randint(1, 12)
    got = list(whole_sample_fetches(_Cursor(rows), size, excluded))
    kept = [r for r in rows if not excluded or (r[0], r[1], r[3]) not in excluded]
    assert [r for part in got for r in part] == kept
    assert all(part for part in got)
    for before, after in zip(got, got[1:]):
        assert before[-1][0] != after[0][0]  # no sample straddles two fetches
