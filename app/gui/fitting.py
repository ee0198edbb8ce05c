"""Nothing cut off, nothing forcing the window wide (issue #27 item 2): a long one-line label (an instruction such
as "Documents (click: select / supporting key; Ctrl+click: relevant; ...)") wraps instead of setting the minimum
width of its pane, which squeezed the review list beside it to a third of a 1280-pixel window. Applied to every
detail view when the window creates it, so a view's own module needs no edit."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QSizePolicy, QWidget

from app.gui.plaintext import ElidedLabel

LONG = 48  # characters: a one-line label longer than this is an instruction and wraps (legend chips stay whole)


def wrap_long_labels(root: QWidget, long: int = LONG) -> list[QLabel]:
    """Let `root`'s long one-line labels wrap (elided labels excepted: they shrink already); returns them."""
    out = []
    for label in root.findChildren(QLabel):
        if isinstance(label, ElidedLabel) or label.wordWrap() or label.pixmap() is not None and not label.pixmap().isNull():
            continue
        if len(label.text()) > long:
            label.setWordWrap(True)
            policy = label.sizePolicy()
            policy.setHorizontalPolicy(QSizePolicy.Policy.Preferred)
            policy.setHeightForWidth(True)
            label.setSizePolicy(policy)
            out.append(label)
    return out


class FitLabel(QLabel):
    """A wrapped plain-text label whose minimum height is the height its text needs at its width: a splitter (which
    ignores height-for-width) then never squeezes it under the widget above (the learning curve's axis title)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)

    def _fit(self) -> None:
        need = self.heightForWidth(max(1, self.width())) if self.text() else 0
        if need != self.minimumHeight():
            self.setMinimumHeight(need)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        super().setText(text)
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit()
