"""The `concord init | import | labels import | status | gui` commands, as a user runs them."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import build_parser, main
from app.store import SCHEMA_VERSION, Project

ROOT = Path(__file__).resolve().parents[1]
CHECKER = "baseline@1.0|gpt-4o-mini"
TEXT = "Act now: the only cream that works, guaranteed!"


def jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def sample(i: int) -> dict:
    s = TEXT.index("the only cream")
    return {"id": f"s{i}", "text": TEXT,
            "ground_truth": [{"start": s, "end": s + 14, "quote": "the only cream", "rule": "No superlatives"},
                             {"quote": "guaranteed", "rule": "No guarantees"}],
            "predictions": {CHECKER: [{"quote": "Act now", "rule": "No pressure"},
                                      {"quote": "100% natural", "rule": "Evidence"}]}}


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_init_import_labels_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = str(tmp_path / "brand.concord")
    code, out, _ = run(["init", proj], capsys)
    assert code == 0 and out.startswith(f"created {proj} (schema {SCHEMA_VERSION})")
    code, out, _ = run(["init", proj], capsys)
    assert code == 0 and "already a Concord project" in out

    data = jsonl(tmp_path / "checks.jsonl", [sample(i) for i in range(4)])
    code, out, err = run(["import", proj, str(data), "--dataset", "launch"], capsys)
    assert code == 0
    assert "4 records into dataset 'launch'" in out and "4 added, 0 updated, 0 unchanged" in out
    assert "placed by quote: 8 exact, 4 ungrounded" in out
    assert err.count("warning: ") == 4 and "'100% natural' was not found in the text" in err
    code, out, _ = run(["import", proj, str(data), "--dataset", "launch"], capsys)
    assert code == 0 and "nothing changed" in out

    labels = jsonl(tmp_path / "decisions.jsonl",
                   [{"sample": "s0", "checker": CHECKER, "annotator": "ana", "matches": []},
                    {"sample": "s1", "checker": CHECKER, "annotator": "ben", "matches": [[1, 0]]}])
    code, out, _ = run(["labels", "import", proj, str(labels)], capsys)
    assert code == 0 and "2 decisions by 2 annotator(s)" in out and "2 recorded (4 events)" in out

    code, out, _ = run(["status", proj, "--json"], capsys)
    data_json = json.loads(out)
    assert data_json["samples"] == {"violations": 4}
    assert data_json["scheme_counts"] == {"violations": {"ground_truth_violations": 8,
                                                         "predicted_violations": {CHECKER: 8},
                                                         "ungrounded_violations": 4}}
    assert data_json["events"] == 4 and data_json["annotators"] == 2
    (unit,) = data_json["units"]
    assert (unit["unit"], unit["total"], unit["labeled"], unit["unlabeled"], unit["with_status"]) == (CHECKER, 4, 2, 2, 2)

    code, out, _ = run(["status", proj], capsys)
    assert code == 0
    assert "samples: 4 violations; ground-truth violations: 8; ungrounded quotes: 4" in out
    row = next(line for line in out.splitlines() if CHECKER in line)
    # not a terminal (captured): plain TSV, so nothing is cut
    assert row.split("\t") == ["violations", CHECKER, "8", "4", "2", "2", "2"]
    assert "decisions: 4 events by 2 annotator(s)" in out


def test_bad_input_exit_2_every_message_on_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = str(tmp_path / "p.concord")
    Project.create(proj).close()
    bad = sample(2)
    bad["ground_truth"][0]["end"] = 999
    data = jsonl(tmp_path / "bad.jsonl", [sample(1), "{oops", sample(3), bad, {**sample(5), "id": "s1"}])
    code, out, err = run(["import", proj, str(data)], capsys)
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0] == f"concord import: {data}: 3 problems found, nothing was imported:"
    assert lines[1].startswith(f"  {data}:2: invalid JSON")
    assert lines[2] == f"  {data}:4: ground_truth[0].end: 999 is past the end of the text (its length is {len(TEXT)} code points)"
    assert lines[3] == f"  {data}:5: id: duplicate id 's1' (first used at {data}:1)"
    with Project.open(proj) as p:
        assert p.table_counts()["samples"] == 0

    code, _, err = run(["labels", "import", proj, str(jsonl(tmp_path / "l.jsonl", [{"sample": "s9", "checker": CHECKER, "annotator": "ana", "matches": []}]))], capsys)
    assert code == 2 and "nothing was recorded" in err and ":1: sample: no sample 's9' in the project" in err
    code, _, err = run(["import", proj, str(tmp_path / "missing.csv")], capsys)
    assert code == 2 and err.strip() == f"concord import: {tmp_path / 'missing.csv'}: no such file"
    code, _, err = run(["import", str(tmp_path / "nope.concord"), str(data)], capsys)
    assert code == 2 and "no such project file" in err
    code, _, err = run(["gui", str(data)], capsys)
    assert code == 2 and "not a Concord project" in err


@pytest.mark.parametrize("argv", [["import"], ["labels", "import"], ["status"], ["init"], ["gui"]])
def test_help_has_examples(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "example" in out and f"concord {' '.join(argv)}" in out


def test_only_the_requested_command_is_loaded(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser("status").parse_args(["status", "p.concord", "--json"]).json
    with pytest.raises(SystemExit):  # `import` lives in another module, which was not loaded
        build_parser("status").parse_args(["import", "p.concord", "f.jsonl"])
    capsys.readouterr()
    assert build_parser("import").parse_args(["import", "p.concord", "f.jsonl"]).file == "f.jsonl"
    full = build_parser()
    for argv in (["init", "p"], ["import", "p", "f"], ["labels", "import", "p", "f"], ["status", "p"], ["gui"]):
        assert callable(full.parse_args(argv).func)


def test_status_subprocess_stays_light(tmp_path: Path) -> None:
    """`concord status` must not load pandas, scipy, sklearn, openai or Qt: that is what keeps it under a second."""
    proj = tmp_path / "light.concord"
    Project.create(proj).close()
    code = ("import sys; from app.cli import main; rc = main(['status', sys.argv[1], '--json']); "
            "heavy = sorted(m for m in ('pandas', 'scipy', 'sklearn', 'openai', 'PySide6', 'torch') if m in sys.modules); "
            "print(rc, heavy, file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", code, str(proj)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.stderr.strip() == "0 []"
    assert json.loads(proc.stdout)["samples"] == {}


def test_status_summary_line_is_not_wrapped_when_piped(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Piped output is for scripts: rich wrapped the samples line at 80 columns ("ungrounded quotes: " / "0")."""
    from tests.gui_data import make_project

    monkeypatch.delenv("COLUMNS", raising=False)
    proj = make_project(tmp_path / "p.concord")
    data = json.loads(run(["status", str(proj), "--json"], capsys)[1])
    code, out, _ = run(["status", str(proj)], capsys)
    line = next(ln for ln in out.splitlines() if ln.startswith("samples: "))
    assert code == 0 and len(line) > 80
    own = data["scheme_counts"]["violations"]
    assert line.endswith(f"; ungrounded quotes: {own['ungrounded_violations']}")
    # the units table's "predicted" column: the scheme's own counts (status_text), on its own units only
    rows = [r for r in (ln.split("\t") for ln in out.splitlines()) if len(r) == 7 and r[0] in data["samples"]]
    predicted = {(r[0], r[1]): r[2] for r in rows}
    assert predicted and all(v == (str(own["predicted_violations"][u]) if s == "violations" and u in
                                   own["predicted_violations"] else "") for (s, u), v in predicted.items())
    assert any(v for v in predicted.values())


def test_output_into_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    """`concord status P --json | head -1` on a big project: the reader leaves, the write fails with EPIPE."""
    import os

    proj = tmp_path / "p.concord"
    Project.create(proj).close()
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([sys.executable, "-m", "app.cli", "status", str(proj), "--json"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=Path(__file__).resolve().parents[1])
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr and "BrokenPipeError" not in proc.stderr
    assert proc.returncode == 1
