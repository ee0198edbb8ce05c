"""The faster paint paths of issue #28 item 6 draw what the slower ones drew: the id columns' delegate (elision in
`initStyleOption`, Qt's own paint) against a plain delegate over the texts `elide_id` gives, pixel for pixel, on
generated ids of many lengths; its size hint still measures the whole text."""
from __future__ import annotations

import random

from PySide6.QtCore import Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QStyledItemDelegate, QStyleOptionViewItem, QTableView

from app.gui.columns import IdDelegate, elide_id, shared_suffix, text_room


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
