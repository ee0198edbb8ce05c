"""Human decisions as append-only events; the current label of each target is derived from them.

A target is (sample_id, unit, kind): unit is the checker (violations) or trait (rubric), '' for per-sample targets.
Kinds: 'status' ('accepted'|'corrected'|'skipped'|'flagged'|None) and 'note' (str) for every scheme, and the kinds
each registered scheme declares (its `label_kinds`, e.g. the violations' 'matches'); any other kind is refused.
The `labels` table holds each annotator's newest value per target, written in the same transaction as the event,
and marks the resolved one (adjudicated, else majority, else newest: app/store/resolution.py); `rebuild_labels`
derives it again from the events alone. Every read here returns the resolved label unless an annotator is named.
"""
from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from app.names import annotator_name
from app.store.decision_batches import UPSERT_LABEL, repeats
from app.store.guidelines import GUIDELINE_IN_FORCE_SQL
from app.store.parts import ProjectPart
from app.store.project import dumps, now
from app.store.resolution import (
    ADJUDICATED_SQL,
    ADJUDICATION_ORIGINS,
    mark_resolved,
    policy,
    resolve_all,
    resolve_written,
)
from app.store.schema import event_uid


def _shared_strings(table: Any) -> list[Any]:
    """The columns of an object table, equal strings one object each (SQLite makes a string per row and cell: a
    chunk's sample, unit, kind and annotator names and its repeated values would otherwise be kept once per label)."""
    import pandas as pd

    out = []
    for column in table.T:
        codes, distinct = pd.factorize(column, sort=False, use_na_sentinel=False)
        out.append(distinct[codes] if len(distinct) < len(column) else column.copy())
    return out


STATUSES = ("accepted", "corrected", "skipped", "flagged")  # = calibration.schemes.base.STATUSES


def _known_kinds() -> set[str]:
    """Every kind of human label a registered scheme accepts (each scheme declares its own: Scheme.label_kinds)."""
    from calibration.schemes.base import (
        registry,  # the schemes load on the first recorded decision, not on import
    )

    return set(registry().label_kinds())


def _older_guideline(c: Any, event_id: int, sample_id: str) -> bool:
    """Whether the event was recorded under an older guideline version of the sample's scheme than the current one."""
    given, current = c.execute(f"SELECT guideline_version, {GUIDELINE_IN_FORCE_SQL} FROM events WHERE id = ?",
                               (sample_id, event_id)).fetchone()
    return current is not None and (given is None or given < current)


@dataclass(frozen=True)
class Change:
    sample_id: str
    unit: str
    kind: str
    after: Any


