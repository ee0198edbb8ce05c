"""Bulk-import paths (issue #18): secondary indexes dropped and built again after a large import, stored line
hashes read all at once for a re-import, and chunk results compacted before they cross the pipe from a worker."""
from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import pytest

from app.io import imports, parallel
from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Project
from app.store.bulk import LineHashReader, line_hash
from calibration.schemes.violations.parse import PlainSample
from app.schemes.violations.store import VIOLATION_COLUMNS
from tests.jsonl_files import write_jsonl as write
from tests.jsonl_files import small_chunks  # noqa: F401  (autouse: a few records per chunk)

A, B = "naive@1.0|gpt-4o", "careful@2.0|gpt-4o"
TEXT = "Limited stock! Our tea cures colds and costs less than anywhere else."


def record(i: int, rule: str = "No fake scarcity") -> dict[str, Any]:
    at = TEXT.index("cures colds")
    pred = {"start": at, "end": at + 11, "quote": "cures colds", "rule": "Medical", "category": "health"}
    return {"id": f"s{i:04d}", "text": TEXT, "ground_truth": [{"start": 0, "end": 13, "quote": "Limited stock",
                                                               "rule": rule, "category": "pressure"}],
            "predictions": {A: [pred] if i % 3 else [], B: [pred, {"quote": "costs less", "rule": "Comparative"}]}}


RUBRIC = {"id": "r1", "question": "Price?", "response": "It costs 3 euros.",
          "traits": [{"name": "price", "metrics": ["recall"], "tp_instructions": ["States the price"]}],
          "buckets": {"price": {"tp": ["3 euros"]}}}





def schema(p: Project) -> list[tuple[Any, ...]]:
    return p.conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name").fetchall()


def rows(p: Project) -> dict[str, list[tuple[Any, ...]]]:
    return {t: p.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2, 3").fetchall()
            for t in ("samples", "violations", "units", "row_counts")}


@pytest.mark.parametrize("workers", [1, 2])
def test_indexes_built_after_a_large_import_leave_the_same_schema_and_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    data = write(tmp_path / "d.jsonl", [record(i) for i in range(40)] + [RUBRIC])
    out = {}
    for rebuild_min in (1, 10**9):  # rebuilt, and kept (updated row by row)
        monkeypatch.setattr(imports, "REBUILD_MIN", rebuild_min)
        with Project.create(tmp_path / f"{rebuild_min}.concord") as p:
            before = schema(p)
            import_file(p, data, workers=workers)
            assert schema(p) == before
            assert p.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            plan = p.conn.execute("EXPLAIN QUERY PLAN SELECT id FROM violations WHERE checker = ?", (A,)).fetchall()
            assert "violations_checker" in str(plan)  # the rebuilt index is there and used
            out[rebuild_min] = rows(p)
    assert out[1] == out[10**9]


def test_a_failed_large_import_rolls_the_dropped_indexes_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(imports, "REBUILD_MIN", 1)
    bad = [record(i) for i in range(30)]
    bad[29]["ground_truth"][0]["end"] = 999
    with Project.create(tmp_path / "p.concord") as p:
        before = schema(p)
        with pytest.raises(ImportErrors):
            import_file(p, write(tmp_path / "bad.jsonl", bad))
        assert schema(p) == before
        assert p.conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 0


def test_preloaded_hashes_answer_as_lookups_do(tmp_path: Path) -> None:
    lines = [json.dumps(r).encode() for r in [record(i) for i in range(12)] + [RUBRIC]]
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, write(tmp_path / "d.jsonl", [r.decode() for r in lines]))
    asked = [line_hash(raw) for raw in lines[::2]] + [line_hash(b'{"id": "new"}'), line_hash(lines[1] + b" ")]
    batched, preloaded = LineHashReader(tmp_path / "p.concord"), LineHashReader(tmp_path / "p.concord", preload=True)
    try:
        got = preloaded.known(asked)
        answers = {h: got[h] for h in asked if h in got}  # preloaded: every stored hash, looked into
        assert answers == batched.known(asked)
        assert answers[line_hash(lines[-1])] == ("r1", "rubric")
        assert answers[line_hash(lines[0])] == ("s0000", "violations")
        assert len(answers) == 7 and len(got) == len(lines)  # the two unknown lines are not there
    finally:
        batched.close()
        preloaded.close()


