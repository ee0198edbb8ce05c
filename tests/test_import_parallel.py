"""The multi-process JSONL import gives exactly what the single-process one gives: samples, counts, problems."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.io import parallel
from app.io.imports import ImportReport, import_file
from app.io.problems import ImportErrors
from app.store import Project
from tests.jsonl_files import write_jsonl

A, B = "naive@1.0|gpt-3.5-turbo", "careful@2.0|gpt-4o"
TEXT = "Limited stock! Our #1 tea cures colds 🍵 and costs less than anywhere else. Order today."


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of a few records, so every test crosses chunk boundaries (and, with workers, processes)."""
    monkeypatch.setattr(parallel, "CHUNK_BYTES", 2000)


def v(quote: str, rule: str, offsets: bool = True) -> dict[str, Any]:
    if not offsets:
        return {"quote": quote, "rule": rule}
    s = TEXT.index(quote)
    return {"start": s, "end": s + len(quote), "quote": quote, "rule": rule}


def violations(i: int) -> dict[str, Any]:
    return {"id": f"s{i:03d}", "text": TEXT, "split": "train" if i % 3 else "test", "meta": {"i": i},
            "ground_truth": [v("Limited stock", "No fake scarcity"), v("cures colds", "No medical claims")],
            "predictions": {A: [v("#1 tea", "No superlatives", offsets=i % 2 == 0)],
                            B: [v("cures colds", "Medical"), v("ORDER TODAY", "pressure", offsets=False),
                                v("costs less than anywhere", "Comparative", offsets=False)] if i % 4 else []}}


def rubric(i: int, tp: str = "States the price") -> dict[str, Any]:
    return {"id": f"r{i:03d}", "question": "Price?", "response": "It costs 3 euros.",
            "traits": [{"name": "price", "metrics": ["recall"], "tp_instructions": [tp]}],
            "buckets": {"price": {"tp": ["3 euros"]}}}


def write(path: Path, rows: list[Any]) -> Path:
    return write_jsonl(path, rows, ensure_ascii=False)  # non-ASCII text as UTF-8, not escapes


def snapshot(p: Project) -> dict[str, Any]:
    ids = [s.id for s in p.store("violations").violation_samples()]
    return {
        "samples": p.store("violations").violation_samples(),
        "rows": [p.samples.sample_row(i) for i in ids],
        "groundings": {i: p.store("violations").violation_groundings(i) for i in ids},
        "units": [p.units.units_for_sample(i) for i in ids],
        "rubric": [p.store("rubric").bucket_assignment(u["sample_id"], u["trait"], "import")["buckets"]  # type: ignore[index]
                   for u in p.store("rubric").rubric_units()],
        "status": p.counts.status_counts(),
    }


def summary(r: ImportReport) -> tuple[Any, ...]:
    return (r.records, r.counts["violations"], r.counts["rubric"], r.facts,
            [str(w) for w in r.warnings], r.dataset)


def test_same_result_as_single_process(tmp_path: Path) -> None:
    rows: list[Any] = [violations(i) for i in range(40)] + [rubric(i) for i in range(5)]
    rows[7]["severity"] = "high"  # unknown field: one aggregated warning
    rows[33]["predictions"]["odd checker"] = []
    data = write(tmp_path / "data.jsonl", rows)
    reports, snaps = [], []
    for workers in (1, 3):
        with Project.create(tmp_path / f"w{workers}.concord") as p:
            reports.append(import_file(p, data, workers=workers))
            snaps.append(snapshot(p))
            again = import_file(p, data, workers=workers)
            assert not again.changed and again.counts["violations"].unchanged == 40
    assert summary(reports[0]) == summary(reports[1])
    assert snaps[0] == snaps[1]
    assert reports[1].counts["violations"].added == 40 and reports[1].counts["rubric"].added == 5
    assert any("on 1 line" not in str(w) and w.field == "severity" for w in reports[1].warnings)


def test_parallel_reimport_of_a_serial_import_and_updates(tmp_path: Path) -> None:
    data = write(tmp_path / "data.jsonl", [violations(i) for i in range(30)])
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, data, workers=1)
        counts = p.table_counts()
        assert not import_file(p, data, workers=2).changed
        assert p.table_counts() == counts
        rows = [violations(i) for i in range(30)]
        rows[25]["ground_truth"] = rows[25]["ground_truth"][:1]
        report = import_file(p, write(tmp_path / "data.jsonl", [*rows, violations(30)]), workers=2)
        assert (report.counts["violations"].added, report.counts["violations"].updated,
                report.counts["violations"].unchanged) == (1, 1, 29)
        assert len(p.store("violations").violation_sample("s025").ground_truth) == 1  # type: ignore[union-attr]
        assert p.units.units_for_sample("s025")[0]["n_gt"] == 1


def test_same_problems_as_single_process_and_nothing_written(tmp_path: Path) -> None:
    rows: list[Any] = [violations(i) for i in range(36)] + [rubric(90)]
    rows[2] = "{broken"
    rows[20] = violations(5)  # duplicate of line 6, in another part
    rows[30]["ground_truth"][0]["end"] = 400
    rows.append(rubric(91, tp="Mentions the currency"))  # trait 'price' redefined, in the last part
    data = write(tmp_path / "bad.jsonl", rows)
    messages = []
    for workers in (1, 3):
        with Project.create(tmp_path / f"b{workers}.concord") as p:
            before = p.table_counts()
            with pytest.raises(ImportErrors) as exc:
                import_file(p, data, workers=workers)
            messages.append([str(e) for e in exc.value.problems])
            assert p.table_counts() == before
    assert messages[0] == messages[1]
    assert [m.split(": ")[0].rsplit(":", 1)[1] for m in messages[1]] == ["3", "21", "31", "38"]
    assert f"duplicate id 's005' (first used at {data}:6)" in messages[1][1]
    assert f"defined differently at {data}:37" in messages[1][3]


