"""Read JSONL, CSV and Parquet into plain records (dicts), one per line or row, with their location.

Parsing problems (malformed JSON, a list column that is not JSON, ...) are collected, never raised, so one pass
reports every bad line. In CSV and Parquet, list and object columns hold JSON strings (Parquet may also hold
them as native nested columns); an empty cell means the field is absent.
"""
from __future__ import annotations

import csv
import io
import math
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from app.errors import UsageError
from app.files import regular_file
from app.io.problems import Location, Problems, type_name
from calibration.jsontext import (  # noqa: F401 - DEPTH_MESSAGE, MAX_DEPTH re-exported: the limits live there
    DEPTH_MESSAGE, MAX_DEPTH, MAX_FIELD_CHARS, MAX_RECORD_BYTES, check, decode_error, encoding_problem, field_at_end,
    UTF8_BOM, needs_check, size_text,
)

FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


@dataclass(frozen=True, slots=True)
class RawRecord:
    location: Location
    data: dict[str, Any]


@dataclass
class Source:
    """What was read: parseable records in file order, and the columns of a tabular file (None for JSONL)."""

    path: Path
    format: str
    records: list[RawRecord] = field(default_factory=list)
    columns: list[str] | None = None
    n_lines: int = 0  # records plus unparseable lines/rows
    # human decisions the file carries beside its records (a scheme's own format: FaithBench's annotations), as label
    # lines of `concord labels import` (app/io/labels.py); recorded in the same transaction as the records
    labels: list[RawRecord] = field(default_factory=list)


def json_document(path: str | Path) -> Any | None:
    """A `.json` file's decoded value, or None when it is not a `.json` file or does not parse (a reader that
    recognises files by their content: ADDM run files, FaithBench batches, Label Studio exports; what is wrong with a
    file no reader takes is said by the importer). A UTF-8 BOM is skipped without a copy; the file's bytes go before
    the caller checks the values, so peak memory is bytes or values, plus a bit."""
    path = Path(path)
    if path.suffix.lower() != ".json" or not path.is_file():
        return None
    data = path.read_bytes()
    try:
        return orjson.loads(memoryview(data)[3:] if data.startswith(UTF8_BOM) else data)
    except orjson.JSONDecodeError:
        return None
    finally:
        del data


def detect_format(path: str | Path) -> str:
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise UsageError(f"{p}: unknown file type {p.suffix!r}; use .jsonl, .csv or .parquet")
    return fmt


def read_source(path: str | Path, problems: Problems, json_columns: Collection[str] = ()) -> Source:
    """Read every record of `path` (format by extension); bad lines go to `problems`."""
    p = Path(path)
    if p.is_dir():
        raise UsageError(f"{p}: is a directory; give the file to read (.jsonl, .csv or .parquet)")
    fmt = detect_format(p)
    if regular_file(p, "data file", missing_ok=True) is None:  # a FIFO, device or socket is refused at once
        raise UsageError(f"{p}: no such file")
    if fmt == "jsonl":
        return _read_jsonl(p, problems)
    return _read_table(p, fmt, problems, json_columns)


def _read_jsonl(path: Path, problems: Problems) -> Source:
    src = Source(path, "jsonl")
    data = path.read_bytes()
    src.records, src.n_lines = parse_jsonl(data, str(path), problems)
    return src


def spanning_document(data: bytes, problems: Problems, name: str, first_error: int) -> bool:
    """A pretty-printed JSON array or object (one document over many lines) instead of JSONL: say so once.

    Only tried when line 1 already failed, so well-formed JSONL costs nothing.
    """
    if first_error >= len(problems.errors) or problems.errors[first_error].location.number != _first_line(data):
        return False
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        doc = _pretty_stream(data)  # several pretty-printed objects one after another (`jq .` of a JSONL file)
        if doc is None:
            return False
    n_lines = data.strip().count(b"\n") + 1
    if type(doc) not in (list, dict, _Stream) or n_lines == 1:
        return False
    del problems.errors[first_error:]
    items = f"{len(doc)} item" + ("" if len(doc) == 1 else "s")
    if isinstance(doc, _Stream):
        what, hint = f"{len(doc)} pretty-printed JSON objects spread over {n_lines} lines", "jq -c ."
    else:
        what = (f"a JSON array of {items}" if type(doc) is list else "one JSON object") + f" spread over {n_lines} lines"
        hint = "jq -c '.[]'" if type(doc) is list else "jq -c ."
    problems.error(Location(name, None), "", f"this is {what}, not JSON Lines (one object per line); "
                                            f"convert it with `{hint} FILE > FILE.jsonl`")
    return True


class _Stream(list):  # type: ignore[type-arg]
    """JSON objects that followed each other in the file (not one document)."""


