"""Import of RGB's own files as they are (issue #13 item 2): its data files and evalue.py's prediction files.

Both are JSON lines under a `.json` name, so the generic reader would refuse them; `read_file` recognises them (by
evalue.py's file-name pattern, else by the first line's keys) and turns each line into an rgb record, which then
takes the ordinary path (the scheme's parser, unique ids, all-or-nothing write):
- a data file (`en.json`, `zh_int.json`, `en_fact.json`, `*_refine.json`) gives one sample per query, id
  `<dataset>/<id>`, with its passage pools and no docs or responses yet: no units until `concord generate`;
- a prediction file gives one sample per line, id `<dataset>/<id>/noise<r>/<model>` (rgbfiles.prediction_record),
  the model from the file name or `options["model"]` (`concord import --model`); when the project already holds
  the query's data-file sample, its fake answer and pools are joined in.
Keys RGB never reads (zh_int's `asnwer1`/`answer2`) are dropped. Problems name file, line and field.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.io.formats import RawRecord, Source, text_lines
from app.io.problems import Location, Problems
from calibration.jsontext import JSONTextError, loads
from calibration.schemes.rgb.records import record_to_json
from calibration.schemes.rgb.rgbfiles import (
    DATA_KEYS, PREDICTION_KEYS, DatasetName, dataset_name, parse_data_file, parse_prediction_file,
    parse_prediction_name, prediction_record,
)

if TYPE_CHECKING:
    from app.io.records import RecordValidator
    from app.store import Project

_CJK = re.compile(r"[\u4e00-\u9fff]")
_DATA_REQUIRED = frozenset(("id", "query", "answer", "positive", "negative"))


def _first_object(path: Path) -> dict[str, Any] | None:
    """The first line's object (read in bounded memory), or None when it is not one."""
    lines = [ln for ln in text_lines(path, Problems(), limit=1) if ln.strip()]
    if not lines:
        return None
    try:
        obj = loads(lines[0])
    except JSONTextError:
        return None
    return obj if isinstance(obj, dict) else None


def kind_of(path: Path) -> str | None:
    """"prediction", "data" or None (not an RGB file): evalue.py's output name, else the first line's keys."""
    if not path.is_file():
        return None
    if parse_prediction_name(path.name) is not None:
        return "prediction"
    if path.suffix.lower() not in (".json", ".jsonl"):
        return None
    first = _first_object(path)
    if first is None or "scheme" in first:
        return None
    keys = set(first)
    if set(PREDICTION_KEYS) <= keys:
        return "prediction"
    if _DATA_REQUIRED <= keys and not keys & {"response", "responses", "docs"}:
        return "data"
    return None


def _dataset(name: str, first_query: str, first: Mapping[str, Any] | None) -> DatasetName:
    """The dataset a file holds: from its name (RGB's own test: substrings; `run_en_fact.json` is en_fact, so ids
    of data and prediction files of one dataset meet), else from its content."""
    try:
        ds = dataset_name(name)
        return DatasetName(f"{ds.language}_{ds.kind}" if ds.kind else ds.language, ds.language, ds.kind)
    except ValueError:
        lang = "zh" if _CJK.search(first_query or "") else "en"
        kind = ""
        if first is not None:
            if "positive_wrong" in first or "fakeanswer" in first:
                kind = "fact"
            elif isinstance(first.get("positive"), list) and first["positive"] and isinstance(first["positive"][0], list):
                kind = "int"
        stem = f"{lang}_{kind}" if kind else lang
        return DatasetName(stem, lang, kind)


def read_file(path: str | Path, problems: Problems, options: Mapping[str, Any], project: "Project | None" = None) -> Source | None:
    """The records of an RGB data or prediction file, or None when `path` is not one."""
    path = Path(path)
    kind = kind_of(path)
    if kind is None:
        return None
    name = str(path)
    text = text_lines(path, problems)  # the lines; one too long, or not UTF-8, is a problem there and a blank here
    src = Source(path, "jsonl")
    first = _first_object(path)
    query = str((first or {}).get("query") or "")
    if kind == "data":
        ds = _dataset(path.name, query, first)
        instances, line_problems = parse_data_file(text, ds.dataset)
        numbers = _numbers(text)
        for p in line_problems:
            problems.error(Location(name, p.line), p.field, p.message)
        for inst, number in zip(instances, _valid_lines(numbers, {p.line for p in line_problems})):
            rec: dict[str, Any] = {"scheme": "rgb", "id": f"{ds.dataset}/{inst.id}", "task": ds.task,
                                   "language": ds.language, "query": inst.query, "answer": _answer(inst.answer),
                                   "docs": [], "positive": [list(g) if isinstance(g, tuple) else g for g in inst.positive],
                                   "negative": list(inst.negative)}
            if inst.positive_wrong is not None:
                rec["positive_wrong"] = list(inst.positive_wrong)
            if inst.fakeanswer is not None:
                rec["fakeanswer"] = _answer(inst.fakeanswer)
            src.records.append(RawRecord(Location(name, number), rec))
        src.n_lines = len(numbers)
        return src
    meta = parse_prediction_name(path.name) or {}
    model = options.get("model") or meta.get("model")
    if not model:
        problems.error(Location(name, None), "", "an RGB prediction file whose name does not follow evalue.py's "
                       "pattern (prediction_<dataset>_<model>_temp..._noise..._passage..._correct....json): "
                       "name the model with --model")
        src.n_lines = len(_numbers(text))
        return src
    ds = _dataset(meta["dataset"] if meta else path.name, query, None)
    lines, line_problems = parse_prediction_file(text)
    numbers = _numbers(text)
    for p in line_problems:
        problems.error(Location(name, p.line), p.field, p.message)
    stored = _stored_instances(project, [f"{ds.dataset}/{line.id}" for line in lines])
    for line, number in zip(lines, _valid_lines(numbers, {p.line for p in line_problems})):
        record = prediction_record(line, ds.dataset, str(model), stored.get(f"{ds.dataset}/{line.id}"))
        src.records.append(RawRecord(Location(name, number), record_to_json(record)))
    src.n_lines = len(numbers)
    return src


def _answer(a: Any) -> Any:
    return a if isinstance(a, str) else [e if isinstance(e, str) else list(e) for e in a]


def _numbers(lines: list[str]) -> list[int]:
    """1-based numbers of the non-blank lines (what the parsers number problems by)."""
    return [i for i, line in enumerate(lines, 1) if line.strip()]


def _valid_lines(numbers: list[int], bad: set[int]) -> list[int]:
    return [n for n in numbers if n not in bad]


def _stored_instances(project: "Project | None", ids: list[str]) -> dict[str, Any]:
    if project is None or not ids:
        return {}
    return {r.id: r for r in project.samples.records("rgb", sorted(set(ids)))}


def check(v: "RecordValidator", loc: Location, record: Any) -> None:
    """No cross-record rules beyond the importer's unique ids."""


def collect(v: "RecordValidator", loc: Location, record: Any) -> None:
    v.out.records.setdefault("rgb", []).append(record)


__all__ = ["DATA_KEYS", "kind_of", "read_file"]