def test_scheme_clash_found_in_parallel(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as p:
        import_file(p, write(tmp_path / "a.jsonl", [rubric(1)]))
        rows = [violations(i) for i in range(20)]
        rows[15]["id"] = "r001"
        with pytest.raises(ImportErrors) as exc:
            import_file(p, write(tmp_path / "b.jsonl", rows), workers=2)
        assert [str(e) for e in exc.value.problems] == [
            f"{tmp_path / 'b.jsonl'}:16: id: 'r001' already exists in the project as a rubric sample"]


def test_a_failing_worker_is_redone_in_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE)

    monkeypatch.setattr(parallel, "_start", broken)
    data = write(tmp_path / "d.jsonl", [violations(i) for i in range(12)])
    with Project.create(tmp_path / "p.concord") as p:
        report = import_file(p, data, workers=3)
        assert report.counts["violations"].added == 12 and len(p.store("violations").violation_samples()) == 12


@pytest.mark.parametrize("size", [1, 7, 20, 64, 10_000])
def test_chunks_cut_after_newlines_and_count_lines(tmp_path: Path, size: int) -> None:
    data = b'{"a": 1}\n\n{"b": 2}\n{"c": "x\\ny"}\n' * 5 + b'{"last": true}'
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    sha = hashlib.sha256()
    ranges = list(parallel.chunks(path, size, sha))
    assert sha.hexdigest() == hashlib.sha256(data).hexdigest()
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data)
    assert b"".join(r[3] for r in ranges) == data
    for (a, b, line, chunk), nxt in zip(ranges, ranges[1:] + [None]):
        assert chunk == data[a:b] and data[a - 1:a] in (b"", b"\n")
        assert line == data.count(b"\n", 0, a) + 1
        if nxt is not None:
            assert nxt[0] == b


def _bench_generator() -> Any:
    """benchmarks/bench_import.py's generator (benchmarks/ is not a package): the data the import is timed on."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_import.py"
    spec = importlib.util.spec_from_file_location("bench_import_for_tests", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


def table_digests(path: Path) -> dict[str, str]:
    """SHA-256 of every table's rows (row ids included, so the insertion order counts); the project's own identity
    and the datasets' import time left out, the only values two imports of the same file may differ in."""
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        out = {}
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN "
                                     "('meta', 'migrations') ORDER BY name"):
            cols = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")') if r[1] != "imported_at"]
            h = hashlib.sha256()
            order = ", ".join(str(i + 1) for i in range(len(cols)))
            for row in conn.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}" '
                                    f"ORDER BY {order}"):
                h.update(repr(row).encode())
            out[table] = h.hexdigest()
        return out
    finally:
        conn.close()


def test_benchmark_data_gives_the_same_tables_whatever_the_workers(tmp_path: Path) -> None:
    """Every table, row for row, is the same after a first import, an update and a re-import, in one process or with
    workers started at once (a first import) or once a chunk needs parsing (a re-import)."""
    generate = _bench_generator()
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    generate(first, 120, seed=3, quote_only=0.3)  # some predictions by quote only: placed by search, noted
    generate(second, 150, seed=3, quote_only=0.3)
    lines = second.read_text(encoding="utf-8").splitlines(keepends=True)
    second.write_text("".join(lines[:40] + lines[41:]).replace('"split": "test"', '"split": "dev"', 5),
                      encoding="utf-8")  # one line left out, five changed
    digests = []
    for workers in (1, 3):
        path = tmp_path / f"w{workers}.concord"
        with Project.create(path) as p:
            reports = [import_file(p, first, dataset="d", workers=workers),
                       import_file(p, second, dataset="d", workers=workers),
                       import_file(p, second, dataset="d", workers=workers)]
        assert reports[0].counts["violations"].added == 120
        c = reports[1].counts["violations"]
        assert (c.added, c.updated, c.unchanged) == (30, 5, 114)
        assert not reports[2].changed
        digests.append(table_digests(path))
    assert digests[0] == digests[1]
    assert len({digests[0]["samples"], digests[0]["violations"], digests[0]["units"]}) == 3  # (tables not empty)


def test_a_workers_answers_are_read_while_the_caller_is_busy() -> None:
    """A worker's answer (a first load's chunk: megabytes, more than a pipe holds) is read off its pipe as it comes,
    by a thread: the worker is never blocked on its write while the caller does something else. A child writing three
    answers of 3 MB each can exit while nobody takes them, and they arrive whole, in order."""
    code = ("import sys; from app.io.parallel import _send\n"
            "for i in range(3): _send(sys.stdout.buffer, bytes([i]) * 3_000_000)\n")
    root = str(Path(parallel.__file__).resolve().parents[2])
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, bufsize=0, cwd=root)
    answers = parallel._Answers(proc.stdout)
    assert proc.wait(timeout=60) == 0  # (it would block on its first write if nothing read the pipe)
    assert parallel._ready(answers)
    assert [answers.next() for _ in range(3)] == [bytes([i]) * 3_000_000 for i in range(3)]
    assert answers.next() is None and parallel._ready(answers)  # the end, and again
    answers.thread.join(timeout=10)
    assert not answers.thread.is_alive()