def _pretty_stream(data: bytes) -> "_Stream | None":
    """The objects of a file that is several JSON objects one after another, else None (the stdlib's raw_decode:
    orjson has no streaming decoder)."""
    import json

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None
    decoder, docs, at = json.JSONDecoder(), _Stream(), 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at == len(text):
            break
        try:
            doc, at = decoder.raw_decode(text, at)
        except (ValueError, RecursionError):
            return None
        if type(doc) is not dict:
            return None
        docs.append(doc)
    lines = sum(1 for ln in text.splitlines() if ln.strip())
    return docs if 1 < len(docs) < lines else None  # one object per line is JSON Lines (its errors are elsewhere)


def _first_line(data: bytes) -> int:
    for number, raw in enumerate(data.split(b"\n", 64), 1):
        if raw.strip():
            return number
    return 1


def parse_jsonl(data: bytes, name: str, problems: Problems, first_line: int = 1) -> tuple[list[RawRecord], int]:
    """Parse JSONL bytes (the whole file, or a slice starting at line `first_line`); returns (records, non-blank lines)."""
    if first_line == 1 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    unreadable = encoding_problem(data[:4]) if first_line == 1 else None
    if unreadable is not None:  # (e.g. UTF-16: one problem for the file, not one per line)
        problems.error(Location(name, None), "", unreadable)
        return [], 1
    loads = orjson.loads  # strict JSON (no NaN), several times faster than json for large files
    first_error = len(problems.errors)
    records: list[RawRecord] = []
    n_lines = 0
    overlong = False
    for number, raw in enumerate(data.split(b"\n"), first_line):
        if not raw.strip():
            continue
        n_lines += 1
        if len(raw) > MAX_RECORD_BYTES:  # refused unparsed: a huge field costs no memory beyond the file's bytes
            problems.error(Location(name, number), "", overlong_problem(field_at_end(raw[:MAX_RECORD_BYTES])))
            overlong = True
            continue
        rec = parse_line(raw, name, number, problems, loads)
        if rec is not None:
            records.append(rec)
    if (first_line == 1 and not overlong and len(problems.errors) > first_error
            and spanning_document(data, problems, name, first_error)):
        return [], n_lines
    return records, n_lines


def parse_line(raw: bytes, name: str, number: int, problems: Problems, loads: Any = orjson.loads) -> RawRecord | None:
    """One non-blank JSONL line -> its record, or None with the problem reported (invalid JSON, not an object, or
    beyond the limits of calibration/jsontext.py: nesting, one field's size)."""
    try:
        obj = loads(raw)
    except orjson.JSONDecodeError as exc:
        err = decode_error(exc, raw)
        problems.error(Location(name, number), "", err.message if "UTF-8" in exc.msg
                       else f"{err.message} (column {err.column})")
        return None
    if needs_check(raw):
        problem = check(obj)
        if problem is not None:
            problems.error(Location(name, number), *problem)
            return None
    if type(obj) is not dict:
        problems.error(Location(name, number), "", f"expected a JSON object, got {type_name(obj)}")
        return None
    return RawRecord(Location(name, number), obj)


def text_lines(path: Path, problems: Problems, limit: int | None = None) -> list[str]:
    """The lines of a UTF-8 text file (a leading UTF-8 BOM skipped), read in bounded memory: a line longer than
    MAX_RECORD_BYTES is read past and one that is not UTF-8 is reported, each replaced by "" so the numbering stays;
    a UTF-16 file is one problem and no lines. `limit`: stop after that many non-blank lines."""
    name, lines, cap = str(path), [], MAX_RECORD_BYTES
    with open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(0)
        enc = encoding_problem(head)
        if enc is not None:
            problems.error(Location(name, None), "", enc)
            return []
        number = filled = 0
        while limit is None or filled < limit:
            raw = fh.readline(cap + 1)
            if not raw:
                break
            number += 1
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if len(raw) > cap and not raw.endswith(b"\n"):
                problems.error(Location(name, number), "", overlong_problem(field_at_end(raw[:cap])))
                while raw and not raw.endswith(b"\n"):  # read past the rest of the line
                    raw = fh.readline(1 << 20)
                lines.append("")
                continue
            try:
                lines.append(raw.rstrip(b"\r\n").decode("utf-8"))
                filled += bool(lines[-1].strip())
            except UnicodeDecodeError as exc:
                problems.error(Location(name, number), "", f"not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                                                           f"{exc.start + 1}); save the file as UTF-8")
                lines.append("")
    return lines


def overlong_problem(field: str) -> str:
    """The message for a line refused unread (longer than MAX_RECORD_BYTES); `field` is where it passes the limit."""
    where = f"; it passes the limit in {field}" if field else ""
    return (f"the record is longer than {size_text(MAX_RECORD_BYTES)}, so it is not read: a field may hold at most "
            f"{size_text(MAX_FIELD_CHARS)} (README \"Size limits\"){where}")


