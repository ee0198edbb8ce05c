"""Data from files is plain text everywhere in the GUI: one helper per way Qt could interpret it.

Qt decides per string whether a tooltip, a QLabel or a message box is rich text (`Qt::mightBeRichText`), so a
rule like "<b>bold</b> &amp; <img src=x>" would show bold, a broken image and "&". Every tooltip built from
data goes through `plain_tooltip`, every label showing data is a `plain_label`, every dialog text that may
contain data is a `plain_message`.
"""
from __future__ import annotations

import html

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QInputDialog, QLabel, QMessageBox, QWidget


def plain_tooltip(text: str | None) -> str:
    """Tooltip markup that Qt renders as exactly `text` (escaped; line breaks and runs of spaces kept).

    Wrapped in <qt> so Qt always takes it as rich text: unescaped, an "&amp;" in the data would be shown as "&"
    by a tooltip that auto-detects rich text. Empty text gives "" (no tooltip)."""
    if not text:
        return ""
    return "<qt><p style='white-space:pre-wrap'>" + html.escape(text, quote=False).replace("\n", "<br>") + "</p></qt>"


def plain_label(text: str = "", *, wrap: bool = False, selectable: bool = False) -> QLabel:
    """A QLabel that never interprets its text as HTML (sample content may contain markup)."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(wrap)
    if selectable:
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setText(text)
    return label


class ElidedLabel(QLabel):
    """One line of plain text that shrinks with "…" instead of being cut off or widening its window; when elided,
    the full text is its tooltip. `text()` is the full text."""

    def __init__(self, text: str = "", parent: QWidget | None = None, min_width: int = 40) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self._full = ""
        self._min_width = min_width
        self.setText(text)

    def setText(self, text: str) -> None:  # noqa: N802 - Qt's name
        text = text or ""
        if text == self._full:  # the views set their header labels again on every refresh, mostly unchanged:
            return  # eliding (font metrics) and a relayout of the pane for nothing (resizeEvent re-elides)
        self._full = text
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        return self._full

    def _elide(self) -> None:
        shown = self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(0, self.width()))
        super().setText(shown)
        tip = plain_tooltip(self._full) if shown != self._full else ""
        if tip != self.toolTip():
            self.setToolTip(tip)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def sizeHint(self) -> QSize:  # noqa: N802
        m = self.contentsMargins()
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4 + m.left() + m.right(), super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(min(self._min_width, self.sizeHint().width()), super().minimumSizeHint().height())

    def is_elided(self) -> bool:
        return QLabel.text(self) != self._full


def plain_message(parent: QWidget | None, title: str, text: str,
                  icon: QMessageBox.Icon = QMessageBox.Icon.Warning) -> QMessageBox:
    """A modal message box whose text is shown literally (a file name or an error may contain markup)."""
    box = QMessageBox(icon, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    return box


def ask_text(parent: QWidget | None, title: str, label: str, text: str = "", *, multiline: bool = False) -> tuple[str, bool]:
    """QInputDialog.getText / getMultiLineText, with its label shown as plain text (it names data: ids, units)."""
    dlg = QInputDialog(parent)
    dlg.setWindowTitle(title)
    dlg.setLabelText(label)
    dlg.setTextValue(text)
    if multiline:
        dlg.setOption(QInputDialog.InputDialogOption.UsePlainTextEditForTextInput, True)
    for lab in dlg.findChildren(QLabel):
        lab.setTextFormat(Qt.TextFormat.PlainText)
    ok = dlg.exec() == QInputDialog.DialogCode.Accepted
    return dlg.textValue(), ok