@pytest.mark.parametrize("preload_ratio", [0, 10**9])
def test_reimport_skips_unchanged_lines_and_writes_the_changed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, preload_ratio: int) -> None:
    """Hashes looked up chunk by chunk (ratio 0: never preloaded) or all read at once give the same counts."""
    monkeypatch.setattr(imports, "PRELOAD_RATIO", preload_ratio)
    parsed: list[int] = []
    real = parallel.parse_line
    monkeypatch.setattr(parallel, "parse_line", lambda raw, name, n, *a: parsed.append(n) or real(raw, name, n, *a))
    recs = [record(i) for i in range(30)] + [RUBRIC]
    data = write(tmp_path / "d.jsonl", recs)
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, data)
        parsed.clear()
        again = import_file(p, data)
        assert parsed == [] and not again.changed
        assert (again.counts["violations"].unchanged, again.counts["rubric"].unchanged) == (30, 1)
        recs[12] = record(12, rule="New rule")
        changed = import_file(p, write(data, recs))
        assert parsed == [13]
        assert (changed.counts["violations"].updated, changed.counts["violations"].unchanged) == (1, 29)
        assert changed.counts["rubric"].unchanged == 1
        assert p.store("violations").violation_sample("s0012").ground_truth[0].rule == "New rule"  # type: ignore[union-attr]


