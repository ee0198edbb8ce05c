"""Bad input found by fuzzing: each is refused with exit 2, one clear message naming the file, the line or row
and the field, no traceback, and the project file unchanged."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from app.cli import main
from app.store import Project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "p.concord"
    Project.create(path).close()
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()  # no connection is open: reading the bytes is safe


def _refused(argv: list[str], project: Path, capsys: pytest.CaptureFixture[str]) -> str:
    before = _sha(project)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert _sha(project) == before
    return err


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def _record(meta: str, sid: str = "x") -> str:
    return f'{{"id": "{sid}", "text": "hello", "ground_truth": [], "predictions": {{}}, "meta": {meta}}}'


@pytest.mark.parametrize("depth", [300, 1000, 1100])
def test_over_deep_meta_is_refused_with_its_line(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 depth: int) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text(_record("{}", "ok") + "\n" + _record(_nested(depth)) + "\n", encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:2: " in err and "depth limit exceeded" in err


def test_meta_at_the_depth_limit_imports(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "deep.jsonl"
    f.write_text(_record(_nested(200)) + "\n", encoding="utf-8")
    assert main(["import", str(project), str(f)]) == 0
    with Project.open(project) as p:
        assert p.scalar("SELECT count(*) FROM samples") == 1


def test_over_deep_meta_in_a_csv_cell(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "deep.csv"
    cell = _nested(1000).replace('"', '""')
    f.write_text(f'id,text,ground_truth,predictions,meta\nok,hi,[],{{}},\nx,hi,[],{{}},"{cell}"\n', encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:row 3: meta: invalid JSON: depth limit exceeded" in err


def test_directory_as_import_file(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "records.jsonl"
    folder.mkdir()
    for argv in (["import", str(project), str(folder)], ["labels", "import", str(project), str(folder)]):
        assert f"{folder}: is a directory; give the file to read" in _refused(argv, project, capsys)


@pytest.mark.parametrize("argv", [
    ["init", "{d}"], ["status", "{d}"], ["import", "{d}", "x.jsonl"], ["labels", "import", "{d}", "x.jsonl"],
    ["evaluate", "{d}"], ["calibrate", "{d}"], ["assign", "{d}", "--trait", "t"], ["splits", "{d}"], ["check", "{d}"],
    ["export", "{d}", "--name", "s", "--version", "1.0.0", "--out", "{d}"],
], ids=lambda a: a[0] if a[0] != "labels" else "labels-import")
def test_directory_as_project_for_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-used")
    assert main([a.format(d=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path}: is a directory" in err and "Traceback" not in err


def test_csv_with_invalid_utf8_names_the_true_row_and_byte(project: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "bad.csv"
    head = b'id,text,ground_truth,predictions\na,hello,[],{}\nb,"two\nlines",[],{}\nc,caf'
    f.write_bytes(head + b"\xff,[],{}\n")
    err = _refused(["import", str(project), str(f)], project, capsys)
    # header row 1, a row 2, b row 3 (its cell spans two lines), c row 4
    assert f"{f}:row 4: text: not valid UTF-8 (byte 0xff at offset {len(head)} of the file)" in err


def test_csv_with_an_unterminated_quote_names_its_row(project: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "quote.csv"
    rows = ["id,text,ground_truth,predictions"] + [f"r{i},hello,[],{{}}" for i in range(2, 7)]
    f.write_text("\n".join([*rows, 'r7,"unterminated,[],{}', "r8,x,[],{}"]) + "\n", encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:row 7: a quoted cell is never closed" in err


def test_csv_with_an_unterminated_quote_closed_by_a_later_row_names_its_row(
        project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The quote opened in row 7 is "closed" by the first quote of row 8: pandas merged the two rows into one cell
    and imported the file with row 8's sample missing (exit 0)."""
    f = tmp_path / "quote.csv"
    rows = ["id,text,ground_truth,predictions"] + [f'r{i},"hello",[],{{}}' for i in range(2, 7)]
    f.write_text("\n".join([*rows, 'r7,"unterminated,[],{}', 'r8,"x",[],{}', 'r9,"y",[],{}']) + "\n", encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}:row 7: a quoted cell" in err and "text after its closing" in err


@pytest.mark.parametrize("doc,what", [
    ([{"id": "a", "text": "t", "ground_truth": [], "predictions": {}}] * 3, "a JSON array of 3 items"),
    ({"id": "a", "text": "t", "ground_truth": [], "predictions": {}}, "one JSON object"),
])
def test_pretty_printed_json_is_one_clear_error(project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                doc: object, what: str) -> None:
    f = tmp_path / "pretty.jsonl"
    f.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert "1 problem found" in err and f"{f}: this is {what} spread over" in err and "not JSON Lines" in err
    assert "jq -c" in err


def test_several_pretty_printed_objects_are_one_clear_error(project: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`jq . file.jsonl` writes one pretty-printed object after another: it was reported as 54 invalid lines."""
    f = tmp_path / "pretty.jsonl"
    docs = [{"id": f"a{i}", "text": "t", "ground_truth": [{"quote": "t", "rule": "r"}], "predictions": {}} for i in range(3)]
    f.write_text("\n".join(json.dumps(d, indent=2) for d in docs) + "\n", encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert "1 problem found" in err and f"{f}: this is 3 pretty-printed JSON objects spread over" in err
    assert "not JSON Lines" in err and "jq -c ." in err


def test_a_json_file_that_no_scheme_reads_says_what_json_is_for(project: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """RGB's and ADDM's .json files are imported as they are, so "unknown file type '.json'" misled."""
    f = tmp_path / "records.json"
    f.write_text(json.dumps([{"id": "a", "text": "t", "ground_truth": [], "predictions": {}}], indent=2), encoding="utf-8")
    err = _refused(["import", str(project), str(f)], project, capsys)
    assert f"{f}: this .json file is not one of RGB's data or prediction files, an ADDM run file nor a FaithBench" in err
    assert "jq -c '.[]'" in err and "unknown file type" not in err