class DecisionsPart(ProjectPart):
    """`project.decisions`: human decisions (events) and the labels derived from them, annotators, work time."""

    def ensure_annotator(self, name: str) -> str:
        """Register an annotator; returns the name as stored (app.names: NFC, no control characters)."""
        name = annotator_name(name, "annotator")
        with self.transaction() as c:
            c.execute("INSERT OR IGNORE INTO annotators VALUES (?, ?)", (name, now()))
        return name

    def annotators(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM annotators ORDER BY created_at")]

    def record(self, annotator: str, changes: Sequence[Change], *, origin: str = "app", command: str | None = None,
               machine_visible: bool | None = None) -> list[int]:
        """Append one event per change, atomically; returns the event ids.

        A change that repeats the value its own annotator already set is skipped, so re-applying is a no-op.
        `machine_visible`: whether the machine's labels were on screen when the human decided (None: not known).
        """
        annotator = annotator_name(annotator, "annotator")
        known = _known_kinds()
        for ch in changes:
            if ch.kind not in known:
                raise ValueError(f"kind: unknown decision kind {ch.kind!r}")
            if ch.kind == "status" and ch.after is not None and ch.after not in STATUSES:
                raise ValueError(f"status: must be one of {STATUSES} or None, got {ch.after!r}")
        command = command or uuid.uuid4().hex
        adjudicated = int(origin in ADJUDICATION_ORIGINS)
        ids: list[int] = []
        with self.transaction() as c:
            read: list[str] = []

            def how() -> str:  # the policy, read only if a target has several annotators, and then once
                if not read:
                    read.append(policy(c))
                return read[0]

            c.execute("INSERT OR IGNORE INTO annotators VALUES (?, ?)", (annotator, now()))
            versioned = c.execute("SELECT 1 FROM guidelines LIMIT 1").fetchone() is not None
            for ch in changes:
                target = (ch.sample_id, ch.unit, ch.kind)
                # every annotator's row of the target in one read: the writer's own is `before`, all of them
                # resolve the target after the write (app/store/resolution.py)
                rows = c.execute(
                    "SELECT annotator, value, event_id, adjudicated, resolved FROM labels "
                    "WHERE sample_id=? AND unit=? AND kind=?", target).fetchall()
                own = next((r for r in rows if r[0] == annotator), None)
                before = own[1] if own is not None else None
                after = None if ch.after is None else dumps(ch.after)
                # a re-imported file confirms nothing: importing the same file again stays a no-op
                if repeats(None if own is None else (own[1], own[3]), after, adjudicated,
                           lambda: versioned and origin != "import" and _older_guideline(c, own[2], ch.sample_id)):
                    continue
                ts = now()
                cur = c.execute(
                    "INSERT INTO events (ts, annotator, sample_id, unit, kind, before, after, command, origin, uid, "
                    "machine_visible, guideline_version) "
                    f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {GUIDELINE_IN_FORCE_SQL})",
                    (ts, annotator, ch.sample_id, ch.unit, ch.kind, before, after, command, origin,
                     event_uid(ts, annotator, ch.sample_id, ch.unit, ch.kind, after, command, origin),
                     None if machine_visible is None else int(machine_visible), ch.sample_id),
                )
                eid = int(cur.lastrowid)
                was = next((r[0] for r in rows if r[4]), None)
                now_rows = [r[:4] for r in rows if r[0] != annotator] + [(annotator, after, eid, adjudicated)]
                winner = resolve_written(c, target, now_rows, annotator, was, how)
                c.execute(
                    UPSERT_LABEL,
                    (*target, annotator, after, eid, ts, adjudicated, int(winner == annotator)),
                )
                if winner not in (annotator, was):
                    mark_resolved(c, target, winner)
                ids.append(eid)
        return ids

    def record_many(self, commands: Sequence[tuple[str, Sequence[Change]]], *, origin: str = "app",
                    machine_visible: bool | None = None) -> list[list[int]]:
        """`record` of each (annotator, changes) command in order, atomically; the event ids of each. The same rows
        as that loop, a few statements per chunk of commands instead of a dozen per decision (app/store/decision_batches.py:
        `concord labels import` records 350k lines at 100k rgb samples)."""
        from app.store.decision_batches import CHUNK, record_chunk

        known = _known_kinds()
        checked = []
        for annotator, changes in commands:
            for ch in changes:
                if ch.kind not in known:
                    raise ValueError(f"kind: unknown decision kind {ch.kind!r}")
                if ch.kind == "status" and ch.after is not None and ch.after not in STATUSES:
                    raise ValueError(f"status: must be one of {STATUSES} or None, got {ch.after!r}")
            checked.append((annotator_name(annotator, "annotator"), changes))
        ids: list[list[int]] = []
        with self.transaction() as c:
            for lo in range(0, len(checked), CHUNK):
                ids += record_chunk(c, checked[lo:lo + CHUNK], origin=origin, machine_visible=machine_visible,
                                    older=lambda eid, sid: _older_guideline(c, eid, sid))
        return ids

    def latest_imported(self, sample_ids: Sequence[str]) -> dict[str, dict[tuple[str, str, str], Any]]:
        """sample -> (annotator, unit, kind) -> value of that annotator's newest imported event for the target (None:
        cleared), for each given sample (re-importing a file skips the lines it already recorded)."""
        from app.store.decision_batches import latest_imported

        return {sid: {key: None if v is None else json.loads(v) for key, v in got.items()}
                for sid, got in latest_imported(self.conn, sample_ids).items()}

    def adjudicate(self, adjudicator: str, changes: Sequence[Change], *, command: str | None = None) -> list[int]:
        """Record an adjudicator's decision (origin `adjudication`): it resolves the target whatever the others say,
        and stays the adjudicator's own label beside theirs (the app's adjudication view calls this)."""
        from app.store.resolution import ADJUDICATION

        return self.record(adjudicator, changes, origin=ADJUDICATION, command=command)

    def current(self, sample_id: str, unit: str, kind: str, annotator: str | None = None) -> Any:
        """The resolved label of a target, or the named annotator's own."""
        if annotator is None:
            v = self.scalar("SELECT value FROM labels WHERE sample_id=? AND unit=? AND kind=? AND resolved=1",
                            (sample_id, unit, kind))
        else:
            v = self.scalar("SELECT value FROM labels WHERE sample_id=? AND unit=? AND kind=? AND annotator=?",
                            (sample_id, unit, kind, annotator))
        return None if v is None else json.loads(v)

    def annotator_labels(self, sample_id: str, unit: str, kind: str) -> dict[str, Any]:
        """Every annotator's current label of a target (cleared ones included as None)."""
        return {a: (None if v is None else json.loads(v)) for a, v in self.conn.execute(
            "SELECT annotator, value FROM labels WHERE sample_id=? AND unit=? AND kind=? ORDER BY event_id",
            (sample_id, unit, kind))}

    def sample_labels(self, sample_id: str, annotator: str | None = None) -> dict[tuple[str, str], Any]:
        """(unit, kind) -> the resolved label of every target of a sample, or the named annotator's own (blind mode:
        the app shows an annotator only their own labels)."""
        if annotator is None:
            rows = self.conn.execute("SELECT unit, kind, value FROM labels WHERE sample_id = ? AND resolved = 1",
                                     (sample_id,))
        else:
            rows = self.conn.execute("SELECT unit, kind, value FROM labels WHERE sample_id = ? AND annotator = ?",
                                     (sample_id, annotator))
        return {(u, k): (None if v is None else json.loads(v)) for u, k, v in rows}

    def label_table(self, sample_id: str, units: Sequence[str]) -> list[dict[str, Any]]:
        """Every annotator's label of the targets of `units` of a sample (the adjudication view): rows of unit, kind,
        annotator, value (None: cleared), resolved and adjudicated flags, in event order."""
        rows = self.query(
            f"SELECT unit, kind, annotator, value, resolved, adjudicated FROM labels WHERE sample_id = ? AND unit IN "
            f"({','.join('?' * len(units))}) ORDER BY unit, kind, event_id", (sample_id, *units))
        for r in rows:
            r["value"] = None if r["value"] is None else json.loads(r["value"])
        return rows

    def events(self, sample_id: str | None = None) -> list[dict[str, Any]]:
        if sample_id is None:
            return self.query("SELECT * FROM events ORDER BY id")
        return self.query("SELECT * FROM events WHERE sample_id = ? ORDER BY id", (sample_id,))

    def rebuild_labels(self) -> None:
        """Derive the labels table from the events alone (the audit trail is the source of truth)."""
        with self.transaction() as c:
            c.execute("DELETE FROM labels")
            c.execute(
                "INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts, adjudicated) "
                f"SELECT e.sample_id, e.unit, e.kind, e.annotator, e.after, e.id, e.ts, e.origin {ADJUDICATED_SQL} "
                "FROM events e "
                "JOIN (SELECT MAX(id) AS id FROM events GROUP BY sample_id, unit, kind, annotator) last ON last.id = e.id"
            )
            resolve_all(c)

    def resolution_policy(self) -> str:
        """How a target with several annotators resolves when nobody adjudicated: 'majority' (else newest) or 'newest'."""
        return policy(self.conn)

    def set_resolution_policy(self, name: str) -> None:
        """Set the policy (meta `resolution`) and resolve every target again under it."""
        from app.store.resolution import POLICIES

        if name not in POLICIES:
            raise ValueError(f"resolution: must be one of {', '.join(POLICIES)}, got {name!r}")
        with self.transaction() as c:
            c.execute("INSERT INTO meta VALUES ('resolution', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                      (name,))
            resolve_all(c)

    def annotator_label_rows(self, kinds: Sequence[str] | None = None, *,
                             skip: Sequence[str] = ()) -> list[tuple[str, str, str, str, str, Any]]:
        """(scheme, sample_id, unit, kind, annotator, value) of every annotator's current, non-cleared label (of
        `kinds` only when given; none of `skip`: kinds the caller would drop, not decoded)."""
        return list(self.iter_annotator_label_rows(kinds, skip=skip))

    def iter_annotator_label_rows(self, kinds: Sequence[str] | None = None, *,
                                  skip: Sequence[str] = ()) -> Iterator[tuple[str, str, str, str, str, Any]]:
        """`annotator_label_rows` one row at a time, in sample order, each repeated name (scheme, sample, unit, kind,
        annotator) one shared string: agreement keeps what it needs of each row, not every row (the list of them was
        200 MB at 100k samples)."""
        where, params = "", ()
        if kinds:
            where, params = f" AND l.kind IN ({','.join('?' * len(kinds))})", tuple(kinds)
        if skip:
            where, params = where + f" AND l.kind NOT IN ({','.join('?' * len(skip))})", (*params, *skip)
        import orjson  # several times faster than json on the many small values agreement reads

        loads = orjson.loads
        excluded = self.project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
        names: dict[str, str] = {}
        shared = names.setdefault
        last = ""
        for sc, s, u, k, a, v in self.conn.execute(
                "SELECT s.scheme, l.sample_id, l.unit, l.kind, l.annotator, l.value FROM labels l "
                f"JOIN samples s ON s.id = l.sample_id WHERE l.value IS NOT NULL{where} "
                "ORDER BY l.sample_id, l.unit, l.kind, l.annotator", params):
            if excluded and (s, u, a) in excluded:
                continue
            if s == last:
                s = last  # rows come in sample order: the sample's one string
            last = s
            yield shared(sc, sc), s, shared(u, u), shared(k, k), shared(a, a), loads(v)

    def label_column_chunks(self, schemes: Sequence[str] | None = None, *, skip: Sequence[str] = (),
                            size: int = 100_000) -> Iterator[tuple[Any, ...]]:
        """(scheme, sample_id, unit, kind, annotator, value as JSON text) as object arrays, about `size` labels at a
        time, of every annotator's current, non-cleared label (of `schemes` only when given, else of every scheme;
        none of `skip`): scheme by scheme, each in `iter_annotator_label_rows`' order. A sample's labels never
        straddle two chunks, so a caller can code each chunk on its own (agreement and the human ceiling keep integer
        codes, not a tuple per label: 3M labels at 1M units)."""
        import numpy as np

        names = list(self.project.counts.sample_counts()) if schemes is None else list(schemes)
        where = f" AND l.kind NOT IN ({','.join('?' * len(skip))})" if skip else ""
        excluded = self.project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
        for name in names:
            # the scheme's samples as a set SQLite probes, not a join: a fifth less time at 100k samples
            cur = self.conn.execute(
                "SELECT l.sample_id, l.unit, l.kind, l.annotator, l.value FROM labels l WHERE l.value IS NOT NULL"
                f"{where} AND l.sample_id IN (SELECT id FROM samples WHERE scheme = ?) "
                "ORDER BY l.sample_id, l.unit, l.kind, l.annotator", (*skip, name))
            for rows in whole_sample_fetches(cur, size, excluded):
                table = np.empty((len(rows), 5), dtype=object)
                table[:] = rows
                yield (np.full(len(rows), name, dtype=object), *_shared_strings(table))

    def several_annotators(self) -> bool:
        """Whether two or more annotators gave labels: without that no unit is shared and no human ceiling can be
        drawn, so `concord evaluate` need not collect the metric's decisions (0.2 s at 100k samples)."""
        return self.conn.execute(
            "SELECT COUNT(*) FROM (SELECT DISTINCT annotator FROM labels WHERE value IS NOT NULL LIMIT 2)").fetchone()[0] >= 2

    def label_kinds_present(self) -> list[str]:
        """The kinds of label anyone has given in this project."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT kind FROM labels ORDER BY kind")]

    def text_lengths(self) -> dict[str, int]:
        """sample_id -> length of its text in code points (SQLite's length() of TEXT), for unitizing alpha."""
        return dict(self.conn.execute("SELECT id, length(text) FROM samples"))

    def text_length_chunks(self, size: int = 1 << 16) -> Iterator[tuple[tuple[str, ...], tuple[int, ...]]]:
        """(sample ids, their texts' lengths in code points), `size` samples at a time: what agreement's unitizing
        alpha looks its samples up in without a dict of every sample (`text_lengths`: ~130 MB at 1M samples)."""
        cur = self.conn.execute("SELECT id, length(text) FROM samples")
        while rows := cur.fetchmany(size):
            ids, lengths = zip(*rows)
            yield ids, lengths

    def seconds_per_annotator_unit(self) -> dict[tuple[str, str, str], float]:
        """(annotator, sample_id, unit) -> seconds spent (work_log summed)."""
        return {(a, s, u): float(t) for a, s, u, t in self.conn.execute(
            "SELECT annotator, sample_id, unit, SUM(seconds) FROM work_log GROUP BY annotator, sample_id, unit")}

    def label_rows(self, kinds: Sequence[str], *, every_annotator: bool = False) -> list[dict[str, Any]]:
        """Resolved labels of the given kinds with who set them (exports need the annotator, not only the value);
        `every_annotator`: each annotator's own label instead, with `resolved` saying which one wins."""
        if not kinds:
            return []
        which = "" if every_annotator else "AND resolved = 1 "
        rows = self.query(
            f"SELECT sample_id, unit, kind, value, annotator, resolved FROM labels WHERE kind IN ({','.join('?' * len(kinds))}) "
            f"{which}AND value IS NOT NULL ORDER BY sample_id, unit, kind, event_id",
            tuple(kinds),
        )
        excluded = self.project.guidelines.excluded_labels  # app/store/guidelines.py: labels of another guideline
        if excluded:
            rows = [r for r in rows if (r["sample_id"], r["unit"], r["annotator"]) not in excluded]
        for r in rows:
            r["value"] = json.loads(r["value"])
            if not every_annotator:
                del r["resolved"]
        return rows

    def log_time(self, annotator: str, sample_id: str, unit: str, seconds: float) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT INTO work_log (annotator, sample_id, unit, seconds, ts) VALUES (?, ?, ?, ?, ?)",
                (annotator, sample_id, unit, float(seconds), now()),
            )

    def time_spent(self, sample_id: str | None = None) -> float:
        if sample_id is None:
            return float(self.scalar("SELECT COALESCE(SUM(seconds), 0) FROM work_log"))
        return float(self.scalar("SELECT COALESCE(SUM(seconds), 0) FROM work_log WHERE sample_id = ?", (sample_id,)))

    def annotator_stats(self) -> Iterable[dict[str, Any]]:
        return self.query(
            "SELECT annotator, COUNT(*) AS events, MIN(ts) AS first, MAX(ts) AS last FROM events GROUP BY annotator ORDER BY annotator"
        )

    def label_times(self) -> dict[tuple[str, str, str, str], tuple[str, bool, bool]]:
        """(sample_id, unit, kind, annotator) -> (when the current label was given, whether it is adjudicated,
        whether it was imported) of every non-cleared label (annotator quality, agreement over time)."""
        return {(s, u, k, a): (ts, bool(adj), origin == "import") for s, u, k, a, ts, adj, origin in self.conn.execute(
            "SELECT l.sample_id, l.unit, l.kind, l.annotator, l.ts, l.adjudicated, e.origin FROM labels l "
            "JOIN events e ON e.id = l.event_id WHERE l.value IS NOT NULL")}

    def decision_times(self) -> dict[str, list[str]]:
        """annotator -> the time of each of their decisions (one per command: a decision may write several events),
        in order; imported labels are left out (their times say when the file was read, not when anyone decided)."""
        out: dict[str, list[str]] = {}
        for a, ts in self.conn.execute("SELECT annotator, MIN(ts) AS t FROM events WHERE origin != 'import' "
                                       "GROUP BY annotator, COALESCE(command, id) ORDER BY annotator, t"):
            out.setdefault(a, []).append(ts)
        return out

    def decided_statuses(self) -> list[tuple[str, str, str, str]]:
        """(scheme, sample_id, annotator, status) of every current status label someone set by deciding (not by an
        import, which marks each imported unit 'accepted' whatever the file says: no sign of anyone's habits)."""
        return [(sc, s, a, json.loads(v)) for sc, s, a, v in self.conn.execute(
            "SELECT s.scheme, l.sample_id, l.annotator, l.value FROM labels l JOIN samples s ON s.id = l.sample_id "
            "JOIN events e ON e.id = l.event_id WHERE l.kind = 'status' AND l.value IS NOT NULL AND e.origin != 'import'")]


def whole_sample_fetches(cur: Any, size: int, excluded: Any) -> Iterator[list[tuple]]:
    """The cursor's label rows (sample id first, unit second, annotator fourth; in sample order) about `size` at a
    time, none of `excluded`'s (sample, unit, annotator): each list ends with a sample's last row, so a sample's
    labels never straddle two lists and a caller can code each on its own."""
    held: list[tuple] = []  # the last sample's rows of the previous fetch: it may go on in the next one
    while True:
        got = cur.fetchmany(size)
        done = len(got) < size  # the cursor is done: every row is here
        if excluded:
            got = [r for r in got if (r[0], r[1], r[3]) not in excluded]
        rows = held + got if held else got
        if done:
            if rows:
                yield rows
            return
        if not rows:
            continue  # every row of this fetch left out
        last, cut = rows[-1][0], len(rows)
        while cut and rows[cut - 1][0] == last:
            cut -= 1
        held = rows[cut:]
        if cut:
            yield rows[:cut]
