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

from app.store.parts import ProjectPart

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


# -- what humans decided: the one definition every surface counts with (issue #25) -----------------------------------
# A unit is *labeled* when a human label other than a status or a note exists for it, or for its sample through a
# per-sample kind (LabelKind.per_sample, stored under unit ''); it has a *status* when its status label is set. The
# labels counted are the resolved ones, or one annotator's own (blind mode). Totals come from the counts kept on
# write; the labels side is a few rows per labeled unit, so nothing here scans the samples or units tables.
def _decided_sql(annotator: str | None, assigned_to: str | None, scheme: str | None) -> tuple[str, list[Any]]:
    """SELECT unit id, sample_id, unit, scheme, with_status (0/1), labeled (0/1) of every unit with a decision.

    A label other than a status or a note under unit '' is a per-sample kind's (LabelKind.per_sample: import and the
    views store those there and nothing else), and labels every unit of its sample; the one exception, a sample whose
    only unit is '' (no machine output), is labeled either way. So the rule needs no registry (loading every scheme
    would triple the time of `concord status`)."""
    whose, params = ("annotator = ?", [annotator]) if annotator else ("resolved = 1", [])
    where = []
    if scheme is not None:
        where.append("u.scheme = ?")
    if assigned_to:
        where.append("EXISTS (SELECT 1 FROM assignments a WHERE a.sample_id = u.sample_id AND a.unit = u.unit"
                     " AND a.annotator = ?)")
    tail = (" WHERE " + " AND ".join(where)) if where else ""
    sql = (
        f"WITH l AS (SELECT sample_id, unit, kind FROM labels WHERE {whose} AND value IS NOT NULL),"
        " d AS (SELECT u.id AS uid, MAX(l.kind = 'status') AS ws, MAX(l.kind NOT IN ('status', 'note')) AS lab"
        " FROM l JOIN units u ON u.sample_id = l.sample_id AND u.unit = l.unit GROUP BY u.id"
        " UNION ALL SELECT u.id, 0, 1 FROM (SELECT DISTINCT l.sample_id FROM l"
        " WHERE l.unit = '' AND l.kind NOT IN ('status', 'note')) p JOIN units u ON u.sample_id = p.sample_id)"
        " SELECT u.id, u.sample_id, u.unit, u.scheme, MAX(d.ws), MAX(d.lab) FROM d JOIN units u ON u.id = d.uid"
        f"{tail} GROUP BY u.id"
    )
    return sql, [*params, *([scheme] if scheme is not None else []), *([assigned_to] if assigned_to else [])]


def decided_units(conn: sqlite3.Connection, scheme: str | None = None, annotator: str | None = None
                  ) -> dict[tuple[str, str], tuple[bool, bool]]:
    """(sample_id, unit) -> (has a status, is labeled) for every unit with a human decision (see above)."""
    sql, params = _decided_sql(annotator, None, scheme)
    return {(sid, unit): (bool(ws), bool(lab)) for _, sid, unit, _, ws, lab in conn.execute(sql, params)}


def label_row_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Scheme -> label rows: every annotator's current, non-cleared label of any kind (status and note included)."""
    return dict(conn.execute("SELECT s.scheme, COUNT(*) FROM labels l JOIN samples s ON s.id = l.sample_id"
                             " WHERE l.value IS NOT NULL GROUP BY s.scheme"))


def machine_labeled_counts(conn: sqlite3.Connection) -> dict[tuple[str, str], int]:
    """(scheme, unit) -> units with a machine label: a named unit is the machine source itself (a checker, judge,
    model or method whose output the record carries), and a unit with a stored machine label (`concord assign`)
    counts too; unit '' (a sample with no machine output) only through a stored label. Read from the counts kept on
    write, so a source whose run failed on a sample (an error instead of an output) still counts: telling it apart
    would mean parsing every record."""
    out = {k: n for k, n in stored_counts(conn, "units").items() if k[1]}
    for scheme, unit, n in conn.execute(
            "SELECT u.scheme, u.unit, COUNT(DISTINCT u.id) FROM machine_labels m JOIN units u"
            " ON u.sample_id = m.sample_id AND u.unit = m.unit WHERE m.unit = '' AND m.value IS NOT NULL"
            " GROUP BY u.scheme, u.unit"):
        out[(scheme, unit)] = n
    return out


