"""Small charts drawn with QPainter (no plotting dependency): a heatmap of the calibration objective over two
dimensions, a line chart of the objective against the match threshold, named series, and points with interval bars
(the learning curve, agreement over time with its drops flagged)."""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QFont, QMouseEvent, QPainter, QPaintEvent, QPen, QPolygonF
from PySide6.QtWidgets import QSizePolicy, QWidget

# viridis, 6 stops: perceptually ordered and readable for colour-blind users
_STOPS = [(0.0, (68, 1, 84)), (0.2, (65, 68, 135)), (0.4, (42, 120, 142)), (0.6, (34, 168, 132)),
          (0.8, (122, 209, 81)), (1.0, (253, 231, 37))]


def colour(t: float) -> QColor:
    """Viridis colour for t in [0, 1]; NaN is light grey."""
    if t != t:
        return QColor("#e0e0e0")
    t = min(1.0, max(0.0, t))
    for (a, ca), (b, cb) in zip(_STOPS, _STOPS[1:]):
        if t <= b:
            f = (t - a) / (b - a)
            return QColor(*(round(x + (y - x) * f) for x, y in zip(ca, cb)))
    return QColor(*_STOPS[-1][1])


def nice_ticks(lo: float, hi: float, target: int = 5) -> list[tuple[float, str]]:
    """(value, label) of about `target` axis ticks at round steps (1, 2, 2.5 or 5 times a power of ten) covering
    [lo, hi]: evenly split padded ranges read 1.05, 0.76, 0.48 (QA). Labels carry the step's decimals."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        lo, hi = lo - 0.5, hi + 0.5
    raw = (hi - lo) / max(1, target - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * (1 - 1e-9))
    places = round(-math.log10(power))  # decimals of the power of ten; 2.5 below 10 needs one more
    digits = max(0, places + (1 if round(step / power, 6) == 2.5 and places >= 0 else 0))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [(k * step, f"{k * step:.{digits}f}") for k in range(first, last + 1)]


def _fmt(v: float) -> str:
    return "—" if v != v else f"{v:.2f}"


class Heatmap(QWidget):
    """values[row][col] with row labels (y) and column labels (x); click a cell to emit its (x, y) values.

    The best cell is outlined in red; `set_marker(x, y)` marks another cell (the selected config) in black/white."""

    cell_clicked = Signal(float, float)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(260, 200)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.x_values: list[float] = []
        self.y_values: list[float] = []
        self.values: list[list[float]] = []
        self.x_label = self.y_label = ""
        self.best: tuple[int, int] | None = None
        self.marker: tuple[int, int] | None = None  # (row, col) of the selected config
        self._marker_xy: tuple[float, float] | None = None

    def set_data(self, x_values: Sequence[float], y_values: Sequence[float], values: Sequence[Sequence[float]],
                 x_label: str, y_label: str) -> None:
        self.x_values, self.y_values = [float(v) for v in x_values], [float(v) for v in y_values]
        self.values = [[float(v) for v in row] for row in values]
        self.x_label, self.y_label = x_label, y_label
        finite = [(v, i, j) for i, row in enumerate(self.values) for j, v in enumerate(row) if v == v]
        self.best = None if not finite else max(finite)[1:]
        self._place_marker()
        self.update()

    def set_marker(self, x: float | None, y: float | None) -> None:
        """Mark the cell at dimension values (x, y); None clears the marker."""
        self._marker_xy = None if x is None or y is None else (float(x), float(y))
        self._place_marker()
        self.update()

    def _place_marker(self) -> None:
        self.marker = None
        if self._marker_xy is None:
            return
        x, y = self._marker_xy
        j = next((j for j, v in enumerate(self.x_values) if math.isclose(v, x, abs_tol=1e-9)), None)
        i = next((i for i, v in enumerate(self.y_values) if math.isclose(v, y, abs_tol=1e-9)), None)
        if i is not None and j is not None:
            self.marker = (i, j)

    def _plot_rect(self) -> QRectF:
        return QRectF(58, 10, max(10, self.width() - 110), max(10, self.height() - 52))

    def _cell(self, i: int, j: int) -> QRectF:
        r = self._plot_rect()
        w, h = r.width() / max(1, len(self.x_values)), r.height() / max(1, len(self.y_values))
        return QRectF(r.left() + j * w, r.bottom() - (i + 1) * h, w, h)

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        if not self.values:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run a calibration to see the objective surface")
            return
        finite = [v for row in self.values for v in row if v == v]
        lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
        span = (hi - lo) or 1.0
        small = QFont(self.font())
        small.setPointSizeF(max(6.0, small.pointSizeF() * 0.8))
        p.setFont(small)
        for i, row in enumerate(self.values):
            for j, v in enumerate(row):
                rect = self._cell(i, j)
                c = colour((v - lo) / span)
                p.fillRect(rect, c)
                if rect.width() > 26 and rect.height() > 12:
                    p.setPen(QColor("white") if c.lightness() < 140 else QColor("black"))
                    p.drawText(rect, Qt.AlignmentFlag.AlignCenter, _fmt(v))
        if self.best is not None:
            p.setPen(QPen(QColor("#d50000"), 2))
            p.drawRect(self._cell(*self.best).adjusted(1, 1, -1, -1))
        if self.marker is not None:  # the selected config: a white and a black dashed ring, visible on any colour
            cell = self._cell(*self.marker)
            p.setPen(QPen(QColor("white"), 3))
            p.drawRect(cell.adjusted(3, 3, -3, -3))
            p.setPen(QPen(QColor("black"), 2, Qt.PenStyle.DashLine))
            p.drawRect(cell.adjusted(3, 3, -3, -3))
        p.setPen(self.palette().text().color())
        r = self._plot_rect()
        step_x = max(1, math.ceil(len(self.x_values) * 34 / max(1.0, r.width())))
        for j, x in enumerate(self.x_values):
            if j % step_x == 0:
                c = self._cell(0, j)
                p.drawText(QRectF(c.left() - 10, r.bottom() + 2, c.width() + 20, 14), Qt.AlignmentFlag.AlignCenter, f"{x:g}")
        step_y = max(1, math.ceil(len(self.y_values) * 14 / max(1.0, r.height())))
        for i, y in enumerate(self.y_values):
            if i % step_y == 0:
                c = self._cell(i, 0)
                p.drawText(QRectF(0, c.top(), r.left() - 4, c.height()), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{y:g}")
        p.drawText(QRectF(r.left(), r.bottom() + 18, r.width(), 16), Qt.AlignmentFlag.AlignCenter, self.x_label)
        p.save()
        p.translate(10, r.center().y())
        p.rotate(-90)
        p.drawText(QRectF(-r.height() / 2, -8, r.height(), 16), Qt.AlignmentFlag.AlignCenter, self.y_label)
        p.restore()
        # colour bar
        bar = QRectF(r.right() + 10, r.top(), 12, r.height())
        for k in range(int(bar.height())):
            p.fillRect(QRectF(bar.left(), bar.bottom() - k - 1, bar.width(), 1), colour(k / max(1.0, bar.height() - 1)))
        p.drawText(QRectF(bar.right() + 2, bar.top() - 2, 40, 14), Qt.AlignmentFlag.AlignLeft, _fmt(hi))
        p.drawText(QRectF(bar.right() + 2, bar.bottom() - 12, 40, 14), Qt.AlignmentFlag.AlignLeft, _fmt(lo))

    def mousePressEvent(self, event: QMouseEvent) -> None:
        for i in range(len(self.y_values)):
            for j in range(len(self.x_values)):
                if self._cell(i, j).contains(event.position()):
                    self.cell_clicked.emit(self.x_values[j], self.y_values[i])
                    return


class LineChart(QWidget):
    """y against x with dots, axes and a marker at `mark_x`."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setMinimumSize(260, 160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.xs: list[float] = []
        self.ys: list[float] = []
        self.x_label = self.y_label = ""
        self.mark_x: float | None = None
        self.tick_labels: list[str] = []  # the y axis's labels as last drawn

    def set_data(self, xs: Sequence[float], ys: Sequence[float], x_label: str, y_label: str,
                 mark_x: float | None = None) -> None:
        self.xs, self.ys = [float(x) for x in xs], [float(y) for y in ys]
        self.x_label, self.y_label, self.mark_x = x_label, y_label, mark_x
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        pts = [(x, y) for x, y in zip(self.xs, self.ys) if y == y]
        if not pts:
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run a calibration to see the threshold curve")
            return
        r = QRectF(50, 24, max(10, self.width() - 64), max(10, self.height() - 62))
        x0, x1 = min(x for x, _ in pts), max(x for x, _ in pts)
        y0, y1 = min(y for _, y in pts), max(y for _, y in pts)
        if x1 == x0:
            x0, x1 = x0 - 0.5, x1 + 0.5
        ticks = nice_ticks(y0, y1)  # the axis spans round ticks around the data
        self.tick_labels = [label for _, label in ticks]
        y0, y1 = ticks[0][0], ticks[-1][0]

        def at(x: float, y: float) -> QPointF:
            return QPointF(r.left() + (x - x0) / (x1 - x0) * r.width(), r.bottom() - (y - y0) / (y1 - y0) * r.height())

        text = self.palette().text().color()
        p.setPen(QPen(QColor("#bdbdbd"), 1))
        for y, label in ticks:
            a = at(x0, y)
            p.drawLine(QPointF(r.left(), a.y()), QPointF(r.right(), a.y()))
            p.setPen(text)
            p.drawText(QRectF(0, a.y() - 7, r.left() - 4, 14), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, label)
            p.setPen(QPen(QColor("#bdbdbd"), 1))
        p.setPen(text)
        p.drawLine(r.bottomLeft(), r.bottomRight())
        p.drawLine(r.bottomLeft(), r.topLeft())
        for x, _ in pts:
            a = at(x, y0)
            p.drawText(QRectF(a.x() - 18, r.bottom() + 2, 36, 14), Qt.AlignmentFlag.AlignCenter, f"{x:g}")
        p.drawText(QRectF(r.left(), r.bottom() + 18, r.width(), 16), Qt.AlignmentFlag.AlignCenter, self.x_label)
        if self.mark_x is not None:
            p.setPen(QPen(QColor("#d50000"), 1, Qt.PenStyle.DashLine))
            a = at(self.mark_x, y0)
            p.drawLine(QPointF(a.x(), r.top()), QPointF(a.x(), r.bottom()))
        p.setPen(QPen(QColor("#1565c0"), 2))
        p.drawPolyline(QPolygonF([at(x, y) for x, y in pts]))
        p.setBrush(QColor("#1565c0"))
        for x, y in pts:
            p.drawEllipse(at(x, y), 3, 3)
        p.setPen(text)
        p.drawText(QRectF(r.left(), 4, r.width(), 16), Qt.AlignmentFlag.AlignLeft, self.y_label)