def test_worker_results_cross_the_pipe_unchanged_and_small(tmp_path: Path) -> None:
    data = write(tmp_path / "d.jsonl", [record(i) for i in range(20)] + [RUBRIC])
    result = parallel.run_part(parallel.Part(str(data), 0, data.stat().st_size, 1, None, {}))
    assert list(result.prepared) == ["violations", "rubric"]  # through the schemes' io adapters, registry order
    back = pickle.loads(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    assert back.prepared == result.prepared
    rows = result.prepared["violations"]
    # one object per distinct repeated value (checker, rule, ...), so pickle writes each once: smaller than the same
    # rows with a str object of their own per value, as the parser made them (the violation rows: flat)
    repeated = [x for i, x in enumerate(rows.violations) if i % len(VIOLATION_COLUMNS) in (1, 6, 7, 8, 9, 10)]  # checker, rule, ...
    assert len({id(x) for x in repeated}) == len(set(repeated)) < len(repeated)
    fresh = [(x + " ")[:-1] if type(x) is str else x for x in rows.violations]
    assert fresh == rows.violations
    assert (len(pickle.dumps(rows.violations, protocol=pickle.HIGHEST_PROTOCOL))
            < 0.8 * len(pickle.dumps(fresh, protocol=pickle.HIGHEST_PROTOCOL)))
    assert back.state.ids == result.state.ids and len(back.state.ids) == 21  # sent as line numbers, same locations
    assert back.state.ids["s0003"] == 4 and back.state.home == (str(data), "line")  # line 4 of the file


def test_while_workers_run_the_caller_only_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The caller parses the first chunk (it tells whether workers are worth starting), the worker every other one
    (the caller taking none while it waits); the outcome equals a single-process import."""
    monkeypatch.setattr(parallel, "TAKE_WHEN_IDLE", False)
    here: list[int] = []
    real = parallel.run_part
    monkeypatch.setattr(parallel, "run_part", lambda part, reader=None: here.append(part.first_line) or real(part, reader))
    data = write(tmp_path / "d.jsonl", [record(i) for i in range(40)] + [RUBRIC])
    assert len(list(parallel.chunks(data))) > 10
    with Project.create(tmp_path / "w2.concord") as p:
        report = import_file(p, data, workers=2)
        assert here == [1]
        assert (report.counts["violations"].added, report.counts["rubric"].added) == (40, 1)
        two = rows(p)
    with Project.create(tmp_path / "w1.concord") as p:
        import_file(p, data, workers=1)
        assert rows(p) == two


def test_the_caller_takes_chunks_while_it_waits_and_writes_in_file_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the answer it needs has not arrived, the caller does the next chunks itself (TAKE_AHEAD done and waiting
    at most); chunks are still written in file order, so the tables equal a single-process import's, and the worker
    still does its share."""
    here: list[int] = []
    real = parallel.run_part
    monkeypatch.setattr(parallel, "run_part", lambda part, reader=None: here.append(part.first_line) or real(part, reader))
    monkeypatch.setattr(parallel, "_ready", lambda answers: False)  # the worker is always behind
    held: list[int] = []
    take = parallel.Pipeline._take
    monkeypatch.setattr(parallel.Pipeline, "_take", lambda self: take(self) and not held.append(self.taken))
    recs = [record(i) for i in range(60)] + [RUBRIC]
    data = write(tmp_path / "d.jsonl", recs)
    starts = [line for _, _, line, _ in parallel.chunks(data)]
    with Project.create(tmp_path / "w2.concord") as p:
        report = import_file(p, data, workers=2)
        assert (report.counts["violations"].added, report.counts["rubric"].added) == (60, 1)
        two = rows(p)
    assert here[0] == 1 and len(here) > 3 and here == sorted(here)  # the caller took chunks, in file order ...
    assert len(here) < len(starts)  # ... and left the worker some
    assert max(held) == parallel.TAKE_AHEAD == 2  # (two at a time, never more)
    with Project.create(tmp_path / "w1.concord") as p:
        import_file(p, data, workers=1)
        assert rows(p) == two


def test_workers_run_from_a_directory_holding_another_app_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker imports this tree's app.io.parallel, not an `app` package in the current directory (python -P)."""
    other = tmp_path / "elsewhere"
    (other / "app").mkdir(parents=True)
    (other / "app" / "__init__.py").write_text("raise ImportError('not this app')\n", encoding="utf-8")
    data = write(tmp_path / "d.jsonl", [record(i) for i in range(40)])
    monkeypatch.chdir(other)
    monkeypatch.setattr(parallel, "TAKE_WHEN_IDLE", False)
    here: list[int] = []
    real = parallel.run_part
    monkeypatch.setattr(parallel, "run_part", lambda part, reader=None: here.append(part.first_line) or real(part, reader))
    with Project.create(tmp_path / "p.concord") as p:
        assert import_file(p, data, workers=2).counts["violations"].added == 40
    assert here == [1]  # every other chunk came back from the worker


def test_prepared_rows_keep_the_schema_1_content_hash() -> None:
    """The rows are built with the payload's keys already in order (no sort when hashing): the hash must stay the one
    stored since schema 1, or every re-import of an old file would rewrite its samples. Checked against the payload as
    schema 1 defined it, with checkers out of order, non-ASCII names, missing fields, a located quote, and a meta
    object (keys in any order) that only dumps() can write (an integer past 64 bits)."""
    from app.store.samples import content_hash
    from app.schemes.violations.store import prepare_violation_samples
    from calibration.schemes.violations.records import VIOLATION_FIELDS, Violation, ViolationSample

    gt = (Violation("Rügé", 0, 4, "Café", "prix"), Violation("No claims", None, None, "gone", explanation="x"))
    preds = {"zeta@1|m": (Violation("R", 5, 9, None, None, None, "fix"),), "Älpha@1|m": (), "beta@1|m": gt[:1]}
    samples = [ViolationSample("s1", "Café au lait", gt, preds, "ctx", "train"),
               ViolationSample("s2", "Tea", (), {}, None, None)]
    metas = {"s1": {"z": [1, {"b": 2, "a": None}], "a": "é"}, "s2": {"big": 2**70, "a": 1}}
    prepared = prepare_violation_samples(samples, {"s1": {"": ["exact", "ungrounded"]}}, metas)
    for i, s in enumerate(samples):
        schema_1 = {"text": s.text, "context": s.context, "split": s.split, "meta": metas[s.id],
                    "gt": [{k: getattr(v, k) for k in VIOLATION_FIELDS} for v in s.ground_truth],
                    "pred": {k: [{f: getattr(v, f) for f in VIOLATION_FIELDS} for v in vs] for k, vs in sorted(s.predictions.items())}}
        assert prepared.hashes[i] == prepared.samples[7 * i + 5] == content_hash(schema_1)
    [h] = prepare_violation_samples(samples[:1]).hashes  # no meta: hashed without sorting
    assert h == content_hash({"text": samples[0].text, "context": "ctx", "split": "train", "meta": None,
                              "gt": [{k: getattr(v, k) for k in VIOLATION_FIELDS} for v in gt],
                              "pred": {k: [{f: getattr(v, f) for f in VIOLATION_FIELDS} for v in vs] for k, vs in sorted(preds.items())}})


@pytest.mark.parametrize("per", [1, 3, 128])
def test_insert_flat_stores_what_one_row_per_statement_stores(monkeypatch: pytest.MonkeyPatch, per: int) -> None:
    """Rows written several per statement (and the rest one by one) are the rows, in order, that a plain
    executemany of one row per statement writes, whatever the count; fewer per statement under a lower limit on values."""
    import random
    import sqlite3

    from app.store import bulk

    monkeypatch.setattr(bulk, "ROWS_PER_INSERT", per)
    rng = random.Random(per)
    for n in (0, 1, per - 1, per, per + 1, 3 * per + 2, 1000):
        flat: list[Any] = [rng.choice([None, rng.randrange(-9, 9), rng.random(), f"t{rng.randrange(99)}", b"\x00"])
                           for _ in range(3 * max(0, n))]
        got, want = sqlite3.connect(":memory:"), sqlite3.connect(":memory:")
        for c in (got, want):
            c.execute("CREATE TABLE t (k INTEGER PRIMARY KEY, a, b, c)")
        bulk.insert_flat(got, "INSERT INTO t (a, b, c) VALUES ", "(?, ?, ?)", flat)
        want.executemany("INSERT INTO t (a, b, c) VALUES (?, ?, ?)", [flat[i : i + 3] for i in range(0, len(flat), 3)])
        assert got.execute("SELECT * FROM t").fetchall() == want.execute("SELECT * FROM t").fetchall()
    monkeypatch.setattr(bulk, "ROWS_PER_INSERT", 128)
    conn = sqlite3.connect(":memory:")
    conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, 7)  # two rows of three per statement at most
    conn.execute("CREATE TABLE t (a, b, c)")
    seen: list[str] = []

    class Recording:  # the connection, noting each statement insert_flat runs
        def executemany(self, sql: str, params: Any) -> None:
            seen.append(sql)
            conn.executemany(sql, params)

        def getlimit(self, category: int) -> int:
            return conn.getlimit(category)

    bulk.insert_flat(Recording(), "INSERT INTO t VALUES ", "(?, ?, ?)", list(range(15)))  # type: ignore[arg-type]
    assert conn.execute("SELECT * FROM t").fetchall() == [(0, 1, 2), (3, 4, 5), (6, 7, 8), (9, 10, 11), (12, 13, 14)]
    assert [s.count("?") for s in seen] == [6, 3]


