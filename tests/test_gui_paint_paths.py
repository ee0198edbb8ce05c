"""The faster GUI paths of issue #28 item 6 do what the slower ones did: the id columns' delegate (elision in
`initStyleOption`, Qt's own paint) against a plain delegate over the texts `elide_id` gives, pixel for pixel, on
generated ids of many lengths; its size hint still measures the whole text. A detail view's table laid out when its
model is reset, as Qt's deferred layout would, and painted once. The decisions' actions set as the uncached rule says.
The GUI thread's GIL hand-over interval."""
from __future__ import annotations

import random

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QStyledItemDelegate, QStyleOptionViewItem, QTableView

from app.gui.columns import IdDelegate, elide_id, shared_suffix, text_room
from app.gui.models import Column, RecordTableModel
from app.gui.views import base
from app.gui.views.base import make_table
from tests.gui_data import open_window, project_path, settings  # noqa: F401 - fixtures


def _ids(rng: random.Random, n: int) -> list[str]:
    heads = ["hotpotqa/", "prompt-baseline@1.1.0|", "s", "", "zeroshot-index@2.2.5|", "covidqa/"]
    tails = ["gpt-3.5-turbo-0613", "5a8b57f25542995d1e6f1371", "gpt-4o", "😀 cure", "x" * 60]
    return [f"{rng.choice(heads)}{rng.choice(tails)[: rng.randint(1, 60)]}{i}" for i in range(n)]


def _table(qtbot, texts: list[str], width: int) -> QTableView:  # type: ignore[no-untyped-def]
    model = QStandardItemModel(len(texts), 1)
    for r, t in enumerate(texts):
        model.setItem(r, 0, QStandardItem(t))
    view = QTableView()
    view.setFocusPolicy(Qt.FocusPolicy.NoFocus)  # no focus frame on one table and not the other
    qtbot.addWidget(view)
    view.setModel(model)
    view.setColumnWidth(0, width)
    view.resize(width + 60, 24 * len(texts) + 40)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_id_delegate_draws_the_elided_text_as_qt_draws_it(qtbot) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(28)
    for width in (70, 130, 260):
        texts = _ids(rng, 24)
        suffix = shared_suffix(texts)
        view = _table(qtbot, texts, width)
        delegate = IdDelegate(view)
        delegate.suffix = suffix
        view.setItemDelegateForColumn(0, delegate)
        view.viewport().repaint()
        drawn = view.viewport().grab().toImage()
        fm = view.fontMetrics()
        room = text_room(view, view.columnWidth(0) - 1)  # a cell is its column less the grid line
        expected = [elide_id(fm, t, room, suffix) for t in texts]
        assert expected != texts  # the widths elide some ids: the comparison below tests the elision
        ref = _table(qtbot, expected, width)
        ref.setItemDelegateForColumn(0, QStyledItemDelegate(ref))
        ref.viewport().repaint()
        assert ref.viewport().grab().toImage() == drawn, width
        plain = QStyledItemDelegate(view)
        opt = QStyleOptionViewItem()
        opt.initFrom(view)
        opt.rect = view.visualRect(view.model().index(0, 0))  # a cell's rect: what painting would elide to
        for r in range(len(texts)):  # sizes stay the whole text's (a column fitted to its contents)
            index = view.model().index(r, 0)
            assert delegate.sizeHint(opt, index) == plain.sizeHint(opt, index)


