"""ADDM view: reviews with ground-truth / claimed / human snippets, claimed incidents marked valid or invalid and
fixed by keys, a missing incident added by selecting review text, the human verdict, and the scores recomputed
live (this business and all businesses, ground truth vs human) with the policy's point sums."""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from app.gui.views import view_class
from app.io.demo import demo_dir
from app.store import Project
from calibration.schemes.addm import reference as ref
from calibration.schemes.addm.scheme import SCHEME
from calibration.schemes.addm.search import human_incidents
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures

SHIFT = Qt.KeyboardModifier.ShiftModifier
AMOS, DIRECT = "amos|demo-model", "direct|demo-model"


@pytest.fixture
def addm_path(tmp_path: Path) -> Path:
    """The demo's businesses, with markup in one review, and no human labels yet."""
    raws = [json.loads(line) for line in (demo_dir() / "addm.jsonl").read_text(encoding="utf-8").splitlines()]
    raws[2]["reviews"][0]["text"] += " <b>not bold</b>"
    path = tmp_path / "addm.concord"
    with Project.create(path) as p:
        p.samples.write_samples("addm", [SCHEME.parse(r).record for r in raws])
    return path


def _open(open_window, path, sample: str, unit: str):  # type: ignore[no-untyped-def]
    w = open_window(path)
    w.filters.scheme.setCurrentIndex(w.filters.scheme.findData("addm"))
    w.show_unit_by_key(sample, unit)
    view = w.current_view
    assert type(view) is view_class("addm") and view.current() == (sample, unit)
    return w, view


def _fig(view, name: str, col: str):  # type: ignore[no-untyped-def]
    return next(r for r in view.score_model.records() if r["figure"].strip().startswith(name))[col]


def _drag_select(qtbot, text, a: int, b: int) -> None:  # type: ignore[no-untyped-def]
    """Press at code point a, drag to b, release: a real mouse selection in the reviews pane."""
    def point(i: int) -> QPoint:
        cur = text.textCursor()
        cur.setPosition(text.text_map.to_qt(i))
        rect = text.cursorRect(cur)
        return QPoint(rect.x() + 1, rect.center().y())

    vp = text.viewport()
    qtbot.mousePress(vp, Qt.MouseButton.LeftButton, pos=point(a))
    QTest.mouseMove(vp, point(b))
    qtbot.mouseRelease(vp, Qt.MouseButton.LeftButton, pos=point(b))


def _with(rec, incidents):  # type: ignore[no-untyped-def]
    return replace(rec, incidents=human_incidents(incidents))


def test_valid_severity_modifiers_verdict_and_live_scores(qtbot, open_window, addm_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, addm_path, "tr-005", DIRECT)
    p = w.project
    rec = view.record
    kinds = {s.kind for s in view.text.spans}
    assert {"gt", "pred"} <= kinds and "addm_human" not in kinds  # no human incidents yet
    # r1 claimed severe (GT mild): valid; r2 claimed with an unfindable snippet: valid; r3 not claimed: missed
    assert [(r["review"], r["state"]) for r in view.inc_model.records()] == [
        ("tr-005-r1", "valid"), ("tr-005-r2", "valid"), ("tr-005-r3", "missed")]
    assert _fig(view, "Process", "b_gt") == pytest.approx(ref.process([rec], DIRECT))
    assert _fig(view, "Process", "b_h") == _fig(view, "Process", "b_gt")  # no human edits yet
    assert "its evidence: 30 pts → Critical Risk" in view.verdicts.text()  # two severe claims
    assert view.verdicts.text().count("pts →") == 3

    qtbot.keyClick(w.list, Qt.Key.Key_T)
    assert view.sel == 0
    qtbot.keyClick(w.list, Qt.Key.Key_Y)  # r1: not an incident after all
    inc = p.decisions.current("tr-005", "", "incidents", "tester")
    assert [x["review_id"] for x in inc] == ["tr-005-r2", "tr-005-r3"]
    assert p.decisions.current("tr-005", DIRECT, "status", "tester") == "corrected"
    assert view.inc_model.records()[0]["state"] == "invalid"
    assert _fig(view, "Process", "b_h") == pytest.approx(ref.process([_with(rec, inc)], DIRECT))
    assert _fig(view, "Incident Precision", "b_h") == pytest.approx(50.0)  # 1 of 2 claimed reviews
    assert _fig(view, "Process", "b_gt") == pytest.approx(ref.process([rec], DIRECT))  # GT side unchanged

    qtbot.keyClick(w.list, Qt.Key.Key_7)  # severity mild: the claim is valid again, with the human's severity
    qtbot.keyClick(w.list, Qt.Key.Key_F, SHIFT)  # + false assurance
    inc = {x["review_id"]: x for x in p.decisions.current("tr-005", "", "incidents", "tester")}
    assert inc["tr-005-r1"]["severity"] == "mild" and inc["tr-005-r1"]["modifiers"] == ["False assurance"]
    assert view.inc_model.records()[0]["human"] == "mild +FA" and view.inc_model.records()[0]["state"] == "valid"
    assert any(s.kind == "addm_human" for s in view.text.spans)  # the human's snippets are highlighted now
    truth = p.decisions.current("tr-005", "", "incidents", "tester")
    assert _fig(view, "Severity Accuracy", "b_h") == pytest.approx(100 * ref.components([_with(rec, truth)], DIRECT)["severity_accuracy"])

    qtbot.keyClick(w.list, Qt.Key.Key_C, SHIFT)  # human verdict Critical
    assert p.decisions.current("tr-005", "", "verdict", "tester") == "Critical Risk"
    assert "Human: Critical Risk" in view.verdicts.text()
    assert "human incidents: 24 pts → Critical Risk" in view.verdicts.text()  # 2 + 5 + 15 + 2
    qtbot.keyClick(w.list, Qt.Key.Key_C, SHIFT)  # again: cleared
    assert p.decisions.current("tr-005", "", "verdict", "tester") is None
    qtbot.keyClick(w.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)  # undo restores the verdict
    assert p.decisions.current("tr-005", "", "verdict", "tester") == "Critical Risk"
    # all businesses: the ground-truth side is the reference over the corpus, the human side uses this business's edits
    records = p.samples.records("addm")
    assert _fig(view, "Process", "a_gt") == pytest.approx(ref.process(records, DIRECT))
    swapped = [_with(r, truth) if r.id == "tr-005" else r for r in records]
    swapped = [replace(r, verdict=2) if r.id == "tr-005" else r for r in swapped]
    assert _fig(view, "Process", "a_h") == pytest.approx(ref.process(swapped, DIRECT))
    assert _fig(view, "AUPRC", "a_h") == pytest.approx(100 * ref.auprc(swapped, DIRECT))


