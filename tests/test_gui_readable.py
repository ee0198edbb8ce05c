"""Issue #27 items 1 and 2 on a project built like the real files (tests/long_ids_data.py: RAGBench-like
`hotpotqa/5a…` ids, Hugging Face model names, long ADDM methods): in every scheme's view, at 1280×800 and at the
default size, no visible label or header cuts its text (tests/clipped_text.py), the review list keeps Status in view
and shows ids that share a prefix as different texts; dragged column widths are remembered per scheme."""
from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QSettings, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from app.gui.columns import elide_id, shared_suffix, text_room
from app.gui.main import grab
from app.gui.screenshots import _select
from app.gui.window import DEFAULT_SIZE, MainWindow
from app.store import Project
from tests.clipped_text import clipped
from tests.gui_data import shown_tooltip
from tests.long_ids_data import make_long_ids_project


@pytest.fixture(scope="module")
def long_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("long_ids")
    return make_long_ids_project(work / "long.concord", work / "files")


def _window(qtbot, path: Path, settings: QSettings, size: tuple[int, int]) -> MainWindow:  # type: ignore[no-untyped-def]
    w = MainWindow(Project.open(path), "tester", settings=settings, record_time=False)
    qtbot.addWidget(w)
    w.resize(*size)
    w.show()
    qtbot.waitExposed(w)
    w.fit_panes()
    QApplication.processEvents()
    return w


def _shown_cells(w: MainWindow, col: int) -> list[str]:
    """The review list's texts in `col` as its delegate draws them (elided to the column's width)."""
    fm = w.list.fontMetrics()
    width = text_room(w.list, w.list.columnWidth(col))
    suffix = w.list.itemDelegateForColumn(col).suffix
    return [elide_id(fm, w.model.data(w.model.index(r, col)) or "", width, suffix) for r in range(w.model.rowCount())]


@pytest.mark.parametrize("size", [(1280, 800), DEFAULT_SIZE], ids=["1280x800", "default"])
def test_no_text_is_cut_in_any_view(qtbot, long_project, tmp_path, size) -> None:  # type: ignore[no-untyped-def]
    w = _window(qtbot, long_project, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), size)
    schemes = list(w.filters.schemes)
    assert {"violations", "rubric", "trace", "rgb", "addm", "judge"} <= set(schemes)
    for scheme in [*schemes, None]:  # None: every scheme at once (the list's summary column)
        if scheme is None:
            w.filters.scheme.setCurrentIndex(0)
            w.select_row(0)
        else:
            _select(w, None, scheme)
        grab(w, tmp_path / f"{scheme or 'all'}.png")  # rendered as the docs' screenshots are
        assert clipped(w) == [], scheme
        assert w.list.viewport().width() >= 400, scheme  # no long instruction in the view squeezes the list
        header, status = w.list.horizontalHeader(), w.model.column_of("status")
        assert 0 <= header.sectionViewportPosition(status)
        assert header.sectionViewportPosition(status) + header.sectionSize(status) <= w.list.viewport().width(), scheme
        ids = [w.model.row(r)["sample_id"] for r in range(w.model.rowCount())]
        shown = dict(zip(_shown_cells(w, 0), ids))
        assert len(shown) == len(set(ids)), f"{scheme}: ids sharing a prefix read the same"
        units = {w.model.row(r)["unit"] for r in range(w.model.rowCount())}
        assert len(set(_shown_cells(w, 2))) == len(units), scheme
    w.close()


def test_ids_elide_in_the_middle_keeping_their_leading_part(qapp) -> None:  # type: ignore[no-untyped-def]
    fm = QFontMetrics(QApplication.font())
    a, b = "hotpotqa/5a8b57f25542995d1e6f1371", "hotpotqa/5a8b57f255429953e0aa9b2c"
    width = fm.horizontalAdvance("hotpotqa/…5542995d1e6f1371") + 2
    assert elide_id(fm, a, width).startswith("hotpotqa/…") and elide_id(fm, a, width).endswith("1371")
    assert elide_id(fm, a, width) != elide_id(fm, b, width)
    assert fm.horizontalAdvance(elide_id(fm, a, width)) <= width
    assert elide_id(fm, a, 10_000) == a
    narrow = elide_id(fm, "prompt-baseline@1.1.0|gpt-3.5-turbo-0613", 60)  # no room for the leading part: Qt's
    assert "…" in narrow and fm.horizontalAdvance(narrow) <= 60
    checkers = ["prompt-baseline@1.1.0|gpt-3.5-turbo-0613", "zeroshot-index@2.2.5|gpt-3.5-turbo-0613"]
    suffix = shared_suffix(checkers)  # the model every checker ran on is dropped first, the names stay whole
    assert suffix == "|gpt-3.5-turbo-0613" and shared_suffix(checkers[:1]) == ""
    width = fm.horizontalAdvance("prompt-baseline@1.1.0|…") + 2
    assert [elide_id(fm, c, width, suffix) for c in checkers] == ["prompt-baseline@1.1.0|…", "zeroshot-index@2.2.5|…"]


