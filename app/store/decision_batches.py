"""Many decisions recorded at once (`concord labels import`): the same events and labels as calling
`DecisionsPart.record` once per command, in that order, written with a few statements per chunk of commands.

Why: `record` reads and writes each target on its own (a dozen statements per decision): fine for the app's one
command, 1.3 ms per imported line (350k lines at 100k rgb samples: 8 minutes). Here a chunk's samples' labels are
read in one pass, each command is applied in order to that copy (the same rules as `record`: a repeated value is
skipped, the target resolves by app/store/resolution.py's `pick`), and the chunk's events, label rows and resolved
marks are written with executemany. Event ids are the ones sequential inserts get (AUTOINCREMENT: one past the
largest ever used), and new label rows are inserted in the order `record` first wrote them, so the rows stored are
the same (timestamps, command ids and uids aside: they are clock and random values either way).
"""
from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from app.store.guidelines import GUIDELINE_IN_FORCE_SQL
from app.store.project import dumps, now
from app.store.resolution import ADJUDICATION_ORIGINS, pick, policy
from app.store.schema import event_uid

if TYPE_CHECKING:
    from app.store.decisions import Change

CHUNK = 20_000  # commands per chunk: bounds the memory of the pending events and the labels read
_PARAMS = 900  # sample ids per IN (...) list


UPSERT_LABEL = (
    "INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts, adjudicated, resolved) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(sample_id, unit, kind, annotator) DO UPDATE SET "
    "value=excluded.value, event_id=excluded.event_id, ts=excluded.ts, adjudicated=excluded.adjudicated, "
    "resolved=excluded.resolved")


def repeats(own: tuple[Any, bool] | None, after: str | None, adjudicated: int, reconfirms: Callable[[], bool]) -> bool:
    """Whether a change records nothing: it repeats the value its own annotator already set (`own`: that label's
    (value, adjudicated), None when the annotator has none). A second annotator who agrees is evidence for
    inter-annotator agreement and gets an event (and a label) of their own; an adjudicator who picks the label they
    already gave still records the adjudication; a person repeating a label given under an older guideline version
    confirms it under the current one (`reconfirms()`, asked last: it may read the events)."""
    before = own[0] if own is not None else None
    return (before == after and (own is not None or after is None) and (own is None or own[1] == adjudicated)
            and not (own is not None and reconfirms()))


def _chunks(items: Sequence[Any], size: int) -> Iterable[Sequence[Any]]:
    for lo in range(0, len(items), size):
        yield items[lo:lo + size]


def _labels_of(c: sqlite3.Connection, sample_ids: Sequence[str]) -> dict[tuple[str, str, str], dict[str, list[Any]]]:
    """target -> annotator -> [value, event_id, adjudicated, resolved] of every label of the samples."""
    out: dict[tuple[str, str, str], dict[str, list[Any]]] = {}
    for part in _chunks(sample_ids, _PARAMS):
        for sid, unit, kind, who, value, eid, adj, res in c.execute(
                "SELECT sample_id, unit, kind, annotator, value, event_id, adjudicated, resolved FROM labels "
                f"WHERE sample_id IN ({','.join('?' * len(part))})", tuple(part)):
            out.setdefault((sid, unit, kind), {})[who] = [value, eid, adj, res]
    return out


def latest_imported(c: sqlite3.Connection, sample_ids: Sequence[str]) -> dict[str, dict[tuple[str, str, str], Any]]:
    """sample -> (annotator, unit, kind) -> value JSON text (None: cleared) of that annotator's newest imported event
    for the target, for every given sample (an empty dict when none)."""
    out: dict[str, dict[tuple[str, str, str], Any]] = {sid: {} for sid in sample_ids}
    for part in _chunks(sample_ids, _PARAMS):
        for sid, who, unit, kind, after in c.execute(
                "SELECT sample_id, annotator, unit, kind, after FROM events "
                f"WHERE origin = 'import' AND sample_id IN ({','.join('?' * len(part))}) ORDER BY id", tuple(part)):
            out[sid][(who, unit, kind)] = after
    return out


