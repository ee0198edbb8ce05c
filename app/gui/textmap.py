"""Code-point offsets (how Concord stores spans) <-> positions in a Qt text document (UTF-16 units).

Qt counts characters outside the Basic Multilingual Plane (emoji, many CJK extensions) as two units, and a
QTextDocument turns "\\r\\n" into one block separator. Both shift every later position, so all offsets are
converted here, at the GUI boundary, and nowhere else.
"""
from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

_ASTRAL = "\U00010000"


class TextMap:
    """Maps code-point indices of `text` to document positions and back; O(1) for BMP text without CRLF."""

    __slots__ = ("text", "_pos")

    def __init__(self, text: str) -> None:
        self.text = text
        self._pos: list[int] | None = None
        if "\r\n" in text or (text and max(text) >= _ASTRAL):
            widths = [
                0 if (ch == "\r" and text[i + 1 : i + 2] == "\n") else (2 if ch >= _ASTRAL else 1)
                for i, ch in enumerate(text)
            ]
            self._pos = [0, *accumulate(widths)]

    @property
    def identity(self) -> bool:
        return self._pos is None

    def to_qt(self, index: int) -> int:
        """Document position of code point `index` (clamped to the text)."""
        index = max(0, min(index, len(self.text)))
        return index if self._pos is None else self._pos[index]

    def span_to_qt(self, start: int, end: int) -> tuple[int, int]:
        return self.to_qt(start), self.to_qt(end)

    def from_qt(self, position: int) -> int:
        """Code point at document `position`; a position inside a surrogate pair maps to that character."""
        if self._pos is None:
            return max(0, min(position, len(self.text)))
        return max(0, bisect_right(self._pos, position) - 1)