# distinct, colour-blind-safe line colours (Okabe-Ito)
SERIES_COLOURS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#000000")


def _axes(p: QPainter, r: QRectF, xs: tuple[float, float], ticks: list[tuple[float, str]], text: QColor
          ) -> Callable[[float, float], QPointF]:
    """Draw a plot's horizontal grid lines at `ticks` (nice_ticks: the first and last are the y range) with their
    labels, and its two axes; return the data -> pixel map (shared by the series and interval charts)."""
    (x0, x1), (y0, y1) = xs, (ticks[0][0], ticks[-1][0])

    def at(x: float, y: float) -> QPointF:
        return QPointF(r.left() + (x - x0) / (x1 - x0) * r.width(), r.bottom() - (y - y0) / (y1 - y0) * r.height())

    for y, label in ticks:
        a = at(x0, y)
        p.setPen(QPen(QColor("#e0e0e0"), 1))
        p.drawLine(QPointF(r.left(), a.y()), QPointF(r.right(), a.y()))
        p.setPen(text)
        p.drawText(QRectF(0, a.y() - 7, r.left() - 4, 14), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                   label)
    p.drawLine(r.bottomLeft(), r.bottomRight())
    p.drawLine(r.bottomLeft(), r.topLeft())
    return at


class SeriesChart(QWidget):
    """Several named series of y against shared x values (e.g. accuracy against noise rate per checker), on a
    fixed y range, with a legend; a missing point (NaN) breaks its line."""

    def __init__(self, parent: QWidget | None = None, y_range: tuple[float, float] = (0.0, 100.0)) -> None:
        super().__init__(parent)
        self.setMinimumSize(260, 160)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.xs: list[float] = []
        self.series: list[tuple[str, list[float]]] = []
        self.x_label = self.y_label = ""
        self.y_range = y_range
        self.empty_text = "No data"
        self.tick_labels: list[str] = []  # the y axis's labels as last drawn

    def set_data(self, xs: Sequence[float], series: Sequence[tuple[str, Sequence[float]]], x_label: str,
                 y_label: str) -> None:
        self.xs = [float(x) for x in xs]
        self.series = [(name, [float(y) for y in ys]) for name, ys in series]
        self.x_label, self.y_label = x_label, y_label
        self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        text = self.palette().text().color()
        if not self.xs or not any(y == y for _, ys in self.series for y in ys):
            p.setPen(text)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            return
        legend_w = min(200, max(90, max(p.fontMetrics().horizontalAdvance(n) for n, _ in self.series) + 30))
        r = QRectF(44, 22, max(10, self.width() - 60 - legend_w), max(10, self.height() - 58))
        x0, x1 = min(self.xs), max(self.xs)
        if x1 == x0:
            x0, x1 = x0 - 0.5, x1 + 0.5
        ticks = nice_ticks(*self.y_range)
        self.tick_labels = [label for _, label in ticks]
        y0 = ticks[0][0]
        at = _axes(p, r, (x0, x1), ticks, text)
        for x in self.xs:
            a = at(x, y0)
            p.drawText(QRectF(a.x() - 18, r.bottom() + 2, 36, 14), Qt.AlignmentFlag.AlignCenter, f"{x:g}")
        p.drawText(QRectF(r.left(), r.bottom() + 18, r.width(), 16), Qt.AlignmentFlag.AlignCenter, self.x_label)
        p.drawText(QRectF(r.left(), 2, r.width(), 16), Qt.AlignmentFlag.AlignLeft, self.y_label)
        for i, (name, ys) in enumerate(self.series):
            colour_ = QColor(SERIES_COLOURS[i % len(SERIES_COLOURS)])
            p.setPen(QPen(colour_, 2))
            run: list[QPointF] = []
            for x, y in zip(self.xs, ys):
                if y == y:
                    run.append(at(x, y))
                else:
                    if len(run) > 1:
                        p.drawPolyline(QPolygonF(run))
                    run = []
            if len(run) > 1:
                p.drawPolyline(QPolygonF(run))
            p.setBrush(colour_)
            for x, y in zip(self.xs, ys):
                if y == y:
                    p.drawEllipse(at(x, y), 3, 3)
            ly = r.top() + 4 + i * 18
            lx = r.right() + 14
            p.drawLine(QPointF(lx, ly + 7), QPointF(lx + 16, ly + 7))
            p.setPen(text)
            p.drawText(QRectF(lx + 20, ly, legend_w - 24, 14), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                       p.fontMetrics().elidedText(name, Qt.TextElideMode.ElideRight, int(legend_w - 24)))
            p.setBrush(Qt.BrushStyle.NoBrush)


