"""Read-only plain text with highlighted spans (ground truth, predictions, excerpts) and span tooltips.

The text goes in with `setPlainText` only, so markup in a sample is shown, never interpreted. Spans are
ExtraSelections placed by TextMap (code points -> UTF-16 positions). Styles are chosen so overlapping
spans stay readable: ground truth is underlined, predictions get a background, the selected item a stronger tint.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from PySide6.QtCore import QEvent, QObject, QPoint, Qt
from PySide6.QtGui import QColor, QFont, QHelpEvent, QTextCharFormat, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from app.gui.plaintext import plain_tooltip
from app.gui.textmap import TextMap


@dataclass(frozen=True)
class Span:
    start: int  # code points, end exclusive
    end: int
    kind: str  # a key of STYLES
    key: tuple[str, int]  # e.g. ("gt", 0): what the span belongs to (for selection emphasis)
    tooltip: str = ""  # plain text


@dataclass(frozen=True)
class Style:
    background: str | None = None
    underline: str | None = None
    foreground: str | None = None
    selected_background: str | None = None


STYLES: dict[str, Style] = {
    "gt": Style(underline="#1b5e20", foreground="#1b5e20", selected_background="#a5d6a7"),
    "pred": Style(background="#ffe0b2", selected_background="#ffa726"),
    "tp": Style(background="#c8e6c9", selected_background="#66bb6a"),
    "fp": Style(background="#ffcdd2", selected_background="#ef5350"),
}
LEGEND: dict[str, str] = {"gt": "ground truth (underlined)", "pred": "prediction (orange)",
                          "tp": "TP excerpt (green)", "fp": "FP excerpt (red)"}


class SpanTextView(QPlainTextEdit):
    """The sample text; `set_content` replaces text and spans, `set_selected` emphasises some spans."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setFocusPolicy(Qt.FocusPolicy.ClickFocus)
        self.viewport().installEventFilter(self)
        self.viewport().setMouseTracking(True)
        font = self.font()
        font.setPointSizeF(font.pointSizeF() * 1.1)
        self.setFont(font)
        self._map = TextMap("")
        self._spans: tuple[Span, ...] = ()
        self._selected: frozenset[tuple[str, int]] = frozenset()
        self._applied: tuple[tuple[Span, ...], frozenset[tuple[str, int]]] | None = None  # what the highlights show

    @property
    def text_map(self) -> TextMap:
        return self._map

    @property
    def spans(self) -> tuple[Span, ...]:
        return self._spans

    def set_content(self, text: str, spans: Sequence[Span], selected: Sequence[tuple[str, int]] = ()) -> None:
        """New text and spans, with `selected` emphasised (none by default: a new sample starts unselected)."""
        if text != self._map.text:
            self._map = TextMap(text)
            self.setPlainText(text)
            self._applied = None  # the old highlights' cursors point into the old document
        self._spans = tuple(s for s in spans if s.end > s.start)
        self._selected = frozenset(selected)
        self._apply()

    def set_spans(self, spans: Sequence[Span]) -> None:
        self._spans = tuple(s for s in spans if s.end > s.start)
        self._apply()

    def set_selected(self, keys: Sequence[tuple[str, int]], *, reveal: bool = True) -> None:
        self._selected = frozenset(keys)
        self._apply()
        if reveal:
            for s in self._spans:
                if s.key in self._selected:
                    at = self._map.to_qt(s.start)
                    if self.textCursor().hasSelection() or self.textCursor().position() != at:  # else already there
                        cur = QTextCursor(self.document())
                        cur.setPosition(at)
                        self.setTextCursor(cur)
                    self.ensureCursorVisible()
                    break

    def selection(self) -> tuple[int, int] | None:
        """The user's text selection in code points, or None."""
        cur = self.textCursor()
        if not cur.hasSelection():
            return None
        return self._map.from_qt(cur.selectionStart()), self._map.from_qt(cur.selectionEnd())

    def qt_range(self, span: Span) -> tuple[int, int]:
        return self._map.span_to_qt(span.start, span.end)

    def _format(self, span: Span) -> QTextCharFormat:
        st = STYLES.get(span.kind, Style(background="#eeeeee"))
        fmt = QTextCharFormat()
        selected = span.key in self._selected
        bg = st.selected_background if selected and st.selected_background else st.background
        if bg:
            fmt.setBackground(QColor(bg))
        if st.underline:
            fmt.setFontUnderline(True)
            fmt.setUnderlineStyle(QTextCharFormat.UnderlineStyle.SingleUnderline)
            fmt.setUnderlineColor(QColor(st.underline))
        if st.foreground:
            fmt.setForeground(QColor(st.foreground))
        if selected:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setProperty(QTextFormat.Property.UserProperty, span.kind)
        return fmt

    def _apply(self) -> None:
        if self._applied == (self._spans, self._selected):
            return  # a refresh after a decision sets the same highlights again: no re-layout of the document
        self._applied = (self._spans, self._selected)
        # predictions/excerpts first (backgrounds), ground truth last (underline on top), selected last of all
        order = sorted(self._spans, key=lambda s: (s.key in self._selected, s.kind == "gt"))
        sels = []
        for s in order:
            sel = QTextEdit.ExtraSelection()
            cur = QTextCursor(self.document())
            a, b = self.qt_range(s)
            cur.setPosition(a)
            cur.setPosition(b, QTextCursor.MoveMode.KeepAnchor)
            sel.cursor = cur
            sel.format = self._format(s)
            sels.append(sel)
        self.setExtraSelections(sels)

    def spans_at(self, index: int) -> list[Span]:
        return [s for s in self._spans if s.start <= index < s.end]

    def span_hits_at_point(self, x: int, y: int) -> list[Span]:
        """Spans under a viewport point (the character to the right of the nearest cursor position)."""
        cur = self.cursorForPosition(QPoint(x, y))
        rect = self.cursorRect(cur)
        if not rect.top() - 2 <= y <= rect.bottom() + 2:
            return []
        pos = cur.position()
        if x < rect.x() and pos > 0:
            pos -= 1
        return self.spans_at(self._map.from_qt(pos))

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:
        if obj is self.viewport() and event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            hits = self.span_hits_at_point(event.pos().x(), event.pos().y())
            if hits:
                QToolTip.showText(event.globalPos(), plain_tooltip("\n".join(h.tooltip for h in hits)), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().eventFilter(obj, event)
