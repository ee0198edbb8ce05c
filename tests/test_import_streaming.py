"""Streamed JSONL imports (issue #18): all or nothing across chunks, unchanged lines skipped unparsed, and the row
counts `concord status` reads staying equal to a recount through imports, re-imports, labels and merges."""
from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.io import parallel
from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Change, Project
from app.store.counts import rebuild_counts
from tests.jsonl_files import write_jsonl as write
from tests.jsonl_files import small_chunks  # noqa: F401  (autouse: a few records per chunk)

A = "naive@1.0|gpt-4o"
TEXT = "Limited stock! Our tea cures colds and costs less than anywhere else."


def record(i: int, rule: str = "No fake scarcity", quote_only: bool = False) -> dict[str, Any]:
    gt = {"start": 0, "end": 13, "quote": "Limited stock", "rule": rule}
    at = TEXT.index("cures colds")
    pred = {"quote": "cures colds", "rule": "Medical"} if quote_only else {"start": at, "end": at + 11,
                                                                          "quote": "cures colds", "rule": "Medical"}
    return {"id": f"s{i:04d}", "text": TEXT, "ground_truth": [gt], "predictions": {A: [pred] if i % 3 else []}}





def recount(p: Project) -> dict[tuple[str, str, str], int]:
    """The counts rebuilt from the tables, on a copy (the project's own stay as the writers left them)."""
    conn = sqlite3.connect(":memory:")
    p.conn.backup(conn)
    rebuild_counts(conn)
    return {(t, s, k): n for t, s, k, n in conn.execute("SELECT * FROM row_counts")}


def stored(p: Project) -> dict[tuple[str, str, str], int]:
    return {(t, s, k): n for t, s, k, n in p.conn.execute("SELECT * FROM row_counts")}


def labeled_by_scan(p: Project) -> dict[tuple[str, str], tuple[int, int, int]]:
    """(scheme, unit) -> (units, labeled, with status) by the full join status used before row counts."""
    return {(s, u): (n, lab, st) for s, u, n, lab, st in p.conn.execute(
        "SELECT u.scheme, u.unit, COUNT(*),"
        " SUM(EXISTS (SELECT 1 FROM labels l WHERE l.sample_id = u.sample_id AND l.unit = u.unit AND l.resolved = 1"
        "   AND l.value IS NOT NULL AND l.kind NOT IN ('status', 'note'))),"
        " SUM(EXISTS (SELECT 1 FROM labels l WHERE l.sample_id = u.sample_id AND l.unit = u.unit AND l.resolved = 1"
        "   AND l.value IS NOT NULL AND l.kind = 'status'))"
        " FROM units u GROUP BY u.scheme, u.unit")}


def assert_counts_right(p: Project) -> None:
    assert stored(p) == recount(p)
    status = p.counts.status_counts()
    assert {(u["scheme"], u["unit"]): (u["total"], u["labeled"] or 0, u["with_status"] or 0)
            for u in status["units"]} == labeled_by_scan(p)
    assert status["samples"] == dict(p.conn.execute("SELECT scheme, COUNT(*) FROM samples GROUP BY scheme").fetchall())
    own = status["scheme_counts"]["violations"]
    assert own["ground_truth_violations"] == p.scalar("SELECT COUNT(*) FROM violations WHERE checker = ''")
    assert own["ungrounded_violations"] == p.scalar("SELECT COUNT(*) FROM violations WHERE grounding = 'ungrounded'")


@pytest.mark.parametrize("workers", [1, 2])
def test_an_error_in_the_last_chunk_leaves_the_project_unchanged_and_every_error_is_reported(
        tmp_path: Path, workers: int) -> None:
    rows: list[Any] = [record(i) for i in range(60)]
    rows[1] = "{broken"  # first chunk
    rows[59]["ground_truth"][0]["end"] = 999  # last chunk
    rows[58]["id"] = "s0010"  # duplicate across chunks
    bad = write(tmp_path / "bad.jsonl", rows)
    assert len(list(parallel.chunks(bad))) > 5
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, write(tmp_path / "first.jsonl", [record(i, rule="Old rule") for i in range(100, 140)]))
        before = (p.table_counts(), stored(p), p.counts.status_counts())
        with pytest.raises(ImportErrors) as exc:
            import_file(p, bad, workers=workers)
        lines = [str(e).split(": ")[0].rsplit(":", 1)[1] for e in exc.value.problems]
        assert lines == ["2", "59", "60"]
        assert (p.table_counts(), stored(p), p.counts.status_counts()) == before
        assert p.samples.dataset("bad") is None
        # only the last line wrong: the chunks before it were written inside the transaction, then rolled back
        rows = [record(i) for i in range(60)]
        rows[59]["ground_truth"][0]["end"] = 999
        with pytest.raises(ImportErrors) as exc:
            import_file(p, write(bad, rows), workers=workers)
        assert [str(e).split(": ")[0].rsplit(":", 1)[1] for e in exc.value.problems] == ["60"]
        assert (p.table_counts(), stored(p), p.counts.status_counts()) == before


