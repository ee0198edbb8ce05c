"""Find text the window cuts off (issue #27 item 2): every visible QLabel and header section whose text needs more
width than it is shown in, unless it is wrapped to fit, or elided ("…") with the whole text in its tooltip."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt, QTextDocument
from PySide6.QtWidgets import QHeaderView, QLabel, QStyle, QWidget

from tests.gui_data import shown_tooltip

SLACK = 1  # pixels of rounding


def _plain(label: QLabel, text: str) -> str:
    fmt = label.textFormat()
    if fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)):
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()
    return text.replace("&&", "&")


def _shown(w: QWidget, root: QWidget) -> bool:
    """Shown in `root` (offscreen windows have no exposed region to ask, so: visible, sized, inside root)."""
    if not (w.isVisible() and w.isVisibleTo(root) and w.width() > 0 and w.height() > 0):
        return False
    top_left = w.mapTo(root, w.rect().topLeft())
    return root.rect().intersects(w.rect().translated(top_left))


def label_problem(label: QLabel) -> str | None:
    """Why `label` cuts its text, or None."""
    full = label.text()  # an ElidedLabel's text() is the whole text, QLabel.text() what it shows
    shown = QLabel.text(label)
    if not shown or label.pixmap() is not None and not label.pixmap().isNull():
        return None
    plain = _plain(label, shown)
    fm = label.fontMetrics()
    rect = label.contentsRect()
    width = rect.width() - 2 * max(label.margin(), 0) - max(label.indent(), 0)
    if shown != full:  # elided: the whole text must be on hover
        if shown_tooltip(label.toolTip()) != _plain(label, full):
            return f"elided {plain!r} without its whole text in the tooltip"
        return None
    if label.wordWrap():
        words = plain.split()
        widest = max((fm.horizontalAdvance(word) for word in words), default=0)
        if widest > width + SLACK:
            return f"a word of {plain!r} needs {widest} px, shown in {width}"
        need = label.heightForWidth(label.width())
        if need > label.height() + SLACK:
            return f"wrapped {plain!r} needs {need} px of height, shown in {label.height()}"
        return None
    need = max(fm.horizontalAdvance(line) for line in plain.split("\n"))
    if need > width + SLACK:
        return f"{plain!r} needs {need} px, shown in {width}"
    return None


def header_problems(header: QHeaderView) -> list[str]:
    """Sections (in view) whose title is cut: too narrow and not elided with the whole title in the tooltip."""
    model = header.model()
    if model is None or header.orientation() != Qt.Orientation.Horizontal:
        return []
    style, fm = header.style(), header.fontMetrics()
    margin = 2 * style.pixelMetric(QStyle.PixelMetric.PM_HeaderMargin, None, header)
    arrow = style.pixelMetric(QStyle.PixelMetric.PM_HeaderMarkSize, None, header)
    out = []
    for i in range(header.count()):
        if header.isSectionHidden(i):
            continue
        pos, size = header.sectionViewportPosition(i), header.sectionSize(i)
        if pos + size <= 0 or pos >= header.viewport().width():
            continue  # scrolled out of view
        title = str(model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.DisplayRole) or "")
        if not title:
            continue
        need = max(fm.horizontalAdvance(line) for line in title.split("\n")) + margin
        if header.isSortIndicatorShown() and header.sortIndicatorSection() == i:
            need += arrow
        if need <= size + SLACK:
            continue
        tip = " ".join(shown_tooltip(model.headerData(i, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)).split())
        title = " ".join(title.split())  # a two-line title reads as one line in its tooltip
        if header.textElideMode() == Qt.TextElideMode.ElideNone or title not in tip:
            out.append(f"header {title!r} needs {need} px, shown in {size}"
                       + ("" if header.textElideMode() != Qt.TextElideMode.ElideNone else " (cut, not elided)")
                       + ("" if title in tip else " (its tooltip lacks the title)"))
    return out


def _where(w: QWidget) -> str:
    names = []
    while w is not None:
        names.append(w.objectName() or type(w).__name__)
        w = w.parentWidget()
    return "/".join(reversed(names[:4]))


def clipped(root: QWidget) -> list[str]:
    """Every cut text in `root`'s visible labels and headers, each with where it is."""
    out = []
    for label in root.findChildren(QLabel):
        if _shown(label, root):
            problem = label_problem(label)
            if problem:
                out.append(f"{_where(label)}: {problem}")
    for header in root.findChildren(QHeaderView):
        if _shown(header, root):
            out += [f"{_where(header)}: {p}" for p in header_problems(header)]
    return out