def _drag(qtbot, w: MainWindow, col: int, dx: int) -> None:  # type: ignore[no-untyped-def]
    """Drag the right edge of the list's column `col` by `dx` pixels, as a user does."""
    header = w.list.horizontalHeader()
    x = header.sectionViewportPosition(col) + header.sectionSize(col) - 1
    y = header.height() // 2
    qtbot.mousePress(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x, y))
    qtbot.mouseMove(header.viewport(), QPoint(x + dx // 2, y))
    qtbot.mouseMove(header.viewport(), QPoint(x + dx, y))
    qtbot.mouseRelease(header.viewport(), Qt.MouseButton.LeftButton, pos=QPoint(x + dx, y))


def test_dragged_widths_are_remembered_per_scheme(qtbot, long_project, tmp_path) -> None:  # type: ignore[no-untyped-def]
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    w = _window(qtbot, long_project, settings, DEFAULT_SIZE)
    _select(w, None, "trace")
    unit = w.model.column_of("unit")
    before = w.list.columnWidth(unit)
    _drag(qtbot, w, unit, 40)
    dragged = w.list.columnWidth(unit)
    assert dragged >= before + 30
    assert int(settings.value("list_columns/trace/unit")) == dragged
    _select(w, None, "rgb")
    assert settings.value("list_columns/rgb/unit") is None  # another scheme keeps its own widths
    _select(w, None, "trace")
    assert w.list.columnWidth(unit) == dragged
    w.close()
    again = _window(qtbot, long_project, settings, DEFAULT_SIZE)  # the next session too
    _select(again, None, "trace")
    assert again.list.columnWidth(unit) == dragged
    again.close()


def test_list_headers_say_their_whole_title_on_hover(qtbot, long_project, tmp_path) -> None:  # type: ignore[no-untyped-def]
    w = _window(qtbot, long_project, QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), (1280, 800))
    _select(w, None, "trace")
    for col, c in enumerate(w.model.columns):
        tip = shown_tooltip(w.model.headerData(col, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole))
        assert tip.startswith(c.header)
    sample = w.model.data(w.model.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    assert shown_tooltip(sample) == w.model.row(0)["sample_id"]  # the whole id, as plain text
    w.close()


def test_a_wrapped_sentence_keeps_its_height_under_a_chart_in_a_splitter(qtbot) -> None:  # type: ignore[no-untyped-def]
    """The learning curve's axis title was drawn under the stopping-rule sentence: a splitter gave the box its
    minimum, which did not count the sentence's wrapped lines, and the layout overlapped the two."""
    from PySide6.QtWidgets import QSplitter, QVBoxLayout, QWidget

    from app.gui.charts import IntervalChart
    from app.gui.fitting import FitLabel

    split = QSplitter(Qt.Orientation.Vertical)
    qtbot.addWidget(split)
    split.addWidget(QWidget())
    box = QWidget()
    lay = QVBoxLayout(box)
    chart, sentence = IntervalChart(), FitLabel()
    lay.addWidget(chart, 1)
    lay.addWidget(sentence)
    split.addWidget(box)
    sentence.setText("Half-width 0.056 with 120 labeled units; about 33 more labels (153 in all) are expected to "
                     "bring it under 0.050 (fit: half-width ~ 0.515/sqrt(n)).\nNo score at 15: folds: 5 folds need "
                     "at least 5 labeled samples, got 4")
    split.resize(420, 300)
    split.show()
    qtbot.waitExposed(split)
    split.setSizes([10_000, 1])  # the box squeezed to its minimum
    QApplication.processEvents()
    assert sentence.height() >= sentence.heightForWidth(sentence.width())  # every line shown
    assert chart.geometry().bottom() < sentence.geometry().top()  # and nothing drawn under it