def _fk_seen(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The foreign_keys setting each violations write ran under (-1: with `bulk.into_empty` set, so its ids are not
    looked up, where foreign keys were off)."""
    from app.schemes.violations.store import ViolationsStore

    seen: list[int] = []
    real = ViolationsStore.write_prepared_violation_samples

    def spy(self: Any, *a: Any, **k: Any) -> Any:
        fk = self.conn.execute("PRAGMA foreign_keys").fetchone()[0]
        seen.append(-1 if self.project.bulk.into_empty and fk == 0 else fk)
        return real(self, *a, **k)

    monkeypatch.setattr(ViolationsStore, "write_prepared_violation_samples", spy)
    return seen


@pytest.mark.parametrize("workers", [1, 2])
def test_a_first_load_unchecked_stores_what_a_checked_import_stores(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Into an empty project foreign keys are not checked during the import (bulk.first_load); into one holding a
    sample they are. The file's rows are the same either way, every reference holds, and the setting comes back."""
    seen = _fk_seen(monkeypatch)
    data = write(tmp_path / "d.jsonl", [record(i) for i in range(40)] + [RUBRIC])
    cols = {"samples": "id, scheme, dataset_id, text, payload, split, meta, content_hash, line_hash",
            "violations": ", ".join(f'"{c}"' for c in VIOLATION_COLUMNS), "units": "sample_id, scheme, unit, summary",
            "machine_labels": "sample_id, unit, source, value, error"}
    out = {}
    for held in (False, True):
        seen.clear()
        with Project.create(tmp_path / f"{held}.concord") as p:
            if held:  # an earlier sample, not in the file
                p.store("violations").write_violation_samples([PlainSample("zz", "x", [], {}, None, None, None)])
            import_file(p, data, workers=workers)
            assert set(seen) == ({1} if held else {-1})
            assert not p.bulk.into_empty
            assert p.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            assert p.conn.execute("PRAGMA foreign_key_check").fetchall() == []
            out[held] = {t: p.conn.execute(f"SELECT {c} FROM {t} WHERE sample_id != 'zz' ORDER BY 1, 2, 3".replace(
                "sample_id", "id" if t == "samples" else "sample_id")).fetchall() for t, c in cols.items()}
    assert out[False] == out[True] and len(out[False]["violations"]) > 40


def test_a_failed_first_load_leaves_foreign_keys_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _fk_seen(monkeypatch)
    bad = [record(i) for i in range(30)]
    bad[29]["ground_truth"][0]["end"] = 999
    with Project.create(tmp_path / "p.concord") as p:
        with pytest.raises(ImportErrors):
            import_file(p, write(tmp_path / "bad.jsonl", bad))
        assert -1 in seen  # chunks were written unchecked before the bad line was met, then rolled back
        assert p.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1 and not p.bulk.into_empty
        assert p.conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 0
