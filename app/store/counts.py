"""Row counts kept on write, so `concord status` answers in milliseconds on a million samples (issue #18).

Counting rows with GROUP BY scans whole tables (seconds at 1M samples and 6M violations). Instead, every writer of
samples and units (and a store adapter, of its own tables) adds what it inserted or deleted to `row_counts`
(tbl, scheme, key) -> n in the same transaction. Triggers would do the same without the writers' help, but they
double the cost of a bulk insert (one extra upsert per row), so the writers pass deltas they already know.
`rebuild_counts` recomputes everything from the tables (migration, recovery, `concord check`).
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

Key = tuple[str, str, str]  # (table, scheme, key): ('samples', scheme, ''), ('units', scheme, unit), adapters' own


def add_counts(conn: sqlite3.Connection, deltas: Mapping[Key, int]) -> None:
    """Add `deltas` to the stored counts (inside the caller's transaction); rows that reach 0 are removed."""
    rows = [(t, s, k, n) for (t, s, k), n in deltas.items() if n]
    if not rows:
        return
    conn.executemany("INSERT INTO row_counts VALUES (?, ?, ?, ?) ON CONFLICT (tbl, scheme, key) DO UPDATE SET n = n + "
                     "excluded.n", rows)
    conn.execute("DELETE FROM row_counts WHERE n <= 0")


def unit_counts(conn: sqlite3.Connection, sample_ids: Sequence[str], sign: int = -1) -> Counter[Key]:
    """Units of the given samples per (scheme, unit), times `sign`: what deleting them takes off the counts."""
    out: Counter[Key] = Counter()
    for i in range(0, len(sample_ids), 900):
        chunk = list(sample_ids[i : i + 900])
        for scheme, unit, n in conn.execute(
            f"SELECT scheme, unit, COUNT(*) FROM units WHERE sample_id IN ({','.join('?' * len(chunk))}) "
            "GROUP BY scheme, unit", chunk):
            out[("units", scheme, unit)] += sign * n
    return out


def count_rows(flat: Sequence[Any], width: int, scheme_at: int, unit_at: int) -> Counter[Key]:
    """Units rows about to be inserted, given flat (`width` values per row), counted per (scheme, unit)."""
    return Counter({("units", scheme, unit): n
                    for (scheme, unit), n in Counter(zip(flat[scheme_at::width], flat[unit_at::width])).items()})


def rebuild_counts(conn: sqlite3.Connection) -> None:
    """Recompute every count from the tables (inside the caller's transaction)."""
    from app.schemes.loader import store

    conn.execute("DELETE FROM row_counts")
    conn.execute("INSERT INTO row_counts SELECT 'samples', scheme, '', COUNT(*) FROM samples GROUP BY scheme")
    conn.execute("INSERT INTO row_counts SELECT 'units', scheme, unit, COUNT(*) FROM units GROUP BY scheme, unit")
    for (scheme,) in conn.execute("SELECT DISTINCT scheme FROM samples").fetchall():
        hook = store(scheme).rebuild_counts
        if hook is not None:
            hook(conn)


def stored_counts(conn: sqlite3.Connection, table: str) -> dict[tuple[str, str], int]:
    """(scheme, key) -> n for one table's counts."""
    return {(s, k): n for s, k, n in conn.execute(
        "SELECT scheme, key, n FROM row_counts WHERE tbl = ? ORDER BY scheme, key", (table,))}
