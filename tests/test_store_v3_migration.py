"""A project file made by the schema-2 release (tests/data/release_v2.concord: the demo plus a second and third
annotator, LLM bucket assignments from another source, a failed one, machine scores) opens, migrates to schema 3
and loses nothing: every row is counted and every value compared with what the old tables held."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from app.io.imports import import_file
from app.io.demo import demo_dir
from app.store import SCHEMA_VERSION, Change, Project
from app.store.schema import MIGRATIONS

RELEASE_V2 = Path(__file__).parent / "data" / "release_v2.concord"
CH = "prompt-baseline@1.1.0|gpt-3.5-turbo-0613"


def old_copy(tmp_path: Path) -> Path:
    """A copy of the fixture made with SQLite's backup API (the checked-in file is never opened for writing)."""
    dest = tmp_path / "old.concord"
    src = sqlite3.connect(f"{RELEASE_V2.resolve().as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(dest)
    src.backup(dst)
    src.close()
    dst.close()
    return dest


def rows(conn: sqlite3.Connection, sql: str) -> list[tuple]:
    return sorted(conn.execute(sql).fetchall(), key=repr)


def test_release_v2_file_migrates_with_nothing_lost(tmp_path: Path) -> None:
    path = old_copy(tmp_path)
    old = sqlite3.connect(path)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 2
    samples = rows(old, "SELECT rowid, id, scheme, dataset_id, text, question, context, split, meta, content_hash FROM samples")
    violations = rows(old, "SELECT * FROM violations")
    units = rows(old, "SELECT id, sample_id, scheme, unit, n_gt, n_pred FROM units")
    buckets = rows(old, "SELECT sample_id, trait, source, buckets, error, created_at FROM bucket_assignments")
    scores = rows(old, "SELECT config_ref, unit_id, tp, fp, fn, f1 FROM machine_scores")
    events = rows(old, "SELECT * FROM events")
    newest = {(s, u, k): v for s, u, k, v in old.execute("SELECT sample_id, unit, kind, value FROM labels")}
    other = {t: rows(old, f"SELECT * FROM {t}") for t in ("traits", "annotators", "work_log", "match_configs", "datasets", "meta")}
    old.close()
    assert len(samples) == 80 and {s[2] for s in samples} == {"violations", "rubric"}
    assert len(buckets) == 43 and any(b[4] == "timeout" for b in buckets) and len(scores) == 2

    with Project.open(path) as p:
        assert p.schema_version == SCHEMA_VERSION == MIGRATIONS[-1][0]
        c = p.conn
        # samples: every row and rowid, question/context moved into the payload
        got = rows(c, "SELECT rowid, id, scheme, dataset_id, text, json_extract(payload, '$.question'), "
                      "json_extract(payload, '$.context'), split, meta, content_hash FROM samples")
        assert got == samples
        assert rows(c, "SELECT * FROM violations") == violations
        # units: same ids; n_gt/n_pred in the summary, rubric units with their trait's mode
        got_units = rows(c, "SELECT id, sample_id, scheme, unit, json_extract(summary, '$.n_gt'), "
                            "json_extract(summary, '$.n_pred') FROM units")
        assert got_units == units
        modes = {json.loads(s)["mode"] for (s,) in c.execute("SELECT summary FROM units WHERE scheme = 'rubric'")}
        assert modes <= {"tp_only", "full_matrix"} and modes
        assert rows(c, "SELECT sample_id, unit, source, value, error, created_at FROM machine_labels") == buckets
        assert "bucket_assignments" not in p.db.table_names()
        got_scores = rows(c, "SELECT config_ref, unit_id, json_extract(figures, '$.tp'), json_extract(figures, '$.fp'), "
                             "json_extract(figures, '$.fn'), json_extract(figures, '$.f1') FROM machine_scores")
        assert got_scores == scores
        assert [r[3] for r in c.execute("SELECT * FROM machine_scores ORDER BY unit_id")] == [
            '{"tp":1,"fp":2,"fn":3,"f1":0.25}', '{"tp":0,"fp":0,"fn":1,"f1":0.0}']
        # the audit trail is untouched (v4 adds a uid to every event)
        assert rows(c, "SELECT id, ts, annotator, sample_id, unit, kind, before, after, command, origin FROM events") == events
        assert {r[0] for r in c.execute("SELECT guideline_version FROM events")} == {None}  # before versioning
        for t, before in other.items():
            assert rows(c, f"SELECT * FROM {t}") == before, t
        # labels: one per annotator and target; the resolved one is the old newest wherever the policy agrees
        n_targets = len(newest)
        assert p.scalar("SELECT COUNT(*) FROM labels WHERE resolved = 1") == n_targets
        assert p.scalar("SELECT COUNT(*) FROM labels") == p.scalar(
            "SELECT COUNT(*) FROM (SELECT DISTINCT sample_id, unit, kind, annotator FROM events)")
        resolved = {(s, u, k): v for s, u, k, v in c.execute("SELECT sample_id, unit, kind, value FROM labels WHERE resolved = 1")}
        assert resolved == newest
        # hk-001 / prompt-baseline: alice and carol say [[2, 1]], bob []; status: alice accepted, bob corrected (tie)
        assert p.decisions.annotator_labels("hk-001", CH, "matches") == {"alice": [[2, 1]], "bob": [], "carol": [[2, 1]]}
        assert p.decisions.current("hk-001", CH, "matches") == [[2, 1]]
        assert p.decisions.current("hk-001", CH, "status") == "corrected"
        assert p.decisions.current("hk-001", CH, "status", annotator="alice") == "accepted"
        # the readers the app uses still work on the migrated file
        assert p.store("violations").human_matches()[("hk-001", CH)] == {(2, 1)}
        u = p.store("rubric").rubric_units()[0]
        assert p.store("rubric").human_buckets()[(u["sample_id"], u["trait"])]["tp"] == ["x"]
        assert p.store("rubric").bucket_assignment(u["sample_id"], u["trait"], "gpt-4o@1")["buckets"]["fn"] == ["b"]  # type: ignore[index]
        assert p.store("rubric").rubric_sample(u["sample_id"])["question"]  # type: ignore[index]
        assert p.store("violations").violation_sample("hk-001").context  # type: ignore[union-attr]
        page = p.units.unit_page(order_by="n_pred", descending=True, limit=5)
        assert page[0]["n_pred"] == max(r[5] for r in units)
        assert p.units.count_units() == len(units)
        labels_before = rows(c, "SELECT * FROM labels")
        p.decisions.rebuild_labels()
        assert rows(c, "SELECT * FROM labels") == labels_before  # the migration equals a derivation from events
        # re-importing the release's files changes nothing (content hashes are unchanged), except samples whose fuzzy
        # quotes a later grounding fix places differently
        assert not import_file(p, demo_dir() / "rubric.jsonl").changed
        fuzzy = {sid for sid in p.samples.sample_rows("violations")
                 if any("fuzzy" in g for g in p.store("violations").violation_groundings(sid).values())}
        hashes = dict(c.execute("SELECT id, content_hash FROM samples"))
        r = import_file(p, demo_dir() / "violations.jsonl")
        changed = {sid for sid, h in c.execute("SELECT id, content_hash FROM samples") if hashes[sid] != h}
        assert r.counts["violations"].added == 0 and changed <= fuzzy and r.counts["violations"].unchanged >= 60 - len(fuzzy)
        # and it keeps working: a new label by a fourth annotator
        assert p.decisions.record("dan", [Change("hk-001", CH, "matches", [])])
        assert p.decisions.current("hk-001", CH, "matches") == []  # alice and carol against bob and dan: the newest breaks the tie