def test_unchanged_lines_are_not_parsed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    real = parallel.parse_line

    def counting(raw: bytes, name: str, number: int, *args: Any) -> Any:
        calls.append(number)
        return real(raw, name, number, *args)

    monkeypatch.setattr(parallel, "parse_line", counting)
    rows = [record(i) for i in range(30)]
    data = write(tmp_path / "d.jsonl", rows)
    with Project.create(tmp_path / "p.concord") as p:
        first = import_file(p, data, workers=1)
        assert len(calls) == 30 and first.counts["violations"].added == 30
        calls.clear()
        again = import_file(p, data, workers=1)
        assert calls == [] and not again.changed and again.counts["violations"].unchanged == 30
        rows[7] = record(7, rule="New rule")
        rows.append(record(5))  # a verbatim copy of line 6: still a duplicate id, though never parsed
        with pytest.raises(ImportErrors) as exc:
            import_file(p, write(data, rows), workers=1)
        assert calls == [8] and [str(e) for e in exc.value.problems] == [
            f"{data}:31: id: duplicate id 's0005' (first used at {data}:6)"]
        calls.clear()
        changed = import_file(p, write(data, rows[:30]), workers=1)
        assert calls == [8]
        assert (changed.counts["violations"].added, changed.counts["violations"].updated,
                changed.counts["violations"].unchanged) == (0, 1, 29)
        assert p.store("violations").violation_sample("s0007").ground_truth[0].rule == "New rule"  # type: ignore[union-attr]
        assert_counts_right(p)


def test_same_samples_from_reordered_keys_get_the_new_line_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [record(i) for i in range(10)]
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, write(tmp_path / "a.jsonl", rows))
        reordered = write(tmp_path / "b.jsonl", [json.dumps(dict(reversed(list(r.items())))) for r in rows])
        assert not import_file(p, reordered).changed  # parsed: same content, new raw lines
        calls: list[int] = []
        real = parallel.parse_line
        monkeypatch.setattr(parallel, "parse_line", lambda raw, name, n, *a: calls.append(n) or real(raw, name, n, *a))
        assert not import_file(p, reordered).changed and calls == []


def test_row_counts_follow_imports_labels_machine_units_and_merges(tmp_path: Path) -> None:
    rubric = {"id": "r1", "question": "Price?", "response": "It costs 3 euros.",
              "traits": [{"name": "price", "metrics": ["recall"], "tp_instructions": ["States the price"]}],
              "buckets": {"price": {"tp": ["3 euros"]}}}
    rows: list[Any] = [record(i, quote_only=i % 4 == 0) for i in range(40)] + [rubric]
    path = tmp_path / "p.concord"
    with Project.create(path) as p:
        import_file(p, write(tmp_path / "d.jsonl", rows), workers=2)
        assert_counts_right(p)
        rows[3] = record(3, rule="Changed", quote_only=True)
        rows[4]["predictions"] = {}
        rows.append(record(77))
        import_file(p, write(tmp_path / "d.jsonl", rows), workers=1)
        assert_counts_right(p)
        p.decisions.record("ana", [Change("s0001", A, "matches", [[0, 0]]), Change("s0001", A, "status", "accepted"),
                         Change("s0002", "", "note", "later"), Change("r1", "price", "status", "skipped")])
        p.samples.save_machine_unit("s0005", "llm@1|gpt", "llm", {"x": 1}, summary={"n": 1})
        p.samples.save_machine_unit("s0005", "llm@1|gpt", "llm", {"x": 2}, summary={"n": 2})  # same unit again
        assert_counts_right(p)
        assert {(u["unit"], u["labeled"], u["with_status"]) for u in p.counts.status_counts()["units"]} >= {
            (A, 1, 1), ("price", 0, 1), ("llm@1|gpt", 0, 0)}
    other = tmp_path / "other.concord"
    shutil.copy(path, other)
    with Project.open(other) as q:
        q.decisions.record("ben", [Change("s0006", A, "matches", [])])
    from app.store.merge import merge

    merge(tmp_path / "merged.concord", [path, other])
    with Project.open(tmp_path / "merged.concord") as m:
        assert_counts_right(m)
        assert any(u["unit"] == A and u["labeled"] == 2 for u in m.counts.status_counts()["units"])


def test_recovery_recounts_the_rows(tmp_path: Path) -> None:
    from app.store.recover import recover

    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, write(tmp_path / "d.jsonl", [record(i) for i in range(12)]))
        with p.transaction() as c:
            c.execute("UPDATE row_counts SET n = 999")  # counts that no longer match the rows
    recover(tmp_path / "p.concord", tmp_path / "r.concord")
    with Project.open(tmp_path / "r.concord") as r:
        assert stored(r)[("samples", "violations", "")] == 12
        assert_counts_right(r)