def _read_table(path: Path, fmt: str, problems: Problems, json_columns: Collection[str]) -> Source:
    src = Source(path, fmt)
    try:
        if fmt == "csv":
            import pandas as pd

            # Everything as text: ids like "007" stay strings, and no cell silently becomes NaN.
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8")
            quoting = _csv_quote_problem(path)  # pandas' parser is lenient: a stray quote can swallow rows
            if quoting is not None:
                raise UsageError(quoting)
            rows: list[dict[str, Any]] = df.to_dict("records")
            columns = [str(c) for c in df.columns]
            first = 2  # spreadsheet numbering: the header is row 1
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            rows = table.to_pylist()
            columns = list(table.column_names)
            first = 1
    except UnicodeDecodeError:
        raise UsageError(_utf8_problem(path)) from None
    except UsageError:
        raise
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
        where = _unclosed_quote(path) if fmt == "csv" and "inside string" in str(exc) else None
        if where is not None:
            raise UsageError(f"{path}:row {where}: a quoted cell is never closed (a '\"' opens it and no '\"' ends "
                             "it before the end of the file)") from None
        raise UsageError(f"{path}: cannot read this {fmt.upper()} file: {exc}") from None
    src.columns = columns
    name = str(path)
    for i, row in enumerate(rows):
        loc = Location(name, i + first, "row")
        src.n_lines += 1
        out: dict[str, Any] = {}
        ok = True
        for col, value in row.items():
            if value is None or value == "" or (isinstance(value, float) and math.isnan(value)):
                continue  # an empty cell: the field is absent
            if col in json_columns and isinstance(value, str):
                try:
                    value = orjson.loads(value)
                except orjson.JSONDecodeError as exc:
                    problems.error(loc, str(col), f"invalid JSON in this column: {exc.msg} (column {exc.colno})")
                    ok = False
                    continue
            problem = check(value, keep=0)
            if problem is not None:
                inner = problem[0]
                problems.error(loc, str(col) + (inner if not inner or inner[0] == "[" else "." + inner), problem[1])
                ok = False
                continue
            out[str(col)] = value
        if ok:
            src.records.append(RawRecord(loc, out))
    return src


def _csv_rows(text: str) -> int:
    """How many CSV rows `text` starts (spreadsheet numbering: a quoted cell may span lines)."""
    return len(list(csv.reader(io.StringIO(text + "x"))))


def _csv_field(text: str) -> str:
    """The header name of the cell that the end of `text` is in ("" when unknown)."""
    rows = list(csv.reader(io.StringIO(text + "x")))
    if len(rows) < 2:
        return ""
    header, at = rows[0], len(rows[-1]) - 1
    return f"{header[at]}: " if at < len(header) else ""


def _utf8_problem(path: Path) -> str:
    """Where the first invalid UTF-8 byte is: the row as README numbers it, and the offset in the file."""
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        prefix = data[: exc.start].decode("utf-8").removeprefix("\ufeff")
        return (f"{path}:row {_csv_rows(prefix)}: {_csv_field(prefix)}not valid UTF-8 "
                f"(byte 0x{data[exc.start]:02x} at offset "
                f"{exc.start} of the file); save it as UTF-8")
    return f"{path}: not valid UTF-8"


def _csv_quote_problem(path: Path) -> str | None:
    """A quoted cell followed by more text before the next comma (`"a"b`), which pandas accepts silently. It is how
    an unterminated quote shows when a later row has a quote: the rows in between become part of one cell (and are
    lost as rows). Python's csv module in strict mode finds it; the row is where the bad record starts."""
    reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")), strict=True)
    rows = 0
    try:
        with _csv_cells_up_to_the_limit():
            for _ in reader:
                rows += 1
    except csv.Error as exc:
        if "field limit" in str(exc):
            return None  # a cell over the limit: refused with its row and column by the per-cell check
        what = ("has text after its closing '\"'" if "expected after" in str(exc)
                else "is never closed (a '\"' opens it and no '\"' ends it before the end of the file)")
        return (f"{path}:row {rows + 1}: a quoted cell {what}; a '\"' inside a quoted cell is written '\"\"', and an "
                "unterminated quote takes the following rows into its cell")
    return None


def _unclosed_quote(path: Path) -> int | None:
    """The row whose quoted cell runs to the end of the file (pandas counts from 0 and in lines, not rows)."""
    reader = csv.reader(io.StringIO(path.read_text(encoding="utf-8-sig")), strict=True)
    rows = 0
    try:
        with _csv_cells_up_to_the_limit():
            for _ in reader:
                rows += 1
    except csv.Error:
        return rows + 1
    return None


@contextmanager
def _csv_cells_up_to_the_limit() -> Iterator[None]:
    """The csv module refuses cells over 128 KiB by default (a process-wide setting): allow what the import allows
    (MAX_FIELD_CHARS), for the duration."""
    before = csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        yield
    finally:
        csv.field_size_limit(before)