def unit_counts_by_scheme(conn: sqlite3.Connection, annotator: str | None = None, assigned_to: str | None = None
                          ) -> dict[str, Any]:
    """The counts a user sees, per scheme and per (scheme, unit): samples, units, labeled and unlabeled units, units
    with a status, label rows and machine-labeled units. `annotator`: that annotator's own labels instead of the
    resolved ones; `assigned_to`: only the units assigned to that annotator (their queue, blind mode)."""
    sql, params = _decided_sql(annotator, assigned_to, None)
    decided: Counter[tuple[str, str, str]] = Counter()
    for _, _, unit, scheme, ws, lab in conn.execute(sql, params):
        decided[(scheme, unit, "with_status")] += ws
        decided[(scheme, unit, "labeled")] += lab
    if assigned_to:
        totals = {(s, u): n for s, u, n in conn.execute(
            "SELECT u.scheme, u.unit, COUNT(*) FROM assignments a JOIN units u ON u.sample_id = a.sample_id"
            " AND u.unit = a.unit WHERE a.annotator = ? GROUP BY u.scheme, u.unit", (assigned_to,))}
    else:
        totals = stored_counts(conn, "units")
    machine = machine_labeled_counts(conn)
    units = [{"scheme": s, "unit": u, "total": n, "labeled": decided[(s, u, "labeled")],
              "unlabeled": n - decided[(s, u, "labeled")], "with_status": decided[(s, u, "with_status")],
              "machine_labeled": machine.get((s, u), 0)} for (s, u), n in totals.items()]
    samples = {s: n for (s, _), n in stored_counts(conn, "samples").items()}
    rows = label_row_counts(conn)
    schemes: dict[str, dict[str, int]] = {}
    for name in sorted({*samples, *(u["scheme"] for u in units)}):
        mine = [u for u in units if u["scheme"] == name]
        schemes[name] = {"samples": samples.get(name, 0), "units": sum(u["total"] for u in mine),
                         **{k: sum(u[k] for u in mine) for k in ("labeled", "unlabeled", "with_status",
                                                                  "machine_labeled")},
                         "label_rows": rows.get(name, 0)}
    return {"schemes": schemes, "units": units}


class CountsPart(ProjectPart):
    """`project.counts`: the counts every surface shows (status, status bar, demo, export), read from the counts kept
    on write and the labels side by the definitions above, on the project's connection."""

    def sample_counts(self) -> dict[str, int]:
        """Samples per scheme present in the project (no registry needed: `concord status` stays fast)."""
        # In the order the schemes first appear (a scan that stops at each scheme's first row), counts kept on write.
        return dict(self.conn.execute(
            "SELECT scheme, n FROM row_counts rc WHERE tbl = 'samples' "
            "ORDER BY (SELECT s.rowid FROM samples s WHERE s.scheme = rc.scheme LIMIT 1)").fetchall())

    def unit_counts(self, annotator: str | None = None, assigned_to: str | None = None) -> dict[str, Any]:
        """Per scheme and per (scheme, unit): samples, units, labeled/unlabeled units, units with a status, label
        rows, machine-labeled units (app/store/counts.py says what counts); every surface reads these."""
        return unit_counts_by_scheme(self.conn, annotator, assigned_to)

    def decided_units(self, scheme: str | None = None, annotator: str | None = None
                      ) -> dict[tuple[str, str], tuple[bool, bool]]:
        """(sample_id, unit) -> (has a status, is labeled) of every unit a human decided on, by the same rule."""
        return decided_units(self.conn, scheme, annotator)

    def status_counts(self) -> dict[str, Any]:
        """Everything `concord status` prints, in a few aggregate queries."""
        from app.schemes.loader import store

        # Totals come from the counts kept on write; what humans decided is counted from the labels side, by the one
        # definition every surface uses (app/store/counts.unit_counts_by_scheme): nothing here scans the big tables.
        samples = {scheme: n for (scheme, _), n in stored_counts(self.conn, "samples").items()}
        own: dict[str, Any] = {}
        for scheme in samples:  # a store part may add counts of its own tables (`status_counts(project)`)
            hook = store(scheme).status_counts
            if hook is not None:
                own[scheme] = hook(self.project)
        counts = unit_counts_by_scheme(self.conn)
        return {
            "samples": samples,
            "scheme_counts": own,
            "units": counts["units"],
            "schemes": counts["schemes"],
            "events": int(self.scalar("SELECT COUNT(*) FROM events")),
            "annotators": int(self.scalar("SELECT COUNT(*) FROM annotators")),
        }
