"""Data from files is plain text everywhere in the GUI, tooltips included: markup in every field is shown as typed,
never rendered (no bold, no broken image, "&amp;" stays "&amp;")."""
from __future__ import annotations

from pathlib import Path

from PySide6 import QtGui
from PySide6.QtCore import QEvent, QPoint, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor
from PySide6.QtWidgets import QApplication, QInputDialog, QLabel, QListWidget, QToolTip

from app.corrections import set_note
from app.gui.calibration_panel import CalibrationPanel
from app.gui.export_dialog import ExportDialog
from app.gui.models import TOOLTIP
from app.gui.plaintext import ask_text, plain_message, plain_tooltip
from app.store import Project
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.violations.records import Violation, ViolationSample
from tests.gui_data import JACCARD_STD, TRAIT, open_window, settings, shown_tooltip  # noqa: F401 - fixtures

MARK = "<b>bold</b> &amp; <img src=x>"
SID = "v<b>1</b>&amp;"
CHECKER = "chk<i>x</i>&amp;@1.0.0|m<b>"
RID = "r<b>1</b>"
TRAIT_NAME = "cov<b>x</b>"
TEXT = f"Text with {MARK} inside and more."


def markup_project(path: Path) -> Path:
    i = TEXT.index(MARK)
    v = Violation(MARK, i, i + len(MARK), category=MARK, explanation=MARK, correction=MARK)
    p_ = Violation(MARK, i, i + 9, category=MARK, explanation=MARK, correction=MARK)
    trait = {**TRAIT, "name": TRAIT_NAME, "description": MARK, "tp_instructions": [MARK, "b"], "tn_instructions": [MARK]}
    rubric = RubricSample(RID, f"Q {MARK}", f"Resp {MARK} end", (trait,),
                          {TRAIT_NAME: {"tp": [MARK], "fn": [MARK], "fp": ["end"], "tn": []}})
    with Project.create(path) as p:
        p.store("violations").write_violation_samples([ViolationSample(SID, TEXT, (v,), {CHECKER: (p_,)})])
        p.store("rubric").write_rubric_samples([rubric])
        p.store("violations").save_match_config(JACCARD_STD)
    return path


def described(label: str) -> str:
    return f"{label}: {MARK}\ncategory: {MARK}\nexplanation: {MARK}\ncorrection: {MARK}"


def tips(model) -> list[str]:  # type: ignore[no-untyped-def]
    return [model.data(model.index(r, c), TOOLTIP) for r in range(model.rowCount()) for c in range(model.columnCount())]


def labels_are_plain(widget, must_show: str) -> int:  # type: ignore[no-untyped-def]
    """Every QLabel under `widget` showing markup is plain text; returns how many show `must_show`."""
    n = 0
    for lab in widget.findChildren(QLabel):
        if lab.objectName() == "qtooltip_label":  # QToolTip's own label: its text is plain_tooltip's escaped markup
            continue
        text = lab.text()
        if "<" in text or "&" in text:
            assert lab.textFormat() == Qt.TextFormat.PlainText, (lab.objectName(), text)
        n += must_show in text
    return n


def span_tooltip(view) -> str:  # type: ignore[no-untyped-def]
    """Hover the first span of a SpanTextView: the tooltip Qt is asked to show."""
    span = view.spans[0]
    cur = QTextCursor(view.document())
    cur.setPosition(view.qt_range(span)[0] + 1)
    rect = view.cursorRect(cur)
    pos = QPoint(rect.x() + 1, rect.center().y())
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
    return QToolTip.text()


