"""Names are data, not terminal commands (issue #24 item 7): control characters are refused wherever a name enters
(exit 2 naming the source), what reaches the terminal is escaped, names are NFC so one person typed two ways is one
annotator, names that differ only by case are pointed out, and every --scheme refuses an unknown scheme."""
from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.cli_options import scheme_name
from app.names import BadNameError, annotator_name, terminal_safe
from app.store import Change, Project
from tests.gui_data import C1, make_project

NFC, NFD = unicodedata.normalize("NFC", "josé"), unicodedata.normalize("NFD", "josé")
HOSTILE = ["ana\x1b[2J", "\u202eana", "a\u200bna", "ana\nben", "ana\x00", "an\u2028a", "\udcffana"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "n.concord")


def _digest(path: Path) -> str:
    with Project.open(path) as p:  # the content, not the bytes (opening may checkpoint the WAL)
        rows = [p.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("annotators", "assignments", "events", "meta")]
    return hashlib.sha256(repr(rows).encode()).hexdigest()


def _parse_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return err


def test_the_name_function(capsys: pytest.CaptureFixture[str]) -> None:
    assert annotator_name(f"  {NFD} ", "x") == NFC and len(NFC) == 4
    for bad in HOSTILE:
        with pytest.raises(BadNameError, match=r"^--who: annotator name '.*' contains ") as exc:
            annotator_name(bad, "--who")
        assert terminal_safe(str(exc.value)) == str(exc.value)  # the message itself prints nothing raw
    assert terminal_safe("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    assert terminal_safe("josé [bold]") == "josé [bold]"


@pytest.mark.parametrize("bad", HOSTILE)
def test_assign_work_refuses_control_characters(project: Path, bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest(project)
    err = _parse_error(["assign-work", str(project), "--annotators", f"{bad},ben", "--overlap", "1"], capsys)
    assert "argument --annotators: annotator name" in err and "\x1b" not in err and "\u202e" not in err
    assert _digest(project) == before


def test_names_already_stored_are_printed_escaped(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Project.open(project) as p, p.transaction() as c:  # a name from before names were checked
        c.execute("INSERT INTO assignments (sample_id, unit, annotator, created_at) VALUES ('v1', ?, 'eve\x1b[2J', 't')",
                  (C1,))
    assert main(["assign-work", str(project), "--annotators", "ana", "--overlap", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "eve\\x1b[2J\t1 unit(s) in queue" in out


def test_agreement_prints_names_escaped(project: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["ana\x1b[31m", "[bold]ben[/bold]\u202e"]

    def fake(*args: Any, **kwargs: Any) -> dict[str, Any]:
        return {"schemes": {"violations": {"matches": {"n_items": 2, "overall": {}}}}, "overall": {},
                "pairs": [{"a": names[0], "b": names[1], "n_items": 2}],
                "annotators": [{"annotator": n, "n_labels": 1, "n_units": 1} for n in names]}

    monkeypatch.setattr("app.services.agreement.agreement", fake)
    assert main(["agreement", str(project)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out
    assert "ana\\x1b[31m" in out and "[bold]ben[/bold]\\u202e" in out  # escaped, and not taken as rich markup


def test_one_person_typed_two_ways_is_one_annotator(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Project.open(project) as p:
        p.decisions.record(NFC, [Change("v1", C1, "matches", [[0, 0]])])
        p.decisions.record(NFD, [Change("v1", C1, "matches", [[0, 0]])])  # the same decision by the same person: a no-op
        p.decisions.ensure_annotator(NFD)
        assert p.decisions.annotators() == [NFC] and len(p.decisions.events()) == 1
    assert main(["assign-work", str(project), "--annotators", f"{NFD},ben", "--overlap", "1", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["totals"]) == {NFC, "ben"}


def test_names_that_differ_only_by_case_are_pointed_out(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with Project.open(project) as p:
        p.decisions.ensure_annotator("ana")
    assert main(["assign-work", str(project), "--annotators", "Ana,ben", "--overlap", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: annotator names that differ only by case are different annotators: 'Ana' and 'ana'" in err
    assert main(["assign-work", str(project), "--annotators", "ben", "--overlap", "1"]) == 0
    assert "differ only by case" not in capsys.readouterr().err


def test_labels_import_checks_and_normalises_the_annotator(project: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = [{"sample": "v1", "checker": C1, "annotator": "ben", "matches": []},
             {"sample": "v1", "checker": C1, "annotator": "eve\x1b]0;pwned\x07", "matches": [[0, 0]]}]
    bad.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    before = _digest(project)
    assert main(["labels", "import", str(project), str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:2" in err and "annotator" in err and "contains a control character (U+001B)" in err
    assert "\x1b" not in err and "\x07" not in err and "Traceback" not in err
    assert _digest(project) == before
    good = tmp_path / "good.jsonl"
    with Project.open(project) as p:
        p.decisions.ensure_annotator("Ben")
    lines = [{"sample": "v1", "checker": C1, "annotator": NFD, "matches": [[0, 0]]},
             {"sample": "v1", "checker": C1, "annotator": "ben", "matches": []}]
    good.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert main(["labels", "import", str(project), str(good)]) == 0
    err = capsys.readouterr().err
    assert f"{good}:2" in err and "'Ben' and 'ben'" in err
    with Project.open(project) as p:
        assert p.decisions.annotators() == ["Ben", NFC, "ben"]


COMMANDS = [["assign-work", "--annotators", "ana", "--overlap", "1"], ["agreement"], ["calibrate"], ["evaluate"],
            ["export", "--name", "x", "--version", "1.0.0"], ["queue"], ["assign"]]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_scheme_option_refuses_an_unknown_scheme(project: Path, command: list[str],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest(project)
    err = _parse_error([command[0], str(project), *command[1:], "--scheme", "bogus"], capsys)
    assert "argument --scheme: unknown scheme 'bogus'; valid: violations, rubric" in err
    with Project.open(project) as p:
        assert not p.assignments.blind() and not p.assignments.has_assignments()
    assert _digest(project) == before


def test_scheme_names_match_case_insensitively(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert scheme_name("RGB") == "rgb" and scheme_name(" Violations") == "violations"
    assert main(["assign-work", str(project), "--annotators", "ana", "--overlap", "1", "--scheme", "RUBRIC",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["units"] > 0
    with Project.open(project) as p:
        assert {p.conn.execute("SELECT scheme FROM units WHERE sample_id = ?", (s,)).fetchone()[0]
                for s, _ in p.assignments.assigned_units("ana")} == {"rubric"}


def test_gui_refuses_a_bad_name_from_each_source(project: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QInputDialog

    from app.gui import main as gui_main

    err = _parse_error(["gui", str(project), "--annotator", "ana\x1b[2J", "--screenshot", str(tmp_path / "s.png")],
                       capsys)
    assert "argument --annotator: annotator name 'ana\\x1b[2J' contains" in err and "\x1b" not in err
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    monkeypatch.setenv("CONCORD_ANNOTATOR", "\u202eeve")
    with pytest.raises(BadNameError, match=r"^\$CONCORD_ANNOTATOR: "):
        gui_main.resolve_annotator(None, settings, ask=False)
    monkeypatch.delenv("CONCORD_ANNOTATOR")
    settings.setValue("annotator", "eve\x1b[2J")  # remembered before names were checked: forgotten, asked again
    typed = iter([("ana\x1b[2J", True), (f" {NFD} ", True)])
    prompts: list[str] = []
    monkeypatch.setattr(QInputDialog, "getText",
                        staticmethod(lambda parent, title, label: (prompts.append(label), next(typed))[1]))
    assert gui_main.resolve_annotator(None, settings, ask=True) == NFC
    assert len(prompts) == 2 and "plain text" in prompts[1] and "\x1b" not in prompts[1]
    assert settings.value("annotator") == NFC


def test_every_table_escapes_what_it_prints() -> None:
    """app.cli_tables.print_table, which every command's tables go through, on a terminal and as TSV."""
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from app.cli_tables import print_table

    for terminal in (True, False):
        buf = io.StringIO()
        table = Table(title="checker x\x1b[2J")
        table.add_column("name")
        table.add_column("id")
        table.add_row("ana\x1b[31m", Text("s\u202e1"))
        print_table(Console(file=buf, force_terminal=terminal, width=100), table)
        out = buf.getvalue()
        assert "\x1b[2J" not in out and "\x1b[31m" not in out and "\u202e" not in out, out
        assert "x\\x1b[2J" in out and "ana\\x1b[31m" in out and "s\\u202e1" in out