class IntervalChart(QWidget):
    """Points with vertical interval bars (a learning curve: held-out score and its 95% interval against labeled
    units); a point without a score is skipped; `target` draws nothing (the sentence under the chart says it)."""

    def __init__(self, parent: QWidget | None = None, empty_text: str = "No points yet") -> None:
        super().__init__(parent)
        self.setMinimumSize(260, 150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.xs: list[float] = []
        self.ys: list[float | None] = []
        self.los: list[float | None] = []
        self.his: list[float | None] = []
        self.x_label = self.y_label = ""
        self.empty_text = empty_text
        self.tick_labels: list[str] = []  # the y axis's labels as last drawn
        self.flagged: list[bool] = []  # points drawn as flagged (agreement over time: a drop)
        self.x_labels: list[str] = []  # text under each x instead of the number (e.g. a window's date)
        self.markers: list[tuple[float, str]] = []  # (x, text): a dashed vertical line (a guideline version change)

    def set_data(self, xs: Sequence[float], ys: Sequence[float | None], los: Sequence[float | None],
                 his: Sequence[float | None], x_label: str, y_label: str, *, flagged: Sequence[bool] = (),
                 x_labels: Sequence[str] = (), markers: Sequence[tuple[float, str]] = ()) -> None:
        self.xs = [float(x) for x in xs]
        self.ys, self.los, self.his = list(ys), list(los), list(his)
        self.x_label, self.y_label = x_label, y_label
        self.flagged = [bool(f) for f in flagged] + [False] * (len(self.xs) - len(flagged))
        self.x_labels = list(x_labels)
        self.markers = [(float(x), str(t)) for x, t in markers]
        self.update()

    def points(self) -> list[tuple[float, float, float | None, float | None]]:
        return [(x, float(y), lo, hi) for x, y, lo, hi in zip(self.xs, self.ys, self.los, self.his)
                if y is not None and y == y]

    def flagged_xs(self) -> list[float]:
        """The x of every drawn point that is flagged."""
        return [x for x, y, f in zip(self.xs, self.ys, self.flagged) if f and y is not None and y == y]

    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), self.palette().base())
        text = self.palette().text().color()
        pts = self.points()
        if not pts:
            p.setPen(text)
            p.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, self.empty_text)
            return
        line = p.fontMetrics().height()  # the title and tick rows below the axis are a line each (never 14 px fixed:
        # a larger font drew the axis title over the text under the chart)
        r = QRectF(50, line + 6, max(10, self.width() - 66), max(10, self.height() - 3 * line - 12))
        x0, x1 = min(x for x, *_ in pts), max(x for x, *_ in pts)
        if x1 == x0:
            x0, x1 = x0 - 1, x1 + 1
        elif self.x_labels or self.markers:  # room for the first and last text labels and a marker between windows
            x0, x1 = x0 - 0.5, x1 + 0.5
        ys = [v for _, y, lo, hi in pts for v in (y, lo, hi) if v is not None and v == v]
        ticks = nice_ticks(min(ys), max(ys))  # the axis spans round ticks around the points and intervals
        self.tick_labels = [label for _, label in ticks]
        y0 = ticks[0][0]
        at = _axes(p, r, (x0, x1), ticks, text)
        names = dict(zip(self.xs, self.x_labels))
        for x, *_ in pts:
            a = at(x, y0)
            label = names.get(x, f"{x:g}")
            half = max(18, p.fontMetrics().horizontalAdvance(label) / 2 + 2)
            p.drawText(QRectF(a.x() - half, r.bottom() + 2, 2 * half, line), Qt.AlignmentFlag.AlignCenter, label)
        p.drawText(QRectF(r.left(), r.bottom() + line + 4, r.width(), line), Qt.AlignmentFlag.AlignCenter, self.x_label)
        p.drawText(QRectF(r.left(), 2, r.width(), line), Qt.AlignmentFlag.AlignLeft, self.y_label)
        self._draw_markers(p, r, at, y0, x0, x1, text)
        band = QColor(SERIES_COLOURS[0])
        p.setPen(QPen(band, 1.5))
        for x, _, lo, hi in pts:  # the interval: a vertical bar with caps
            if lo is None or hi is None:
                continue
            a, b = at(x, lo), at(x, hi)
            p.drawLine(a, b)
            p.drawLine(QPointF(a.x() - 4, a.y()), QPointF(a.x() + 4, a.y()))
            p.drawLine(QPointF(b.x() - 4, b.y()), QPointF(b.x() + 4, b.y()))
        p.setPen(QPen(band, 2))
        if len(pts) > 1:
            p.drawPolyline(QPolygonF([at(x, y) for x, y, *_ in pts]))
        p.setBrush(band)
        for x, y, *_ in pts:
            p.drawEllipse(at(x, y), 3.5, 3.5)
        drop = QColor(SERIES_COLOURS[4])  # flagged points: a larger vermillion dot and the word under the title
        p.setPen(QPen(drop, 2))
        p.setBrush(drop)
        for x in self.flagged_xs():
            y = next(y for px, y, *_ in pts if px == x)
            a = at(x, y)
            p.drawEllipse(a, 5.5, 5.5)
            p.drawText(QRectF(a.x() - 30, a.y() + 7, 60, 14), Qt.AlignmentFlag.AlignCenter, "drop")

    def drawn_markers(self) -> list[tuple[float, str]]:
        """The markers inside the x range of the drawn points (those `paintEvent` draws)."""
        pts = self.points()
        if not pts:
            return []
        lo, hi = min(x for x, *_ in pts) - 1, max(x for x, *_ in pts) + 1
        return [(x, t) for x, t in self.markers if lo < x < hi]

    def _draw_markers(self, p: QPainter, r: QRectF, at: Callable[[float, float], QPointF], y0: float, x0: float,
                      x1: float, text: QColor) -> None:
        """A dashed grey vertical line per marker, its text at the top right of the line."""
        pen = QPen(QColor("#757575"), 1.2, Qt.PenStyle.DashLine)
        for x, label in self.drawn_markers():
            if not x0 <= x <= x1:
                continue
            a = at(x, y0)
            p.setPen(pen)
            p.drawLine(QPointF(a.x(), r.top()), QPointF(a.x(), r.bottom()))
            p.setPen(text)
            p.drawText(QRectF(a.x() + 3, r.top(), 160, p.fontMetrics().height()), Qt.AlignmentFlag.AlignLeft, label)
