"""JSON read the one way every importer reads it: strict (no NaN), within the documented limits, and with a message
that says what is wrong and where ("line 3 column 5: JSON ends early (truncated?)").

The limits (README "Size limits") are here and nowhere else:
- MAX_DEPTH: values nest at most 255 levels (orjson's own encoding limit; deeper data could not be stored);
- MAX_FIELD_CHARS: one string (a text, a snippet, a key) holds at most 16 Mi characters (16 MiB of ASCII);
- MAX_RECORD_BYTES: one record (a JSONL line) is at most four such fields; a longer line is refused unparsed, so a
  huge field costs neither the memory nor the time of reading it.
Data is never a pattern here: the fixed tokenizer below only finds where an over-long line's field starts.
"""
from __future__ import annotations

import re
from typing import Any

import orjson

MAX_DEPTH = 255
MAX_FIELD_CHARS = 16 * 1024 * 1024
MAX_RECORD_BYTES = 4 * MAX_FIELD_CHARS
DEPTH_MESSAGE = f"invalid JSON: depth limit exceeded (nested deeper than {MAX_DEPTH} levels)"
UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_KEEP = 3  # path segments named for a too-deep value (the rest would be one segment per level)


class JSONTextError(ValueError):
    """What is wrong with a JSON text; `line`/`column` (1-based) where known, `field` a path into the value."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None, field: str = "") -> None:
        self.message, self.line, self.column, self.field = message, line, column, field
        where = f"line {line} column {column}: " if line is not None and column is not None else ""
        super().__init__(f"{where}{field + ': ' if field else ''}{message}")


def size_text(n: int) -> str:
    return f"{n / (1024 * 1024):.1f} MiB" if n >= 1024 * 1024 else f"{n:,} bytes"


FIELD_MESSAGE = (f"longer than the limit of {size_text(MAX_FIELD_CHARS)} ({MAX_FIELD_CHARS:,} characters) "
                 "for one field")


def encoding_problem(data: bytes) -> str | None:
    """A text that is not UTF-8 JSON by its first bytes (a UTF-16 byte order mark, or UTF-16 without one)."""
    if data.startswith(_UTF16_BOMS):
        return "the file is UTF-16 (it starts with a UTF-16 byte order mark); save it as UTF-8"
    if len(data) >= 2 and (data[0] == 0) != (data[1] == 0):
        return "the file looks like UTF-16 (every other byte is zero); save it as UTF-8"
    return None


def loads(data: bytes | str, *, bom: bool = True) -> Any:
    """One JSON document, checked against the limits; raises JSONTextError. `bom`: a leading UTF-8 byte order mark
    is harmless and skipped (a line in the middle of a file is read with bom=False)."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if bom and raw.startswith(UTF8_BOM):
        raw = raw[3:]
    if bom:
        enc = encoding_problem(raw)
        if enc is not None:
            raise JSONTextError(enc)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise decode_error(exc, raw) from None
    problem = check(value)
    if problem is not None:
        raise JSONTextError(problem[1], field=problem[0])
    return value


def decode_error(exc: orjson.JSONDecodeError, raw: bytes) -> JSONTextError:
    """orjson's message in words a file's author acts on, with the line and column."""
    msg, pos = exc.msg, exc.pos
    head = raw[pos:pos + 9].lstrip(b"-")
    if "end of data" in msg or ("allocate" in msg and raw.rstrip()[-1:] in (b"[", b"{", b",", b":")):
        text = "JSON ends early (truncated?)"
    elif head.startswith(b"NaN"):
        text = "NaN is not JSON (write null for a missing number)"
    elif head.startswith(b"Infinity"):
        text = "Infinity is not JSON (write null or a number)"
    elif "depth" in msg or "recursion" in msg.lower() or "allocate" in msg:
        text = DEPTH_MESSAGE.removeprefix("invalid JSON: ")
    elif "BOM" in msg:
        text = "starts with a UTF-8 byte order mark (BOM) in the middle of the file"
    elif "UTF-8" in msg:
        try:
            raw.decode("utf-8")
            text = f"not valid UTF-8 ({msg}); save the file as UTF-8"  # (e.g. an escaped lone surrogate)
        except UnicodeDecodeError as bad:
            text = (f"not valid UTF-8 (byte 0x{raw[bad.start]:02x} at offset {bad.start}); "
                    "save the file as UTF-8")
    else:
        text = msg
    return JSONTextError(f"invalid JSON: {text}", exc.lineno, exc.colno)


def _segment(k: Any) -> str:
    if type(k) is int:
        return f"[{k}]"
    k = str(k)
    if len(k) > 60:
        k = k[:59] + "…"
    return f".{k}" if k.isidentifier() else "[" + orjson.dumps(k).decode() + "]"


def _path(segments: list[Any]) -> str:
    return "".join(_segment(s) for s in segments).removeprefix(".")


def check(value: Any, keep: int = _KEEP) -> tuple[str, str] | None:
    """(field path, message) of the first value nested deeper than MAX_DEPTH (its path cut to `keep` segments) or
    string longer than MAX_FIELD_CHARS; None when within the limits. Iterative: any depth is safe to walk."""
    stack: list[tuple[Any, int, list[Any]]] = [(value, 1, [])]
    while stack:
        v, depth, path = stack.pop()
        t = type(v)
        if t is str:
            if len(v) > MAX_FIELD_CHARS:
                return _path(path), f"{size_text(len(v))} of text, {FIELD_MESSAGE}"
            continue
        if t is not dict and t is not list:
            continue
        if depth > MAX_DEPTH:
            return _path(path[:keep]), DEPTH_MESSAGE
        items = v.items() if t is dict else enumerate(v)
        for k, item in items:
            if t is dict and len(k) > MAX_FIELD_CHARS:
                return _path(path), f"a key of {size_text(len(k))}, {FIELD_MESSAGE}"
            if type(item) in (str, dict, list):
                stack.append((item, depth + 1, path + [k]))
    return None


def needs_check(raw: bytes) -> bool:
    """Whether a JSONL line could break a limit (cheap, in C): longer than a field, or more brackets than levels."""
    return len(raw) > MAX_FIELD_CHARS or raw.count(b"[") + raw.count(b"{") > MAX_DEPTH


# A fixed pattern: a JSON string (possessive: one pass, no backtracking; an unterminated one runs to the end) or
# punctuation.
_TOKEN = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\Z)|[\[\]{},:]')


def field_at_end(prefix: bytes) -> str:
    """The field path being read where `prefix` (the start of an over-long record) ends: where the record passes
    MAX_RECORD_BYTES, which names the field that makes it long without parsing it."""
    path: list[Any] = []
    kinds: list[str] = []  # "{" or "["
    expect_key, key = False, None
    for m in _TOKEN.finditer(prefix):
        tok = m.group()
        c = tok[:1]
        if c == b"{":
            kinds.append("{")
            path.append(None)
            expect_key = True
        elif c == b"[":
            kinds.append("[")
            path.append(0)
        elif c in (b"}", b"]"):
            if kinds:
                kinds.pop()
                path.pop()
        elif c == b",":
            if kinds and kinds[-1] == "[":
                path[-1] += 1
            else:
                expect_key = True
        elif c == b":":
            if path and key is not None:
                path[-1] = key
            expect_key = False
        elif c == b'"' and expect_key and len(tok) > 1 and tok.endswith(b'"'):
            try:
                key = orjson.loads(tok)
            except orjson.JSONDecodeError:
                key = tok[1:-1].decode("utf-8", "replace")
    # an unterminated string at the end (the long field itself) is no token: the path stands where it starts
    return _path([p for p in path if p is not None])
