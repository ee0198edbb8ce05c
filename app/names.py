"""Annotator names are data, not terminal commands (issue #24): one function normalises and checks a name wherever
it enters (CLI options, the GUI's prompt and settings, labels files, the store's registration), one escapes any
text before it reaches a terminal.

A name is NFC-normalised, so `josé` typed with a precomposed é or with e + combining accent is one annotator.
Control and format characters (Unicode categories Cc and Cf: escape sequences, bidi overrides, zero-width marks),
line/paragraph separators and lone surrogates (undecodable command-line bytes) are refused: they would rewrite
the terminal, hide or reorder what a table shows, or make two names look alike.
"""
from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from app.errors import UsageError

REFUSED_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))


class BadNameError(UsageError, ValueError):
    """An annotator name that is empty or holds a character a name may not hold (exit 2 on the CLI)."""


def _escape_char(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal_safe(text: object) -> str:
    """`text` with every control/format/separator character written as a Python-style escape (`\\x1b`,
    `\\u202e`): what is printed can never move the cursor, clear the screen or reorder the line."""
    s = str(text)
    if all(unicodedata.category(ch) not in REFUSED_CATEGORIES for ch in s):
        return s
    return "".join(_escape_char(ch) if unicodedata.category(ch) in REFUSED_CATEGORIES else ch for ch in s)


def annotator_name(text: str, source: str) -> str:
    """The name as stored: surrounding whitespace dropped, NFC. Raises BadNameError naming `source` (the option,
    file:line or dialog the name came from) for an empty name or one with a refused character."""
    if not isinstance(text, str):
        raise BadNameError(f"{source}: an annotator name must be text, got {type(text).__name__}")
    name = unicodedata.normalize("NFC", text.strip())
    if not name:
        raise BadNameError(f"{source}: an annotator name must not be empty")
    bad = next((ch for ch in name if unicodedata.category(ch) in REFUSED_CATEGORIES), None)
    if bad is not None:
        kind = unicodedata.category(bad)
        what = ("a byte that is not valid UTF-8" if kind == "Cs" else
                unicodedata.name(bad, "a control character" if kind == "Cc" else "a formatting character"))
        raise BadNameError(f"{source}: annotator name '{terminal_safe(name)}' contains {what} (U+{ord(bad):04X}); "
                           "names are plain text without control or formatting characters")
    return name


def case_twins(names: Iterable[str], known: Iterable[str] = ()) -> list[tuple[str, str]]:
    """Pairs of distinct names (among `names`, or one of `names` and one of `known`) that differ only by case:
    probably one person typed two ways. Sorted, each pair once."""
    seen: dict[str, set[str]] = {}
    for n in [*known, *names]:
        seen.setdefault(n.casefold(), set()).add(n)
    new = set(names)
    out = set()
    for group in seen.values():
        for a in group:
            for b in group:
                if a < b and (a in new or b in new):
                    out.add((a, b))
    return sorted(out)


def case_warning(pairs: Iterable[tuple[str, str]]) -> str | None:
    """One sentence for `case_twins`' pairs, or None."""
    pairs = list(pairs)
    if not pairs:
        return None
    listed = "; ".join(f"'{terminal_safe(a)}' and '{terminal_safe(b)}'" for a, b in pairs)
    return (f"annotator names that differ only by case are different annotators: {listed} "
            "(use one spelling if they are one person)")
