"""An older project file is migrated on open: schema 1 data (with events) gains the derived labels of schema 2
(and the per-annotator labels of schema 3)."""
from __future__ import annotations

from pathlib import Path

from app.store import SCHEMA_VERSION, Project
from app.store.schema import MIGRATIONS

CHECKER = "naive@1.0|gpt-3.5-turbo"


def v1_project(path: Path) -> None:
    """Build a schema-1 file the way Concord 1 did: samples, units and events, no labels table. (Rows are written
    with SQL in the schema-1 layout: today's store writes today's layout.)"""
    with Project(path, create=True, migrate_to=1) as p:
        assert p.schema_version == 1
        assert "labels" not in p.db.table_names()
        with p.transaction() as c:
            c.execute("INSERT INTO samples (id, scheme, text, content_hash) VALUES ('s1', 'violations', ?, 'h1')",
                      ("Buy now, best price ever!",))
            c.executemany(
                'INSERT INTO violations (sample_id, checker, idx, start, "end", quote, rule, grounding) '
                "VALUES ('s1', ?, ?, ?, ?, ?, ?, 'offsets')",
                [("", 0, 0, 7, "Buy now", "No pressure"), (CHECKER, 0, 0, 7, None, "Pressure"),
                 (CHECKER, 1, 9, 24, None, "Superlative")])
            c.execute("INSERT INTO units (sample_id, scheme, unit, n_gt, n_pred) VALUES ('s1', 'violations', ?, 1, 2)",
                      (CHECKER,))
            c.execute("INSERT INTO annotators VALUES ('ana', '2024-01-01T00:00:00+00:00')")
            rows = [
                ("2024-01-01T10:00:00+00:00", "s1", CHECKER, "matches", None, "[[0,1]]"),
                ("2024-01-01T10:01:00+00:00", "s1", CHECKER, "matches", "[[0,1]]", "[[0,0]]"),  # newest wins
                ("2024-01-01T10:01:00+00:00", "s1", CHECKER, "status", None, '"corrected"'),
                ("2024-01-01T10:02:00+00:00", "s1", "", "note", None, '"check the price claim"'),
            ]
            c.executemany("INSERT INTO events (ts, annotator, sample_id, unit, kind, before, after, origin) "
                          "VALUES (?, 'ana', ?, ?, ?, ?, ?, 'app')", rows)


def test_schema_1_is_migrated_on_open_with_labels_backfilled(tmp_path: Path) -> None:
    path = tmp_path / "old.concord"
    v1_project(path)
    with Project.open(path) as p:
        assert p.schema_version == SCHEMA_VERSION == MIGRATIONS[-1][0]
        assert [m["version"] for m in p.query("SELECT version FROM migrations ORDER BY version")] == [v for v, _, _ in MIGRATIONS]
        assert all(e["uid"] and len(e["uid"]) == 32 for e in p.decisions.events())  # v4 backfills event uids
        assert len(p.decisions.events()) == 4  # the audit trail is untouched
        assert p.decisions.current("s1", CHECKER, "matches") == [[0, 0]]
        assert p.decisions.current("s1", CHECKER, "status") == "corrected"
        assert p.decisions.current("s1", "", "note") == "check the price claim"
        assert p.store("violations").human_matches() == {("s1", CHECKER): {(0, 0)}}
        labels_before = p.decisions.sample_labels("s1")
        p.decisions.rebuild_labels()
        assert p.decisions.sample_labels("s1") == labels_before  # the backfill equals a derivation from the events
        # The migrated project works like a new one.
        p.decisions.record("ana", [])
        from app.store import Change

        ids = p.decisions.record("ben", [Change("s1", CHECKER, "matches", [[0, 1]])])
        # Two annotators who disagree: both labels are kept; the newest resolves the tie.
        assert len(ids) == 1 and p.decisions.current("s1", CHECKER, "matches") == [[0, 1]]
        assert p.decisions.annotator_labels("s1", CHECKER, "matches") == {"ana": [[0, 0]], "ben": [[0, 1]]}
        assert p.store("violations").violation_sample("s1").predictions[CHECKER][1].rule == "Superlative"  # type: ignore[union-attr]
    with Project.open(path) as p:  # opening again does not migrate again
        assert len(p.query("SELECT version FROM migrations")) == len(MIGRATIONS) and len(p.decisions.events()) == 5
