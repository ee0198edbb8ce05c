"""Hostile files (issue #24 items 2, 3 and 9): huge fields, deep nesting, odd encodings and wrong types are refused with
exit 2 and one clear message naming file, line and field, in bounded time and memory, the project unchanged; quotes
are located by literal search, never compiled into a regular expression."""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.io.demo import demo_dir
from app.io.imports import import_file
from app.io.problems import ImportErrors
from app.store import Project
from calibration.grounding import find_all_casefold, locate
from calibration.jsontext import MAX_FIELD_CHARS, MAX_RECORD_BYTES
from tests.jsonl_files import write_jsonl

ROOT = Path(__file__).resolve().parents[1]
MB = 1 << 20


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()  # no connection is open: reading the bytes is safe


def _refused(argv: list[str], project: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = _sha(project)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert _sha(project) == before
    return err


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    Project.create(path).close()
    return path


@pytest.fixture
def addm_project(tmp_path: Path) -> Path:
    path = tmp_path / "addm.concord"
    assert main(["init", str(path)]) == 0
    assert main(["import", str(path), str(demo_dir() / "addm.jsonl")]) == 0
    return path


def _measured(argv: list[str]) -> tuple[int, str, float, int]:
    """Run `concord ARGV` in a child that reports its own peak RSS: (exit code, stderr, seconds, peak MB). The peak is
    the child's VmHWM where Linux gives it: ru_maxrss survives exec, so it may report this (larger) test process."""
    code = ("import re, resource, sys\nfrom app.cli import main\nrc = main(sys.argv[1:])\n"
            "try:\n    kb = int(re.search(r'VmHWM:\\s*(\\d+)', open('/proc/self/status').read()).group(1))\n"
            "except (OSError, AttributeError):\n    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "sys.stderr.write(f'\\nPEAK_KB {kb}\\n')\nsys.exit(rc)")
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-c", code, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    seconds = time.perf_counter() - t0
    peak = re.search(r"PEAK_KB (\d+)", r.stderr)  # (a fixed pattern over our own output)
    assert peak is not None, r.stderr[-2000:]
    return r.returncode, r.stderr, seconds, int(peak.group(1)) // 1024


def _big_line(path: Path, head: str, n: int, tail: str) -> Path:
    """A JSONL file whose second line holds a string field of `n` characters, written without building it."""
    with open(path, "wb") as fh:
        fh.write(b'{"id":"ok","text":"hello","ground_truth":[],"predictions":{}}\n' + head.encode())
        for _ in range(n // MB):
            fh.write(b"x" * MB)
        fh.write(b"x" * (n % MB) + tail.encode() + b"\n")
    return path


# -- item 2: no data as a pattern -----------------------------------------------------------------------------------

def test_locate_never_compiles_the_quote(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every path of locate (exact, case-insensitive, fuzzy, not found) runs with the regex compiler broken."""
    from app.schemes.rgb.views import occurrences

    def boom(*a: Any, **k: Any) -> None:
        raise AssertionError("a quote was compiled into a regular expression")

    monkeypatch.setattr(re, "_compile", boom)
    text = "The Waiter said (allergy?) the dish was nut-free [sic]."
    assert locate("(allergy?)", text).how == "exact"
    assert locate("WAITER SAID (ALLERGY?)", text).how == "casefold"
    assert locate("the dish was nut free", text).how == "fuzzy"
    assert locate("[a-z]+", text).how == "ungrounded"
    assert occurrences(text, "[SIC]") == [(text.index("[sic]"), text.index("[sic]") + 5)]


def test_case_insensitive_offsets_are_in_the_text_itself() -> None:
    text = "İstanbul ΟΔΟΣ and odoς"  # İ lowers to two code points; a final sigma has two lower forms
    assert find_all_casefold("i̇stanbul", text) == [(0, 8)]
    hits = find_all_casefold("οδοσ", text)
    assert [text[a:b] for a, b in hits] == ["ΟΔΟΣ"]
    assert locate("ISTANBUL", "say istanbul") == locate("ISTANBUL", "say istanbul")  # (deterministic)
    assert locate("ISTANBUL", "say istanbul").start == 4


def test_long_quotes_are_located_in_linear_time() -> None:
    """A 4 MB quote took seconds to compile as a pattern; a long quote absent from a long text ran rapidfuzz's
    quadratic alignment. Both are now bounded (literal search; fuzzy only within its budget)."""
    text = "abcdefghij" * 400_000
    t0 = time.perf_counter()
    hit = locate(text[5:-5], text)
    miss = locate("q" + "abcdefghik" * 300, text[:200_000])
    assert (hit.start, hit.end, hit.how) == (5, len(text) - 5, "exact")
    assert miss.how == "ungrounded"
    assert time.perf_counter() - t0 < 3


def test_a_field_over_the_limit_is_refused_with_line_and_field(project: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    f = _big_line(tmp_path / "big.jsonl", '{"id":"big","text":"', MAX_FIELD_CHARS + 1,
                  '","ground_truth":[],"predictions":{}}')
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:2: text: 16.0 MiB of text, longer than the limit of 16.0 MiB" in err


@pytest.mark.parametrize("n", [200_000, MAX_FIELD_CHARS + 1])
def test_csv_cells_up_to_the_limit(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int) -> None:
    """The csv module's own 128 KiB cell limit made a long cell look like an unclosed quote; the import's limit
    applies instead, naming row and column."""
    f = tmp_path / "big.csv"
    f.write_text("id,text,ground_truth,predictions\nok,hello,[],{}\nbig," + "x" * n + ",[],{}\n", encoding="utf-8")
    if n <= MAX_FIELD_CHARS:
        assert main(["import", str(project), str(f)]) == 0
        return
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:row 3: text: 16.0 MiB of text, longer than the limit" in err


def test_a_record_over_the_limit_is_read_past_in_bounded_memory(project: Path, tmp_path: Path) -> None:
    """A line longer than MAX_RECORD_BYTES is refused unparsed: time in seconds, memory a fraction of its size."""
    n = MAX_RECORD_BYTES + 6 * MB
    f = _big_line(tmp_path / "huge.jsonl", '{"id":"big","predictions":{},"ground_truth":[],"text":"', n, '"}')
    before = _sha(project)
    rc, err, seconds, peak = _measured(["import", str(project), str(f)])
    assert rc == 2 and "Traceback" not in err, err[-2000:]
    assert f"{f}:2: the record is longer than 64.0 MiB, so it is not read" in err and "passes the limit in text" in err
    assert peak < 512, peak  # the line is 70 MB; 200 MB lines measured 261 MB (issue #24: killed at 23.7 GB)
    assert seconds < 60
    assert _sha(project) == before


def test_a_huge_snippet_in_a_run_file_is_refused(addm_project: Path, tmp_path: Path) -> None:
    """The issue's case: ADDM results.json with one huge snippet (20 MB here, 200 MB by hand: 4.2 s, 617 MB)."""
    run = {"run_id": "x", "method": "m", "results": [{"business_id": "tr-001", "verdict": "High Risk", "parsed": {
        "evidences": [{"review_id": "tr-001-r1", "field": "INCIDENT_SEVERITY", "judgement": "moderate",
                       "snippet": "@@"}]}}]}
    head, tail = json.dumps(run).split("@@")
    f = tmp_path / "results.json"
    with open(f, "wb") as fh:
        fh.write(head.encode())
        for _ in range(20):
            fh.write(b"waiter " * (MB // 7) + b"x" * (MB % 7))
        fh.write(tail.encode())
    before = _sha(addm_project)
    rc, err, seconds, peak = _measured(["import", str(addm_project), str(f)])
    assert rc == 2 and "Traceback" not in err, err[-2000:]
    assert f"{f}: results[0].parsed.evidences[0].snippet: 20.0 MiB of text, longer than the limit" in err
    assert peak < 1024, peak
    assert seconds < 60
    assert _sha(addm_project) == before


def test_a_16_mb_field_imports_quickly(project: Path, tmp_path: Path) -> None:
    """A 16,000,000-character review with snippets of nearly all of it (one exact, one case-insensitive): located by
    literal search, so the import takes seconds (issue #24: 56 s and 2.6 GB before)."""
    n = 16_000_000
    assert n <= MAX_FIELD_CHARS
    text = ("The waiter said the dish was nut-free. " * (n // 39 + 1))[:n]
    rec = {"scheme": "addm", "id": "big-1", "reviews": [{"review_id": "r1", "text": text}],
           "ground_truth": {"verdict": "High Risk", "incidents": [
               {"review_id": "r1", "severity": "moderate", "snippet": text[5:n - 5]}]},
           "methods": {"m": {"verdict": "High Risk", "evidences": [
               {"review_id": "r1", "severity": "mild", "snippet": text[7:n - 9].upper()}]}}}
    f = write_jsonl(tmp_path / "big16.jsonl", [rec])
    rec_snippet, ev_snippet = text[5:n - 5], text[7:n - 9]
    del text, rec
    with Project.open(project) as p:
        t0 = time.perf_counter()
        report = import_file(p, f, workers=1)
        seconds = time.perf_counter() - t0
        stored = p.samples.records("addm", ["big-1"])[0]
    assert report.records == 1
    inc, ev = stored.incidents[0], stored.methods["m"].evidences[0]
    assert (inc.start, inc.how, ev.start, ev.how) == (5, "exact", 7, "casefold")
    assert inc.end - inc.start == len(rec_snippet.strip()) and ev.end - ev.start == len(ev_snippet.strip())
    assert seconds < 10  # ~4 s on a loaded 2-core machine, ~2 s idle


# -- item 3: deep nesting and odd encodings --------------------------------------------------------------------------

DEEP = "[" * 1000
DEEP_CLOSED = "[" * 1000 + "]" * 1000
PREDICTION = "prediction_en_gpt-4o_temp0.7_noise0.2_passage5_correct0.0.json"


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl", "traits", PREDICTION])
@pytest.mark.parametrize("content", [DEEP, DEEP_CLOSED], ids=["open", "closed"])
def test_deep_nesting_is_refused_everywhere(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            name: str, content: str) -> None:
    f = tmp_path / (name if name != "traits" else "traits.json")
    f.write_text(content + "\n", encoding="utf-8")
    argv = ["traits", "import", str(project), str(f)] if name == "traits" else ["import", str(project), str(f)]
    err = _refused(argv, project, capsys)
    expected = "JSON ends early (truncated?)" if content == DEEP else "depth limit exceeded (nested deeper than 255"
    assert expected in err and str(f) in err


def test_deep_parsed_in_a_run_file(addm_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "results.json"
    f.write_text('{"run_id":"x","method":"m","results":[{"business_id":"tr-001","parsed":' + DEEP_CLOSED + "}]}")
    err = _refused(["import", str(addm_project), str(f)], addm_project, capsys)
    assert f"{f}: results[0].parsed: invalid JSON: depth limit exceeded" in err


def test_an_rgb_file_in_utf16_is_named(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / PREDICTION
    f.write_bytes('{"id": 1}\n'.encode("utf-16"))
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert "the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8" in err


@pytest.mark.parametrize("command", ["import", "labels"])
def test_a_utf16_jsonl_file_is_one_problem(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           command: str) -> None:
    f = tmp_path / "d.jsonl"
    f.write_bytes("".join(json.dumps({"id": f"s{i}", "text": "hi", "ground_truth": [], "predictions": {}}) + "\n"
                          for i in range(5)).encode("utf-16"))
    argv = ["import", str(project), str(f)] if command == "import" else ["labels", "import", str(project), str(f)]
    err = _refused(argv, project, capsys)
    assert "1 problem found" in err and f"{f}: the file is UTF-16" in err


def test_a_rubric_with_a_number_for_a_trait_list(project: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "rubric.json"
    f.write_text('{"metric_traits":[],"llm_traits":5}', encoding="utf-8")
    err = _refused(["traits", "import", str(project), str(f)], project, capsys)
    assert f"{f}:1: llm_traits: expected a list, got number" in err


def test_wrong_types_in_a_run_file_are_refused(addm_project: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "results.json"
    f.write_text(json.dumps({"run_id": "x", "method": "m", "results": [
        {"business_id": "tr-001", "parsed": "oops"}, {"business_id": "tr-002", "risk_score": "high"},
        {"business_id": "tr-003", "verdict": ["High Risk"]}]}), encoding="utf-8")
    err = _refused(["import", str(addm_project), str(f)], addm_project, capsys)
    assert f"{f}: results[0].parsed: expected an object, got string" in err
    assert f"{f}: results[1].risk_score: expected a number, got string" in err
    assert f"{f}: results[2].verdict: expected a verdict name" in err


@pytest.mark.parametrize("data, message", [
    (b'{"run_id": "x",\n "method": "m",\n "results": [{"business_id":',
     "line 3 column 29: invalid JSON: JSON ends early"),
    (b'{"run_id": "x", "method": "m", "results": [{"business_id": "tr-001", "risk_score": NaN}]}',
     "line 1 column 84: invalid JSON: NaN is not JSON"),
    ('{"run_id": "x", "method": "m", "results": []}'.encode("utf-16"), "the file is UTF-16"),
], ids=["truncated", "nan", "utf16"])
def test_a_broken_run_file_says_what_is_wrong(addm_project: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str], data: bytes, message: str) -> None:
    f = tmp_path / "results.json"
    f.write_bytes(data)
    err = _refused(["import", str(addm_project), str(f)], addm_project, capsys)
    assert f"{f}: {message}" in err


def test_a_run_file_with_a_utf8_bom_imports(addm_project: Path, tmp_path: Path) -> None:
    f = tmp_path / "results.json"
    run = {"run_id": "x", "method": "m", "results": [{"business_id": "tr-001", "verdict": "High Risk"}]}
    f.write_bytes(b"\xef\xbb\xbf" + json.dumps(run).encode())
    assert main(["import", str(addm_project), str(f)]) == 0
    with Project.open(addm_project) as p:
        assert "m" in p.samples.records("addm", ["tr-001"])[0].methods


# -- item 9 (part) ---------------------------------------------------------------------------------------------------

def test_empty_bucket_excerpts_in_labels_are_warned_with_their_line(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.concord"
    assert main(["init", str(path)]) == 0
    rubric = {"id": "q1", "question": "Dosage?", "response": "Take two pills daily with water.",
              "traits": [{"name": "dosage", "metrics": ["recall"], "tp_instructions": ["States the dose"]}]}
    assert main(["import", str(path), str(write_jsonl(tmp_path / "s.jsonl", [rubric]))]) == 0
    labels = write_jsonl(tmp_path / "l.jsonl", [
        {"sample": "q1", "trait": "dosage", "annotator": "ana", "buckets": {"tp": ["two pills"]}},
        {"sample": "q1", "trait": "dosage", "annotator": "ben", "buckets": {"tp": ["two pills", " "], "fn": [""]}}])
    capsys.readouterr()
    assert main(["labels", "import", str(path), str(labels)]) == 0
    err = capsys.readouterr().err
    assert f"{labels}:2: buckets.tp[1]: empty or whitespace-only excerpt dropped" in err
    assert f"{labels}:2: buckets.fn[0]: empty or whitespace-only excerpt dropped" in err


def test_a_scheme_clash_is_listed_with_the_other_errors(tmp_path: Path) -> None:
    with Project.create(tmp_path / "c.concord") as p:
        violations = {"id": "s1", "text": "hello there", "ground_truth": [], "predictions": {}}
        import_file(p, write_jsonl(tmp_path / "a.jsonl", [violations]))
        rubric = {"id": "s1", "question": "Q?", "response": "R.",
                  "traits": [{"name": "t", "metrics": ["recall"], "tp_instructions": ["x"]}]}
        f = write_jsonl(tmp_path / "b.jsonl", [rubric, "{broken"])
        with pytest.raises(ImportErrors) as err:
            import_file(p, f, workers=1)
        assert [(e.location.number, e.field) for e in err.value.problems] == [(1, "id"), (2, "")]
        assert "already exists in the project as a violations sample" in str(err.value)