def _next_event_id(c: sqlite3.Connection) -> int:
    """The id the next INSERT INTO events gets (AUTOINCREMENT: one past the largest id the table ever held)."""
    seq = c.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    top = c.execute("SELECT MAX(id) FROM events").fetchone()[0]
    return max(seq[0] if seq else 0, top or 0) + 1


def record_chunk(c: sqlite3.Connection, commands: Sequence[tuple[str, Sequence[Change]]], *, origin: str,
                 machine_visible: bool | None, older: Any) -> list[list[int]]:
    """Apply (annotator, changes) commands in order inside the caller's transaction; the event ids of each.

    Annotator names and kinds are already checked (`DecisionsPart.record_many`). `older(event_id, sample_id)`: whether
    that stored event was recorded under an older guideline version than the current one (`record`'s test)."""
    adjudicated = int(origin in ADJUDICATION_ORIGINS)
    versioned = c.execute("SELECT 1 FROM guidelines LIMIT 1").fetchone() is not None
    how = policy(c)
    samples = list(dict.fromkeys(ch.sample_id for _, changes in commands for ch in changes))
    labels = _labels_of(c, samples)
    first_id = next_id = _next_event_id(c)
    visible = None if machine_visible is None else int(machine_visible)
    events: list[tuple[Any, ...]] = []
    written: dict[tuple[str, str, str, str], str] = {}  # (target, annotator) -> ts, in first-write order
    touched: dict[tuple[str, str, str], None] = {}
    was_resolved: dict[tuple[str, str, str], str | None] = {}  # target -> who resolved it in the file, before
    annotators: list[tuple[str, str]] = []
    seen_annotators: set[str] = set()
    ids_per_command: list[list[int]] = []
    for annotator, changes in commands:
        if annotator not in seen_annotators:
            seen_annotators.add(annotator)
            annotators.append((annotator, now()))
        command = uuid.uuid4().hex
        ids: list[int] = []
        for ch in changes:
            target = (ch.sample_id, ch.unit, ch.kind)
            rows = labels.setdefault(target, {})
            own = rows.get(annotator)
            before = own[0] if own is not None else None
            after = None if ch.after is None else dumps(ch.after)
            if repeats(None if own is None else (own[0], own[2]), after, adjudicated,
                       lambda: versioned and origin != "import" and own[1] < first_id and older(own[1], ch.sample_id)):
                continue
            ts = now()
            eid = next_id
            next_id += 1
            events.append((eid, ts, annotator, ch.sample_id, ch.unit, ch.kind, before, after, command, origin,
                           event_uid(ts, annotator, ch.sample_id, ch.unit, ch.kind, after, command, origin),
                           visible, ch.sample_id))
            if target not in touched:
                touched[target] = None
                was_resolved[target] = next((who for who, r in rows.items() if r[3]), None)
            rows[annotator] = [after, eid, adjudicated, 0]
            written[(*target, annotator)] = ts
            ids.append(eid)
        ids_per_command.append(ids)
    c.executemany("INSERT OR IGNORE INTO annotators VALUES (?, ?)", annotators)
    c.executemany(
        "INSERT INTO events (id, ts, annotator, sample_id, unit, kind, before, after, command, origin, uid, "
        f"machine_visible, guideline_version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {GUIDELINE_IN_FORCE_SQL})",
        events)
    winners = {t: pick([(who, r[0], r[1], r[2]) for who, r in labels[t].items()], how) for t in touched}
    # one resolved row per target at every step (a partial unique index): unmark the old winners first
    c.executemany("UPDATE labels SET resolved = 0 WHERE sample_id=? AND unit=? AND kind=? AND annotator = ?",
                  [(*t, was) for t, was in was_resolved.items() if was is not None and was != winners[t]])
    c.executemany(
        UPSERT_LABEL,
        [(s, u, k, who, *labels[(s, u, k)][who][:2], ts, adjudicated, int(winners[(s, u, k)] == who))
         for (s, u, k, who), ts in written.items()])
    c.executemany("UPDATE labels SET resolved = 1 WHERE sample_id=? AND unit=? AND kind=? AND annotator = ?",
                  [(*t, w) for t, w in winners.items() if w != was_resolved[t] and (*t, w) not in written])
    return ids_per_command
