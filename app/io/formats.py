"""Read JSONL, CSV and Parquet into plain records (dicts), one per line or row, with their location.

Parsing problems (malformed JSON, a list column that is not JSON, ...) are collected, never raised, so one pass
reports every bad line. In CSV and Parquet, list and object columns hold JSON strings (Parquet may also hold
them as native nested columns); an empty cell means the field is absent.
"""
from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from app.errors import UsageError
from app.io.problems import Location, Problems, type_name

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


def detect_format(path: str | Path) -> str:
    p = Path(path)
    fmt = FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise UsageError(f"{p}: unknown file type {p.suffix!r}; use .jsonl, .csv or .parquet")
    return fmt


def read_source(path: str | Path, problems: Problems, json_columns: Collection[str] = ()) -> Source:
    """Read every record of `path` (format by extension); bad lines go to `problems`."""
    p = Path(path)
    fmt = detect_format(p)
    if not p.is_file():
        raise UsageError(f"{p}: no such file")
    if fmt == "jsonl":
        return _read_jsonl(p, problems)
    return _read_table(p, fmt, problems, json_columns)


def _read_jsonl(path: Path, problems: Problems) -> Source:
    src = Source(path, "jsonl")
    data = path.read_bytes()
    src.records, src.n_lines = parse_jsonl(data, str(path), problems)
    return src


def parse_jsonl(data: bytes, name: str, problems: Problems, first_line: int = 1) -> tuple[list[RawRecord], int]:
    """Parse JSONL bytes (the whole file, or a slice starting at line `first_line`); returns (records, non-blank lines)."""
    if first_line == 1 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    loads = orjson.loads  # strict JSON (no NaN), several times faster than json for large files
    records: list[RawRecord] = []
    n_lines = 0
    for number, raw in enumerate(data.split(b"\n"), first_line):
        if not raw.strip():
            continue
        n_lines += 1
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as exc:
            msg = exc.msg
            problems.error(Location(name, number), "", f"invalid JSON: {msg}" if "UTF-8" in msg
                           else f"invalid JSON: {msg} (column {exc.colno})")
            continue
        if type(obj) is not dict:
            problems.error(Location(name, number), "", f"expected a JSON object, got {type_name(obj)}")
            continue
        records.append(RawRecord(Location(name, number), obj))
    return records, n_lines


def _read_table(path: Path, fmt: str, problems: Problems, json_columns: Collection[str]) -> Source:
    src = Source(path, fmt)
    try:
        if fmt == "csv":
            import pandas as pd

            # Everything as text: ids like "007" stay strings, and no cell silently becomes NaN.
            df = pd.read_csv(path, dtype=str, keep_default_na=False, na_filter=False, encoding="utf-8")
            rows: list[dict[str, Any]] = df.to_dict("records")
            columns = [str(c) for c in df.columns]
            first = 2  # spreadsheet numbering: the header is row 1
        else:
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            rows = table.to_pylist()
            columns = list(table.column_names)
            first = 1
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not valid UTF-8 (byte {exc.start + 1})") from None
    except Exception as exc:  # pandas/pyarrow raise many types for unreadable files
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
            out[str(col)] = value
        if ok:
            src.records.append(RawRecord(loc, out))
    return src
