"""Code points vs UTF-16: spans in text with emoji and CRLF land on the right characters; text stays plain."""
from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint

from app.gui.spantext import Span, SpanTextView
from app.gui.textmap import TextMap
from tests.gui_data import C1, EMOJI_TEXT, open_window, project_path, settings  # noqa: F401 - fixtures


@pytest.mark.parametrize("text", ["plain ascii", EMOJI_TEXT, "a\r\nb😀c\r\n\r\nd", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ü 😀", "", "x\ry\u2028z"])
def test_textmap_round_trip(qtbot, text: str) -> None:  # type: ignore[no-untyped-def]
    m = TextMap(text)
    view = SpanTextView()
    qtbot.addWidget(view)
    view.set_content(text, [])
    doc = view.document()
    assert m.to_qt(len(text)) == doc.characterCount() - 1
    for i in range(len(text) + 1):
        assert m.from_qt(m.to_qt(i)) == i or text[i : i + 2] == "\r\n"  # CR of CRLF shares its position


def test_emoji_spans_highlight_the_right_characters(qtbot) -> None:  # type: ignore[no-untyped-def]
    text = EMOJI_TEXT
    view = SpanTextView()
    qtbot.addWidget(view)
    quotes = ["😀😀", "team", "<b>now</b>", "🚀", "please"]
    spans = [Span(text.index(q), text.index(q) + len(q), "gt" if i % 2 else "pred", ("x", i), q) for i, q in enumerate(quotes)]
    view.set_content(text, spans)
    got = sorted(sel.cursor.selectedText() for sel in view.extraSelections())
    assert got == sorted(quotes)
    # without the conversion the last span would be shifted by the three astral characters before it
    naive = view.textCursor()
    naive.setPosition(text.index("please"))
    naive.setPosition(text.index("please") + 6, naive.MoveMode.KeepAnchor)
    assert naive.selectedText() != "please"
    assert view.toPlainText() == text  # markup shown as text, never interpreted


def test_tooltip_hit_testing_uses_code_points(qtbot) -> None:  # type: ignore[no-untyped-def]
    text = "😀😀😀 rule here"
    view = SpanTextView()
    qtbot.addWidget(view)
    view.resize(400, 200)
    view.show()
    qtbot.waitExposed(view)
    start = text.index("rule")
    view.set_content(text, [Span(start, start + 4, "gt", ("gt", 0), "GT 1: no rules")])
    cur = view.textCursor()
    cur.setPosition(view.text_map.to_qt(start + 1))
    rect = view.cursorRect(cur)
    hits = view.span_hits_at_point(rect.x() + 2, rect.center().y())
    assert [h.tooltip for h in hits] == ["GT 1: no rules"]
    cur.setPosition(view.text_map.to_qt(1))
    rect = view.cursorRect(cur)
    assert view.span_hits_at_point(rect.x() + 2, rect.center().y()) == []
    assert view.viewport().rect().contains(QPoint(rect.x() + 2, rect.center().y()))


def test_violations_view_emoji_and_crlf_sample(qtbot, open_window, project_path):  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.show_unit_by_key("v2", C1)
    view = w.current_view
    assert view.current() == ("v2", C1)
    by_key = {}
    for sel in view.text.extraSelections():
        by_key.setdefault(sel.format.property(0x100000), []).append(sel.cursor.selectedText())
    assert sorted(by_key["gt"]) == sorted(["😀😀", "now"])
    assert sorted(by_key["pred"]) == sorted(["🚀", "<b>now</b>"])
    assert "<b>now</b>" in view.text.toPlainText()

    w.show_unit_by_key("v3", C1)
    texts = sorted(sel.cursor.selectedText() for sel in w.current_view.text.extraSelections())
    assert texts == sorted(["cures anxiety in 3 days", "cures anxiety", "Guaranteed results"])
