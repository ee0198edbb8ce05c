"""`make bench-quick` (benchmarks/quick.py, issue #28 item 7): it reads the `BENCH-RESULT` lines a benchmark prints
and builds one table. Fake benchmarks stand in for the real ones, which are never run by the tests."""
from __future__ import annotations

import contextlib
import importlib.util
import re
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"


def _quick() -> ModuleType:
    """benchmarks/ is not a package: load quick.py by path (it puts benchmarks/ on sys.path for its helpers)."""
    spec = importlib.util.spec_from_file_location("bench_quick_under_test", BENCH / "quick.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclass looks its module up there
    spec.loader.exec_module(mod)
    return mod


quick = _quick()


def fake(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text("import os, sys\nsys.path.insert(0, %r)\nfrom benchresult import emit, skip\n" % str(BENCH)
                    + textwrap.dedent(body), encoding="utf-8")
    return path


def test_result_lines_become_table_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = fake(tmp_path, "bench_fake", """
        print("figures as usual")
        assert os.environ["CONCORD_BENCH_LOCK_HELD"] == "1"  # the run holds the lock for its children
        assert os.environ["TMPDIR"] == sys.argv[-1]  # and the temporary directory it was given
        emit("evaluate, 100 samples (ref: read floor)", 2.0, 3.0, 0.5, 1.5, True, load=0.75)
        emit("next sample (no ref)", 0.25, 0.1, load=1.5)
        emit("agreement (ref: pandas)", 1.0, 1.0, 1.0, 1.0, False, load=0.5)
    """)
    outcome = quick.run_benchmark(script, ["--size", "1", str(tmp_path)], timeout=60, tmpdir=tmp_path)
    assert "figures as usual" in capsys.readouterr().out  # the benchmark's own output is shown
    assert outcome.error == "" and [r["timed"] for r in outcome.results] == [
        "evaluate, 100 samples (ref: read floor)", "next sample (no ref)", "agreement (ref: pandas)"]
    lines = quick.table([outcome]).splitlines()
    assert lines[0].split()[:2] == ["benchmark", "timed"] and len(lines) == 5
    cells = [re.split(r"\s{2,}", line.strip()) for line in lines[2:]]
    # benchmark, timed, wall, ref wall, ratio wall, ratio CPU, load, CPU share, matched
    assert cells[0] == ["bench_fake", "evaluate, 100 samples (ref: read floor)", "2.000", "0.500", "4.00", "2.00",
                        "0.75", "1.50", "yes"]
    assert cells[1] == ["bench_fake", "next sample (no ref)", "0.250", "-", "-", "-", "1.50", "0.40", "-"]
    assert cells[2][-1] == "NO"


def test_skipped_failed_and_silent_benchmarks_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    skipped = quick.run_benchmark(fake(tmp_path, "bench_nodata", 'skip("no data")\n'), [], timeout=60)
    failed = quick.run_benchmark(fake(tmp_path, "bench_broken", """
        print("started", flush=True)
        sys.exit("boom: the reference differs")
    """), [], timeout=60)
    silent = quick.run_benchmark(fake(tmp_path, "bench_silent", 'print("no result line")\n'), [], timeout=60)
    slow = quick.run_benchmark(fake(tmp_path, "bench_slow", "import time; time.sleep(30)\n"), [], timeout=1)
    text = quick.table([skipped, failed, silent, slow])
    assert re.search(r"bench_nodata\s+skipped: no data", text)
    assert re.search(r"bench_broken\s+failed \(exit 1\): boom: the reference differs", text)
    assert re.search(rf"bench_silent\s+no {quick.PREFIX.strip()} line", text)
    assert re.search(r"bench_slow\s+failed \(exit -1\): timed out after 1 s", text)
    assert skipped.error == "" and failed.error and silent.error and slow.error


def test_every_benchmark_has_quick_arguments_and_prints_a_result_line() -> None:
    names = quick.benchmarks()
    assert len(names) >= 15 and set(names) == set(quick.QUICK)
    for name in names:
        source = (BENCH / f"{name}.py").read_text(encoding="utf-8")
        assert "emit(" in source, f"{name} prints no {quick.PREFIX.strip()} line"
        flags = set(re.findall(r'add_argument\(\s*"(--[\w-]+)"', source))
        given = {a for a in quick.QUICK[name] if a.startswith("--")}
        assert given <= flags, f"{name}: quick arguments {given - flags} are not its options"


def test_unknown_benchmark_is_refused_and_one_without_small_arguments_is_not_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert quick.main(["--only", "bench_not_there"]) == 2
    assert "bench_not_there" in capsys.readouterr().err
    fake(tmp_path, "bench_unlisted", 'raise SystemExit("must not run")\n')
    monkeypatch.setattr(quick, "HERE", tmp_path)
    monkeypatch.setattr(quick, "bench_lock", contextlib.nullcontext)  # nothing runs: no need to wait for the lock
    assert quick.main(["--only", "bench_unlisted"]) == 1
    assert re.search(r"bench_unlisted\s+not run: no quick arguments", capsys.readouterr().out)


def test_parse_ignores_other_lines() -> None:
    out = "x BENCH-RESULT {}\nBENCH-RESULT {\"timed\": \"t\", \"wall\": 1}\nplain\n"
    assert quick.parse_results(out) == [{"timed": "t", "wall": 1}]
