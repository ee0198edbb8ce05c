"""Schema migrations, applied in order on open and recorded in the `migrations` table.

Never edit a released migration: add a new one. Each runs inside one transaction with the version bump.
"""
from __future__ import annotations

import sqlite3
from collections.abc import Callable

APPLICATION_ID = 0x436F6E63  # "Conc": marks the file as a Concord project (PRAGMA application_id)

V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE datasets (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, path TEXT, sha256 TEXT, n_records INTEGER, imported_at TEXT
);
CREATE TABLE samples (
    id TEXT PRIMARY KEY, scheme TEXT NOT NULL CHECK (scheme IN ('violations', 'rubric')),
    dataset_id INTEGER REFERENCES datasets(id), text TEXT NOT NULL, question TEXT, context TEXT, split TEXT,
    meta TEXT, content_hash TEXT NOT NULL
);
CREATE TABLE violations (
    id INTEGER PRIMARY KEY, sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    checker TEXT NOT NULL, idx INTEGER NOT NULL, start INTEGER, "end" INTEGER, quote TEXT, rule TEXT NOT NULL,
    category TEXT, explanation TEXT, correction TEXT, grounding TEXT NOT NULL,
    UNIQUE (sample_id, checker, idx)
);
CREATE INDEX violations_checker ON violations(checker);
CREATE TABLE traits (name TEXT PRIMARY KEY, definition TEXT NOT NULL);
CREATE TABLE units (
    id INTEGER PRIMARY KEY, sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    scheme TEXT NOT NULL, unit TEXT NOT NULL, n_gt INTEGER NOT NULL DEFAULT 0, n_pred INTEGER NOT NULL DEFAULT 0,
    UNIQUE (sample_id, unit)
);
CREATE INDEX units_unit ON units(unit);
CREATE TABLE bucket_assignments (
    sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE, trait TEXT NOT NULL REFERENCES traits(name),
    source TEXT NOT NULL, buckets TEXT, error TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (sample_id, trait, source)
);
CREATE TABLE annotators (name TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE events (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts TEXT NOT NULL, annotator TEXT NOT NULL REFERENCES annotators(name),
    sample_id TEXT NOT NULL REFERENCES samples(id), unit TEXT NOT NULL, kind TEXT NOT NULL,
    before TEXT, after TEXT, command TEXT, origin TEXT NOT NULL DEFAULT 'app'
);
CREATE INDEX events_target ON events(sample_id, unit, kind);
CREATE TABLE match_configs (
    name TEXT NOT NULL, version TEXT NOT NULL, config TEXT NOT NULL, origin TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (name, version)
);
CREATE TABLE calibration_runs (
    id INTEGER PRIMARY KEY, created_at TEXT NOT NULL, objective TEXT NOT NULL, params TEXT NOT NULL,
    result TEXT NOT NULL, cv_results BLOB
);
CREATE TABLE splits (
    name TEXT NOT NULL, version TEXT NOT NULL, created_at TEXT NOT NULL, content_sha256 TEXT NOT NULL,
    manifest TEXT NOT NULL, path TEXT, PRIMARY KEY (name, version)
);
CREATE TABLE embeddings (
    namespace TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, vector BLOB NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
CREATE TABLE llm_cache (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, request TEXT NOT NULL, response TEXT NOT NULL, created_at TEXT NOT NULL
);
"""

# v2: the current label of every target as a table maintained with each event (derived; rebuildable from
# events), time spent per sample, and cached machine scores per match config for the sample list.
V2 = """
CREATE TABLE labels (
    sample_id TEXT NOT NULL, unit TEXT NOT NULL, kind TEXT NOT NULL, value TEXT, event_id INTEGER NOT NULL,
    annotator TEXT NOT NULL, ts TEXT NOT NULL, PRIMARY KEY (sample_id, unit, kind)
);
CREATE INDEX labels_kind ON labels(kind, unit);
INSERT INTO labels (sample_id, unit, kind, value, event_id, annotator, ts)
    SELECT e.sample_id, e.unit, e.kind, e.after, e.id, e.annotator, e.ts FROM events e
    WHERE e.id = (SELECT MAX(id) FROM events x WHERE x.sample_id = e.sample_id AND x.unit = e.unit AND x.kind = e.kind);
CREATE TABLE work_log (
    id INTEGER PRIMARY KEY, annotator TEXT NOT NULL, sample_id TEXT NOT NULL, unit TEXT NOT NULL,
    seconds REAL NOT NULL, ts TEXT NOT NULL
);
CREATE TABLE machine_scores (
    config_ref TEXT NOT NULL, unit_id INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
    tp INTEGER NOT NULL, fp INTEGER NOT NULL, fn INTEGER NOT NULL, f1 REAL NOT NULL,
    PRIMARY KEY (config_ref, unit_id)
);
"""

Migration = Callable[[sqlite3.Connection], None]


def _script(sql: str) -> Migration:
    def run(conn: sqlite3.Connection) -> None:
        for statement in sql.split(";\n"):
            if statement.strip():
                conn.execute(statement)

    return run


MIGRATIONS: list[tuple[int, str, Migration]] = [
    (1, "initial schema", _script(V1)),
    (2, "derived labels, work log, machine scores", _script(V2)),
]
LATEST = MIGRATIONS[-1][0]

# v3: schemes beyond violations and rubric (issue #11). Samples hold a generic JSON payload beside their searchable
# text, with no CHECK on the scheme; machine labels of every scheme in one table (bucket_assignments moved in); unit
# figures as JSON (`units.summary`, `machine_scores.figures` with the list's headline `score`); labels kept per
# annotator with the resolved one marked (app/store/resolution.py). Tables are rebuilt (create, copy, drop, rename)
# with foreign keys off (see ProjectBase._migrate); rowids and unit ids are kept, so nothing that refers to them moves.
V3 = """
CREATE TABLE samples_v3 (
    id TEXT PRIMARY KEY, scheme TEXT NOT NULL, dataset_id INTEGER REFERENCES datasets(id), text TEXT NOT NULL,
    payload TEXT NOT NULL DEFAULT '{}', split TEXT, meta TEXT, content_hash TEXT NOT NULL
);
INSERT INTO samples_v3 (rowid, id, scheme, dataset_id, text, payload, split, meta, content_hash)
    SELECT rowid, id, scheme, dataset_id, text, json_patch('{}', json_object('question', question, 'context', context)),
           split, meta, content_hash FROM samples ORDER BY rowid;
DROP TABLE samples;
ALTER TABLE samples_v3 RENAME TO samples;
CREATE TABLE units_v3 (
    id INTEGER PRIMARY KEY, sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
    scheme TEXT NOT NULL, unit TEXT NOT NULL, summary TEXT NOT NULL DEFAULT '{}',
    UNIQUE (sample_id, unit)
);
INSERT INTO units_v3 (id, sample_id, scheme, unit, summary)
    SELECT u.id, u.sample_id, u.scheme, u.unit,
           CASE WHEN t.definition IS NULL THEN json_object('n_gt', u.n_gt, 'n_pred', u.n_pred)
                ELSE json_object('mode', COALESCE(json_extract(t.definition, '$.evaluation_mode'), 'tp_only'),
                                 'n_gt', u.n_gt, 'n_pred', u.n_pred) END
    FROM units u LEFT JOIN traits t ON u.scheme = 'rubric' AND t.name = u.unit ORDER BY u.id;
DROP TABLE units;
ALTER TABLE units_v3 RENAME TO units;
CREATE INDEX units_unit ON units(unit);
CREATE TABLE machine_labels (
    sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE, unit TEXT NOT NULL, source TEXT NOT NULL,
    value TEXT, error TEXT, created_at TEXT NOT NULL, PRIMARY KEY (sample_id, unit, source)
);
INSERT INTO machine_labels (sample_id, unit, source, value, error, created_at)
    SELECT sample_id, trait, source, buckets, error, created_at FROM bucket_assignments;
DROP TABLE bucket_assignments;
CREATE TABLE machine_scores_v3 (
    config_ref TEXT NOT NULL, unit_id INTEGER NOT NULL REFERENCES units(id) ON DELETE CASCADE,
    score REAL, figures TEXT NOT NULL, PRIMARY KEY (config_ref, unit_id)
);
INSERT INTO machine_scores_v3 (config_ref, unit_id, score, figures)
    SELECT config_ref, unit_id, f1, json_object('tp', tp, 'fp', fp, 'fn', fn, 'f1', f1) FROM machine_scores;
DROP TABLE machine_scores;
ALTER TABLE machine_scores_v3 RENAME TO machine_scores;
DROP TABLE labels;
CREATE TABLE labels (
    sample_id TEXT NOT NULL, unit TEXT NOT NULL, kind TEXT NOT NULL, annotator TEXT NOT NULL, value TEXT,
    event_id INTEGER NOT NULL, ts TEXT NOT NULL, adjudicated INTEGER NOT NULL DEFAULT 0,
    resolved INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (sample_id, unit, kind, annotator)
);
CREATE INDEX labels_kind ON labels(kind, unit);
CREATE UNIQUE INDEX labels_resolved ON labels(sample_id, unit, kind) WHERE resolved = 1;
INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts, adjudicated)
    SELECT e.sample_id, e.unit, e.kind, e.annotator, e.after, e.id, e.ts, e.origin = 'adjudicate'
    FROM events e JOIN (SELECT MAX(id) AS id FROM events GROUP BY sample_id, unit, kind, annotator) last ON last.id = e.id
"""


def _v3(conn: sqlite3.Connection) -> None:
    from app.store.resolution import resolve_all

    _script(V3)(conn)
    resolve_all(conn)


MIGRATIONS.append((3, "generic samples and machine labels, labels per annotator", _v3))
LATEST = MIGRATIONS[-1][0]

# v4: several annotators (issue #15). `assignments` says who labels which unit (concord assign-work); events get a
# `uid` so a merge of project files (app/store/merge.py) recognises an event it already holds. Old events get a
# deterministic uid from their content (the same formula `record` uses for new ones), so two copies of one project
# backfill the same uids.
V4 = """
CREATE TABLE assignments (
    sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE, unit TEXT NOT NULL,
    annotator TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (annotator, sample_id, unit)
);
CREATE INDEX assignments_unit ON assignments(sample_id, unit);
ALTER TABLE events ADD COLUMN uid TEXT;
CREATE INDEX events_uid ON events(uid)
"""


def event_uid(ts: str, annotator: str, sample_id: str, unit: str, kind: str, after: str | None, command: str | None,
              origin: str) -> str:
    """An event's identity across project files: a hash of what it says and when (its rowid differs per file)."""
    import hashlib

    key = "\x1f".join(("" if x is None else str(x)) for x in (ts, annotator, sample_id, unit, kind, after, command, origin))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def _v4(conn: sqlite3.Connection) -> None:
    _script(V4)(conn)
    rows = conn.execute("SELECT id, ts, annotator, sample_id, unit, kind, after, command, origin FROM events").fetchall()
    conn.executemany("UPDATE events SET uid = ? WHERE id = ?", [(event_uid(*r[1:]), r[0]) for r in rows])


MIGRATIONS.append((4, "work assignments, event uids", _v4))
LATEST = MIGRATIONS[-1][0]

# v5: imports at scale (issue #18). `samples.line_hash` is a hash of the raw JSONL line a sample was imported from
# (app.store.linehash), so a re-import recognises an unchanged line without parsing it; the index covers the lookup.
# `row_counts` holds the row counts `concord status` prints (samples per scheme, units per scheme and unit,
# violations per checker and ungrounded ones), kept by the writers in the same transactions (app/store/counts.py)
# and rebuildable from the tables (`rebuild_counts`).
V5 = """
ALTER TABLE samples ADD COLUMN line_hash BLOB;
CREATE INDEX samples_line_hash ON samples(line_hash, id, scheme) WHERE line_hash IS NOT NULL;
CREATE TABLE row_counts (
    tbl TEXT NOT NULL, scheme TEXT NOT NULL, key TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tbl, scheme, key)
) WITHOUT ROWID
"""


def _v5(conn: sqlite3.Connection) -> None:
    from app.store.counts import rebuild_counts

    _script(V5)(conn)
    rebuild_counts(conn)


MIGRATIONS.append((5, "raw line hashes of imported samples, row counts for status", _v5))
LATEST = MIGRATIONS[-1][0]

# v6: guideline versions (issue #29 item 1). `guidelines` holds every version of each scheme's guideline as its parts
# (the unit of change a scheme declares: a rule, a trait, a category; `position` keeps the file's order, so the
# parts joined give the text back); `events.guideline_version` is the version of the event's scheme in force when
# the event was recorded. Events recorded before this migration keep NULL, read as "before versioning": no guideline
# was stored then, and inventing a version 1 from text the project never held would claim more than is known (the
# re-queue compares such labels with the first version a project stores: app/services/guidelines.py).
V6 = """
CREATE TABLE guidelines (
    scheme TEXT NOT NULL, version INTEGER NOT NULL, part TEXT NOT NULL, position INTEGER NOT NULL,
    text TEXT NOT NULL, created_at TEXT NOT NULL, PRIMARY KEY (scheme, version, part)
);
ALTER TABLE events ADD COLUMN guideline_version INTEGER
"""

MIGRATIONS.append((6, "guideline versions, the version in force on each event", _script(V6)))

# v7: blind mode without anchoring (issue #27). `events.machine_visible` says whether the machine's labels were on
# screen when a human made the event (1 shown, 0 hidden; NULL: not recorded, as for events older than v7 and
# imported labels). `reveals` holds the units whose machine labels an annotator uncovered by committing their own
# decision (app/store/reveals.py). Independent of every other migration's content: one new column, one new table.
V7 = """
ALTER TABLE events ADD COLUMN machine_visible INTEGER;
CREATE TABLE reveals (
    annotator TEXT NOT NULL, sample_id TEXT NOT NULL REFERENCES samples(id) ON DELETE CASCADE, unit TEXT NOT NULL,
    ts TEXT NOT NULL, PRIMARY KEY (annotator, sample_id, unit)
) WITHOUT ROWID
"""


def _v7(conn: sqlite3.Connection) -> None:
    _script(V7)(conn)


MIGRATIONS.append((7, "machine visibility of events, reveals after an annotator's own decision", _v7))
LATEST = MIGRATIONS[-1][0]

# v8: the signals behind adaptive overlap's choices (issue #29 item 3). `assignments.stratum` is, for an annotator
# that `assign-work --overlap adaptive` added to a unit beyond its first, the unit's signals at that moment as JSON
# (`stratum`: first label, the machine's relation to it, near the boundary; `confidence`, `labels`, `reasons`), so
# that `concord agreement` can post-stratify the pairs (calibration.overlap.stratified_kappa) by what the choice
# rested on. NULL for every other assignment, and for those made before v8 (their signals were not kept).
V8 = """
ALTER TABLE assignments ADD COLUMN stratum TEXT
"""


def _v8(conn: sqlite3.Connection) -> None:
    """The column, unless a file rolled back to an older version by hand (tests do) still has it."""
    if "stratum" not in {r[1] for r in conn.execute("PRAGMA table_info(assignments)")}:
        _script(V8)(conn)


MIGRATIONS.append((8, "the signals adaptive overlap's choices rested on", _v8))
LATEST = MIGRATIONS[-1][0]