def test_a_reset_table_is_laid_out_at_once_as_the_deferred_layout_would(qtbot, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """make_table lays a table out when its model is reset (lay_out_now) instead of on Qt's zero-time timer: its
    first paint after the reset is its last (no second layout and paint), and it shows what a table left to Qt's
    deferred layout shows (section sizes and pixels), on random records."""
    rng = random.Random(6)
    cols = [Column("n", "N"), Column("rule", "Rule"), Column("quote", "Text"), Column("s", "Score", align_right=True)]
    fast = make_table(RecordTableModel(cols), (1, 2))
    slow = make_table(RecordTableModel(cols), (1, 2))
    slow.horizontalHeader().setModel(slow.model())  # Qt's own: the header reads the model and resets with it
    for c in range(len(cols)):
        slow.horizontalHeader().setSectionResizeMode(c, fast.horizontalHeader().sectionResizeMode(c))
    painted: list[int] = []

    class Count(QObject):
        def eventFilter(self, obj: QObject, event: QEvent) -> bool:
            if event.type() == QEvent.Type.Paint:
                painted.append(1)
            return False

    counter = Count()
    fast.viewport().installEventFilter(counter)
    fast.horizontalHeader().viewport().installEventFilter(counter)
    for t in (fast, slow):
        qtbot.addWidget(t)
        t.resize(700, 300)
        t.show()
        qtbot.waitExposed(t)
    QApplication.processEvents()  # the first show's own layout and paints
    words = "do not promise cures give dosage 😀 herbal liqueur guaranteed".split()
    for _ in range(12):
        recs = [{"n": i + 1, "rule": " ".join(rng.choices(words, k=rng.randint(1, 9))),
                 "quote": " ".join(rng.choices(words, k=rng.randint(0, 6))), "s": rng.random()}
                for i in range(rng.randint(0, 9))]
        fast.model().set_records(recs)
        now = [fast.horizontalHeader().sectionSize(c) for c in range(len(cols))]
        fast.repaint()  # the first paint after the reset
        first = fast.grab().toImage()
        painted.clear()
        QApplication.processEvents()
        assert painted == [], "the table was laid out again and repainted after its first paint"
        with monkeypatch.context() as m:  # the reference: Qt's own deferred layout only
            m.setattr(base, "lay_out_now", lambda table: None)
            slow.model().set_records(recs)
            QApplication.processEvents()
        assert now == [slow.horizontalHeader().sectionSize(c) for c in range(len(cols))]
        assert now == [fast.horizontalHeader().sectionSize(c) for c in range(len(cols))]
        assert first == fast.grab().toImage() == slow.grab().toImage()


def test_decisions_are_set_only_when_what_is_on_changes(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    """enable_decisions skips the 50 actions when the same view state comes again: in any order of views shown,
    failed renders and no unit, every action is on exactly when the uncached rule says."""
    from app.gui.window_parts import DECIDE

    w = open_window(project_path)
    chrome = w.chrome
    views = list(w.detail.views.values())
    rng = random.Random(3)
    for _ in range(40):
        view = rng.choice([*views, None])
        chrome.enable_decisions(view)
        supported = view.actions if view is not None else frozenset()
        for a in chrome.all_actions:
            want = (a.id in supported) if a.handler == "view" else (view is not None) if a.id in DECIDE else None
            if want is not None:
                assert chrome.actions_by_id[a.id].isEnabled() == want, (a.id, view)


def test_the_gui_takes_the_gil_back_within_a_millisecond(qapp) -> None:  # type: ignore[no-untyped-def]
    """application() shortens Python's thread switch interval (5 ms by default) to 1 ms: a worker thread running
    Python makes each GIL hand-over to the GUI thread wait up to that long, several times per frame."""
    import sys

    from app.gui.main import GIL_SWITCH_SECONDS, application

    old = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        application()
        assert sys.getswitchinterval() == GIL_SWITCH_SECONDS <= 0.001
    finally:
        sys.setswitchinterval(old)


def test_record_cells_are_styled_as_the_model_answers(qtbot) -> None:  # type: ignore[no-untyped-def]
    """make_table's CellDelegate styles a cell from the model's cell_style in one call; the same table with Qt's
    delegate (seven data() calls per cell) shows the same pixels and column widths, on random records with colours,
    right-aligned figures, empty and missing values, and a column whose format is not text (the standard way)."""
    from app.gui.models import fmt_score

    rng = random.Random(11)
    cols = [Column("n", "N"), Column("rule", "Rule"), Column("s", "Score", fmt_score, True, "tip"),
            Column("flag", "Flag"), Column("raw", "Raw", lambda v: v), Column("why", "Why")]
    fast = make_table(RecordTableModel(cols), len(cols) - 1)
    plain = make_table(RecordTableModel(cols), len(cols) - 1)
    plain.setItemDelegate(QStyledItemDelegate(plain))
    for t in (fast, plain):
        t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        qtbot.addWidget(t)
        t.resize(800, 320)
        t.show()
        qtbot.waitExposed(t)
    words = ["rule", "3:", "do", "not", "give", "dosage", "😀", "fails", "IoU,", "score", "✓", "✗"]
    for _ in range(10):
        recs = [{"n": i + 1, "rule": " ".join(rng.choices(words, k=rng.randint(0, 8))),
                 "s": rng.choice([None, rng.random(), float("nan"), 1.0]), "flag": rng.choice(["", "●", None]),
                 "raw": rng.choice([None, 3, 2.5, "x"]), "why": " ".join(rng.choices(words, k=rng.randint(0, 5))),
                 "_fg": rng.choice([None, "#9e9e9e"]), "_bg": rng.choice([None, "", "#e3f2fd", "#fff3e0"])}
                for i in range(rng.randint(0, 10))]
        fast.model().set_records(recs)
        plain.model().set_records(recs)
        QApplication.processEvents()
        assert [fast.columnWidth(c) for c in range(len(cols))] == [plain.columnWidth(c) for c in range(len(cols))]
        assert fast.grab().toImage() == plain.grab().toImage()


def test_cell_sizes_remembered_per_text_are_qts_own(qtbot) -> None:  # type: ignore[no-untyped-def]
    """CellDelegate's size hint, remembered per text and font, is the size Qt's delegate measures through data() for
    every cell, on random records of repeated and new texts (blank, empty, emoji, a figure), after the table's font
    changes (nothing remembered in the old font is used), and for a value that is not text (measured the standard way)."""
    from app.gui.models import fmt_score
    from app.gui.record_cells import CellDelegate

    rng = random.Random(5)
    cols = [Column("n", "N"), Column("rule", "Rule"), Column("s", "Score", fmt_score, True), Column("raw", "Raw", lambda v: v)]
    table = make_table(RecordTableModel(cols))
    qtbot.addWidget(table)
    table.show()
    qtbot.waitExposed(table)
    fast, plain = table.itemDelegate(), QStyledItemDelegate(table)
    assert isinstance(fast, CellDelegate)
    words = ["rule", "3:", "do", "not", "dosage", "😀", "✓", "✗", "●", ""]
    font = table.font()
    for size in (None, 17.0, None, 8.0):
        if size is not None:
            font.setPointSizeF(size)
            table.setFont(font)
        for _ in range(4):
            model = table.model()
            model.set_records([{"n": rng.choice([i, None, ""]), "rule": " ".join(rng.choices(words, k=rng.randint(0, 6))),
                                "s": rng.choice([None, rng.random(), 0.5]), "raw": rng.choice([None, 3, "x"])}
                               for i in range(rng.randint(1, 12))])
            option = QStyleOptionViewItem()
            option.initFrom(table)
            option.widget = table
            for r in range(model.rowCount()):
                for c in range(model.columnCount()):
                    index = model.index(r, c)
                    assert fast.sizeHint(option, index) == plain.sizeHint(option, index), (size, r, c)
    assert len(fast._sizes) > 1


def test_a_tables_titles_held_by_qt_show_as_the_models_own(qtbot) -> None:  # type: ignore[no-untyped-def]
    """make_table's header reads its titles from HeaderLabels: the same header pixels, section sizes and tooltips as a
    header reading the model's headerData, over resets with new rows and after a reset with other columns (other
    titles, one more and one fewer column); it asks the model for no header data between resets."""
    from app.gui.header_labels import HeaderLabels

    rng = random.Random(3)

    class Counted(RecordTableModel):
        asked = 0

        def headerData(self, *args):  # type: ignore[no-untyped-def]
            Counted.asked += 1
            return super().headerData(*args)

    first = [Column("n", "GT"), Column("rule", "Rule"), Column("s", "Weighted", align_right=True, tip="the score"),
             Column("why", "Why")]
    fast = make_table(Counted(first), (1, 3))
    plain = make_table(Counted(first), (1, 3))
    plain.horizontalHeader().setModel(plain.model())  # the model's own titles, through headerData
    for c in (1, 3):
        plain.horizontalHeader().setSectionResizeMode(c, fast.horizontalHeader().sectionResizeMode(c))
    assert isinstance(fast.horizontalHeader().model(), HeaderLabels)
    for t in (fast, plain):
        t.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        qtbot.addWidget(t)
        t.resize(700, 300)
        t.show()
        qtbot.waitExposed(t)
    words = ["rule", "do", "not", "give", "dosage", "😀", "✓", "a-much-longer-word-than-its-title"]
    layouts = [first, [Column("n", "#"), Column("rule", "A longer title than any cell"), Column("s", "S"),
                       Column("why", "Why", tip="why"), Column("x", "X")], first[:3]]
    for columns in layouts:
        for k in range(4):
            recs = [{"n": i, "rule": " ".join(rng.choices(words, k=rng.randint(0, 4))), "s": rng.random(),
                     "why": rng.choice(words), "x": rng.choice(["", "●"])} for i in range(rng.randint(0, 6))]
            for t in (fast, plain):
                t.model().set_records(recs, columns if k == 0 else None)
            QApplication.processEvents()
            hf, hp = fast.horizontalHeader(), plain.horizontalHeader()
            assert hf.count() == hp.count() == len(columns)
            assert [hf.sectionSize(c) for c in range(hf.count())] == [hp.sectionSize(c) for c in range(hp.count())]
            tips = [[h.model().headerData(c, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
                     for c in range(h.count())] for h in (hf, hp)]
            assert tips[0] == tips[1]
            assert fast.grab().toImage() == plain.grab().toImage()
            if recs:  # a decision's refresh: one row's texts change in place (dataChanged, no reset)
                changed = [dict(r) for r in recs]
                changed[-1]["rule"] = changed[-1]["why"] = "a much, much longer text than before " * rng.randint(0, 2)
                for t in (fast, plain):
                    t.model().update_records(changed)
                QApplication.processEvents()
                assert [hf.sectionSize(c) for c in range(hf.count())] == [hp.sectionSize(c) for c in range(hp.count())]
                assert fast.grab().toImage() == plain.grab().toImage()
        Counted.asked = 0  # between resets the header paints without asking the model; the model's own asks it
        fast.horizontalHeader().viewport().repaint()
        assert Counted.asked == 0
        plain.horizontalHeader().viewport().repaint()
        assert Counted.asked > 0


def test_the_review_list_draws_the_same_from_cell_style_as_from_data(qtbot, open_window, project_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The review list's cells (ids elided, status colours, right-aligned figures, several schemes' columns) drawn
    from UnitListModel.cell_style are the pixels the model's data() gave, selected row and accepted units included."""
    from app.gui.models import UnitListModel

    w = open_window(project_path)
    w.select_row(2)
    w.accept()
    QApplication.processEvents()
    for row in (2, 0, w.model.rowCount() - 1):
        w.select_row(row)
        QApplication.processEvents()
        w.list.viewport().repaint()
        fast = w.list.viewport().grab().toImage()
        with monkeypatch.context() as m:
            m.setattr(UnitListModel, "cell_style", lambda self, row, col: None)  # every cell the standard way
            w.list.viewport().repaint()
            assert w.list.viewport().grab().toImage() == fast, row


def test_the_first_unit_prefetches_after_the_window_opened(qtbot, project_path, settings, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Opening a project, the next units' scoring waits OPEN_PREFETCH_MS (the window's first layout and paint go
    first); every later unit prefetches at once, as before."""
    from app.gui import window_units
    from app.gui.window import MainWindow
    from app.store import Project

    calls: list[float] = []
    monkeypatch.setattr(window_units.DetailPanePart, "_prefetch", lambda self: calls.append(1))
    w = MainWindow(Project.open(project_path), "tester", settings=settings)
    qtbot.addWidget(w)
    w.show()
    QApplication.processEvents()
    assert w.current_view is not None and w.current_view.row is not None and calls == []
    qtbot.waitUntil(lambda: calls == [1], timeout=window_units.OPEN_PREFETCH_MS + 3000)
    w.select_row(1)
    QApplication.processEvents()
    assert calls == [1, 1]