def test_add_missing_incident_by_selecting_text(qtbot, open_window, addm_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, addm_path, "tr-001", AMOS)  # no incidents anywhere
    p = w.project
    assert view.rows == []
    r = view.record.reviews[2]
    start = view.text.toPlainText().index(r.text) + r.text.index("sesame allergy")
    _drag_select(qtbot, view.text, start, start + len("sesame allergy"))  # with the mouse
    assert view.selected_text() == (r.review_id, "sesame allergy")
    qtbot.keyClick(view.text, Qt.Key.Key_Insert, SHIFT)  # the key pressed where the text was selected
    inc = p.decisions.current("tr-001", "", "incidents", "tester")
    assert inc == [{"review_id": r.review_id, "severity": "mild", "modifiers": [], "snippet": "sesame allergy"}]
    assert [x["state"] for x in view.inc_model.records()] == ["missed"] and view.sel == 0
    assert any(s.kind == "addm_human" for s in view.text.spans)
    qtbot.keyClick(view.text, Qt.Key.Key_8)
    assert p.decisions.current("tr-001", "", "incidents", "tester")[0]["severity"] == "moderate"
    # amos claimed nothing: precision 1.0 (no claims) on both sides; the human verdict line counts 5 points
    assert "moderate" in view.inc_model.records()[0]["human"] and "5 pts → High Risk" in view.verdicts.text()
    # a selection across two reviews is refused with a message, nothing written
    cur = view.text.textCursor()
    cur.setPosition(0)
    cur.setPosition(len(view.text.toPlainText()) - 1, QTextCursor.MoveMode.KeepAnchor)
    view.text.setTextCursor(cur)
    with qtbot.waitSignal(view.message):
        qtbot.keyClick(w.list, Qt.Key.Key_Insert, SHIFT)
    assert len(p.decisions.current("tr-001", "", "incidents", "tester")) == 1


def test_accept_takes_the_methods_claims(qtbot, open_window, addm_path):  # type: ignore[no-untyped-def]
    w, view = _open(open_window, addm_path, "tr-005", AMOS)
    p = w.project
    qtbot.keyClick(w.list, Qt.Key.Key_A)
    ev = view.record.methods[AMOS].evidences if view.record.id == "tr-005" else None
    got = p.decisions.current("tr-005", "", "incidents", "tester")
    assert ev is not None and [(x["review_id"], x["severity"]) for x in got] == [(e.review_id, e.severity) for e in ev]
    assert p.decisions.current("tr-005", AMOS, "status", "tester") == "accepted"
    assert p.decisions.current("tr-005", "", "verdict", "tester") == SCHEME.to_json(view.record)["methods"][AMOS]["verdict"]


def test_large_projects_leave_all_business_scores_to_evaluate(qtbot, open_window, addm_path, monkeypatch):  # type: ignore[no-untyped-def]
    import app.schemes.addm.views as addm_view

    monkeypatch.setattr(addm_view, "CORPUS_LIMIT", 10)  # the demo's 15 businesses count as "large" here
    w, view = _open(open_window, addm_path, "tr-005", DIRECT)
    assert view.corpus is None and "concord evaluate" in view.score_title.text()
    assert _fig(view, "Process", "a_gt") is None and _fig(view, "Process", "b_gt") is not None


def test_blind_mode_counts_only_the_annotators_own_labels(qtbot, open_window, addm_path):  # type: ignore[no-untyped-def]
    from app.store import Change as Ch

    with Project.open(addm_path) as p:  # another annotator's verdict on a business the tester never labels
        p.decisions.record("other", [Ch("tr-008", "", "verdict", "Low Risk"), Ch("tr-008", "", "incidents", [])])
    w, view = _open(open_window, addm_path, "tr-005", DIRECT)
    assert "tr-008" in view.corpus.human  # resolved labels: the other annotator's count
    view.ctx.blind_as = lambda: "tester"
    view.refresh()
    assert "tr-008" not in view.corpus.human
    assert _fig(view, "Process", "a_h") == pytest.approx(_fig(view, "Process", "a_gt"))  # tester labeled nothing yet
