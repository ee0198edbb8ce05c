"""Bulk writes through scratch databases, so a large import can prepare its rows in several processes.

Import workers (app.io.parallel) validate part of a file each and write the prepared rows into a scratch SQLite
file of their own (no journal, no fsync: it is thrown away). The project then copies them in with
INSERT ... SELECT, in C, inside the import's one transaction, with the same outcome as `write_violation_samples`:
unchanged samples (same content hash) are left alone, changed ones replaced.
"""
from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.store.project import ProjectBase
from app.store.samples import WriteCounts, prepare_violation_samples
from calibration.schemes.violations.records import ViolationSample

STAGE_SCHEMA = (
    "CREATE TABLE samples (id TEXT NOT NULL, text TEXT NOT NULL, context TEXT, split TEXT, meta TEXT, "
    "content_hash TEXT NOT NULL)",
    'CREATE TABLE violations (sample_id TEXT, checker TEXT, idx INTEGER, start INTEGER, "end" INTEGER, quote TEXT, '
    "rule TEXT, category TEXT, explanation TEXT, correction TEXT, grounding TEXT)",
    "CREATE TABLE units (sample_id TEXT, scheme TEXT, unit TEXT, n_gt INTEGER, n_pred INTEGER)",
)
_ALIAS = re.compile(r"^stage\d+$")


def stage_violation_samples(
    path: str | Path,
    samples: Sequence[ViolationSample],
    groundings: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    metas: Mapping[str, Mapping[str, Any] | None] | None = None,
) -> int:
    """Write the prepared rows of `samples` to a new scratch database at `path`; returns the number of samples."""
    sample_rows: list[tuple[Any, ...]] = []
    viol_rows: list[tuple[Any, ...]] = []
    unit_rows: list[tuple[Any, ...]] = []
    for _, _, row, vrows, urows in prepare_violation_samples(samples, groundings, metas):
        sample_rows.append(row)
        viol_rows.extend(vrows)
        unit_rows.extend(urows)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("BEGIN")
        for statement in STAGE_SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?)", sample_rows)
        conn.executemany("INSERT INTO violations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", viol_rows)
        conn.executemany("INSERT INTO units VALUES (?, ?, ?, ?, ?)", unit_rows)
        conn.execute("COMMIT")
    finally:
        conn.close()
    return len(sample_rows)


class StagingMixin(ProjectBase):
    @contextmanager
    def staged(self, paths: Sequence[str | Path]) -> Iterator[list[str]]:
        """Attach scratch databases (SQLite allows it only outside a transaction); yields their aliases."""
        if self.conn.in_transaction:
            raise RuntimeError("staged(): attach scratch databases before starting the transaction")
        aliases: list[str] = []
        try:
            for i, path in enumerate(paths):
                alias = f"stage{i}"
                self.conn.execute("ATTACH DATABASE ? AS " + alias, (str(path),))
                aliases.append(alias)
            yield aliases
        finally:
            for alias in aliases:
                self.conn.execute("DETACH DATABASE " + alias)

    def write_staged_violation_samples(self, alias: str, dataset_id: int | None = None) -> WriteCounts:
        """Copy one attached scratch database in; same rules as `write_violation_samples`."""
        if not _ALIAS.match(alias):
            raise ValueError(f"not a staging alias: {alias!r}")
        counts = WriteCounts()
        with self.transaction() as c:
            clash = c.execute(
                f"SELECT st.id, s.scheme FROM {alias}.samples st JOIN main.samples s ON s.id = st.id "
                "WHERE s.scheme != 'violations' LIMIT 1"
            ).fetchone()
            if clash is not None:
                raise ValueError(f"sample {clash[0]!r} already exists as a {clash[1]} sample")
            c.execute("CREATE TEMP TABLE IF NOT EXISTS stage_todo (id TEXT PRIMARY KEY, existed INTEGER NOT NULL)")
            c.execute("DELETE FROM temp.stage_todo")
            c.execute(
                f"INSERT INTO temp.stage_todo SELECT st.id, s.id IS NOT NULL FROM {alias}.samples st "
                "LEFT JOIN main.samples s ON s.id = st.id WHERE s.content_hash IS NOT st.content_hash"
            )
            total = int(c.execute(f"SELECT COUNT(*) FROM {alias}.samples").fetchone()[0])
            counts.updated = int(c.execute("SELECT COUNT(*) FROM temp.stage_todo WHERE existed").fetchone()[0])
            counts.added = int(c.execute("SELECT COUNT(*) FROM temp.stage_todo WHERE NOT existed").fetchone()[0])
            counts.unchanged = total - counts.added - counts.updated
            if counts.updated:
                for table in ("violations", "units"):
                    c.execute(f"DELETE FROM main.{table} WHERE sample_id IN (SELECT id FROM temp.stage_todo WHERE existed)")
            c.execute(
                "INSERT INTO main.samples (id, scheme, dataset_id, text, context, split, meta, content_hash) "
                f"SELECT st.id, 'violations', ?, st.text, st.context, st.split, st.meta, st.content_hash FROM {alias}.samples st "
                "WHERE st.id IN (SELECT id FROM temp.stage_todo) ORDER BY st.rowid "
                "ON CONFLICT(id) DO UPDATE SET dataset_id=excluded.dataset_id, text=excluded.text, "
                "context=excluded.context, split=excluded.split, meta=excluded.meta, content_hash=excluded.content_hash",
                (dataset_id,),
            )
            c.execute(
                'INSERT INTO main.violations (sample_id, checker, idx, start, "end", quote, rule, category, explanation, '
                f"correction, grounding) SELECT * FROM {alias}.violations WHERE sample_id IN (SELECT id FROM temp.stage_todo) "
                "ORDER BY rowid"
            )
            c.execute(
                f"INSERT INTO main.units (sample_id, scheme, unit, n_gt, n_pred) SELECT * FROM {alias}.units "
                "WHERE sample_id IN (SELECT id FROM temp.stage_todo) ORDER BY rowid"
            )
            c.execute("DELETE FROM temp.stage_todo")
        return counts