def test_markup_in_every_field_is_shown_literally(qtbot, open_window, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    w = open_window(markup_project(tmp_path / "markup.concord"))
    w.session.do(set_note(SID, CHECKER, f"note {MARK}"))
    view = w.current_view
    assert view.current() == (SID, CHECKER)

    # the review list: sample id and checker / trait
    m = w.model
    list_tips = {shown_tooltip(m.data(m.index(r, c), TOOLTIP)) for r in range(m.rowCount()) for c in (0, 2)}
    assert list_tips == {SID, CHECKER, RID, TRAIT_NAME}

    # ground truth and prediction rows: rule, category, explanation and correction
    assert {shown_tooltip(t) for t in tips(view.gt_model)} == {described("GT 1")}
    assert {shown_tooltip(t) for t in tips(view.pred_model)} == {described("Prediction 1")}
    assert all(QtGui.Qt.mightBeRichText(t) for t in tips(view.gt_model))  # rich text that renders as the raw string
    # hovering a span in the text
    assert shown_tooltip(span_tooltip(view.text)) in (described("GT 1") + "\n" + described("Prediction 1"),
                                                      described("Prediction 1") + "\n" + described("GT 1"))
    assert view.title.text() == f"Sample {SID}" and view.note.text() == f"Note: note {MARK}"
    assert labels_are_plain(w, MARK) >= 1 and labels_are_plain(w, SID) >= 1

    # the rubric view: bucket excerpts and trait text
    w.show_unit_by_key(RID, TRAIT_NAME)
    rv = w.current_view
    assert rv.current() == (RID, TRAIT_NAME)
    assert shown_tooltip(tips(rv.bucket_models["tp"])[0]) == MARK
    assert shown_tooltip(span_tooltip(rv.response)) == f"TP: {MARK}"
    assert MARK in rv.trait_info.text() and TRAIT_NAME in rv.title.text()
    assert labels_are_plain(w, MARK) >= 2

    # the failed-unit page and the message bar (an error quoting data)
    w.messages.show_message("x", f"Could not show sample {SID}", detail=f"detail {MARK}")
    assert w.messages.texts()[-1].startswith(f"Could not show sample {SID}")
    assert shown_tooltip(w.messages.row("x").label.toolTip()) == f"detail {MARK}"
    w._show_failed({"sample_id": SID, "unit": CHECKER}, RuntimeError(MARK))
    assert SID in w.failed_page.text()
    assert labels_are_plain(w, SID) >= 2

    # the note dialog's label names the unit
    seen = []

    def fake_exec(dlg) -> int:  # type: ignore[no-untyped-def]
        seen.extend((lab.text(), lab.textFormat()) for lab in dlg.findChildren(QLabel))
        return 0

    monkeypatch.setattr(QInputDialog, "exec", fake_exec)
    ask_text(w, "Note", f"Note on {SID} / {CHECKER}:", multiline=True)
    assert (f"Note on {SID} / {CHECKER}:", Qt.TextFormat.PlainText) in seen
    box = plain_message(w, "Concord", f"{MARK} is not a project")
    assert box.textFormat() == Qt.TextFormat.PlainText and box.text() == f"{MARK} is not a project"


def test_dialogs_show_data_as_plain_text(qtbot, open_window, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(markup_project(tmp_path / "markup.concord"))
    dlg = ExportDialog.open_for(w.panels)
    qtbot.addWidget(dlg)
    units = dlg.findChild(QListWidget)
    assert {units.item(i).text() for i in range(units.count())} == {CHECKER, TRAIT_NAME}  # item text is never rich
    dlg.version.setText(MARK)  # an invalid version quoting markup: the problem is shown as typed
    qtbot.waitUntil(lambda: MARK in dlg.problems.text(), timeout=20000)
    labels_are_plain(dlg, MARK)
    dlg.close()
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    panel.page.dis_model.set_records([{"sample_id": SID, "checker": CHECKER, "gt": 0, "pred": 0, "gt_n": 1, "pred_n": 1,
                                       "score": 0.5, "machine": "no", "human": "match", "_tip": f"open {SID}"}])
    assert shown_tooltip(panel.page.dis_model.data(panel.page.dis_model.index(0, 0), TOOLTIP)) == f"open {SID}"
    panel.messages.show_message("apply", f"Could not apply {MARK}")
    labels_are_plain(panel, MARK)
    w.runner.wait_all(30000)
    panel.close()


def test_plain_tooltip_round_trips_any_text() -> None:
    for text in (MARK, "a  b\n  c\td", "\"q\" 'x' &lt; &#169; &copy;", "line1\n\nline3 ", " lead", "<qt>x</qt>", "ø 😀"):
        assert shown_tooltip(plain_tooltip(text)) == text
    assert plain_tooltip("") == ""
