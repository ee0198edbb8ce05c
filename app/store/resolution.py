"""The resolved label of a target (sample, unit, kind) among its annotators' labels: adjudicated, else majority,
else newest. Calibration, export and the unit list read the resolved label; every annotator's label is kept.

`labels.resolved` marks the one row per target that wins; it is recomputed for the target a decision writes, from
the rows the writer already read (`resolve_written`: no extra query for a target with one annotator), for given
targets (`resolve_targets`) and for all targets when labels are rebuilt from the events (`resolve_all`).
"""
from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

ADJUDICATION = "adjudication"  # the event origin of an adjudicator's decision (issue #15)
# Origins that count as adjudicated: the constant, and the spelling schema v3's migration used ('adjudicate').
ADJUDICATION_ORIGINS: tuple[str, ...] = (ADJUDICATION, "adjudicate")
ADJUDICATED_SQL = "IN ('adjudication', 'adjudicate')"  # `origin {ADJUDICATED_SQL}` in a query over events

# Resolution policies (meta key `resolution`): an adjudicated label always wins; then either the majority (a strict
# plurality, its newest holder) and else the newest, or the newest alone.
POLICIES: tuple[str, ...] = ("majority", "newest")
DEFAULT_POLICY = "majority"

# (annotator, value JSON or None, event_id, adjudicated)
Row = tuple[str, Any, int, int]


def pick(rows: Sequence[Row], policy: str = DEFAULT_POLICY) -> str | None:
    """The annotator whose label is the resolved one: the newest adjudicated label; else (policy 'majority') the
    value most annotators gave (a strict plurality; its newest holder); else the newest label. A cleared label (None)
    abstains; when all are cleared, the newest row wins (so the target reads as None)."""
    if not rows:
        return None
    given = [r for r in rows if r[1] is not None]
    if not given:
        return max(rows, key=lambda r: r[2])[0]
    adjudicated = [r for r in given if r[3]]
    if adjudicated:
        return max(adjudicated, key=lambda r: r[2])[0]
    counts = Counter(r[1] for r in given).most_common(2)
    if policy == "majority" and (len(counts) == 1 or counts[0][1] > counts[1][1]):
        return max((r for r in given if r[1] == counts[0][0]), key=lambda r: r[2])[0]
    return max(given, key=lambda r: r[2])[0]

def policy(conn: sqlite3.Connection) -> str:
    """The project's resolution policy (meta `resolution`), the default when unset or unknown."""
    row = conn.execute("SELECT value FROM meta WHERE key = 'resolution'").fetchone()
    return row[0] if row is not None and row[0] in POLICIES else DEFAULT_POLICY


def resolve_written(conn: sqlite3.Connection, target: tuple[str, str, str], rows: Sequence[Row], writer: str,
                    resolved_by: str | None, how: Callable[[], str]) -> str:
    """The annotator whose row resolves `target` after `writer` wrote it (called inside the writer's transaction,
    before the writer's row is stored). `rows` is every annotator's (annotator, value, event_id, adjudicated) with the
    writer's new row in it; `resolved_by` is who resolved the target before the write (None: nobody).

    One annotator (the common case) costs no query: the writer's row is the only row and resolves. With several,
    the policy (`how`, read at most once per write) picks the winner; a previous winner other than the writer is
    unmarked here, first, because the partial unique index allows one resolved row per target. The caller stores
    the writer's row with `resolved = (winner == writer)` and then, if the winner is someone else not already
    marked, marks it (`mark_resolved`)."""
    winner = rows[0][0] if len(rows) == 1 else pick(rows, how())
    if resolved_by is not None and resolved_by not in (winner, writer):
        conn.execute("UPDATE labels SET resolved = 0 WHERE sample_id=? AND unit=? AND kind=? AND annotator = ?",
                     (*target, resolved_by))
    return winner  # type: ignore[return-value]  # rows is never empty


def mark_resolved(conn: sqlite3.Connection, target: tuple[str, str, str], annotator: str) -> None:
    """Mark `annotator`'s row as the one that resolves `target` (its previous winner must be unmarked already)."""
    conn.execute("UPDATE labels SET resolved = 1 WHERE sample_id=? AND unit=? AND kind=? AND annotator = ?",
                 (*target, annotator))


def resolve_targets(conn: sqlite3.Connection, targets: Iterable[tuple[str, str, str]]) -> None:
    """Recompute the resolved row of each target (inside the caller's transaction)."""
    how = policy(conn)
    for sid, unit, kind in targets:
        rows = conn.execute(
            "SELECT annotator, value, event_id, adjudicated FROM labels WHERE sample_id=? AND unit=? AND kind=?",
            (sid, unit, kind),
        ).fetchall()
        winner = pick(rows, how)
        conn.execute("UPDATE labels SET resolved = 0 WHERE sample_id=? AND unit=? AND kind=? AND resolved = 1 AND annotator != ?",
                     (sid, unit, kind, winner))
        conn.execute("UPDATE labels SET resolved = 1 WHERE sample_id=? AND unit=? AND kind=? AND annotator = ?",
                     (sid, unit, kind, winner))


def resolve_all(conn: sqlite3.Connection) -> None:
    """Mark the resolved row of every target: a target with one row is that row; the others go through `pick`."""
    conn.execute("UPDATE labels SET resolved = 0 WHERE resolved != 0")
    conn.execute(
        "UPDATE labels SET resolved = 1 WHERE (sample_id, unit, kind) IN "
        "(SELECT sample_id, unit, kind FROM labels GROUP BY sample_id, unit, kind HAVING COUNT(*) = 1)"
    )
    multi = conn.execute(
        "SELECT sample_id, unit, kind FROM labels GROUP BY sample_id, unit, kind HAVING COUNT(*) > 1"
    ).fetchall()
    resolve_targets(conn, multi)
