"""Import adapter of the `judge` scheme: its records go the generic way; FaithBench's released `batch_N.json` files
(`{"samples": [...]}`, each sample with `annotations` and the detectors' outputs in `metadata`) are read by
`read_file` as they are.

`concord import PROJECT batch_1.json`: one judge record per summary (calibration/schemes/judge/faithbench.py:
id `faithbench-b<N>-<sample_id>`, one judge per detector), and for each annotator who marked anything in the batch
their `label` (hallucinated or not) and `marks` (their spans) of every summary of it, recorded in the same
all-or-nothing import as the records (Source.labels, as `concord labels import` records label lines).
`--count-all` also counts spans labeled Questionable or Benign as hallucinations.
The same spans as violations ground truth: a violations sample `<judge id>/spans` per summary and each reader's
ground-truth line (`span_samples`, the label-line form the Label Studio import writes); a span whose quote is not at
its offsets is placed where the quote is and reported as a warning naming the sample and annotation.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any


from app.io.formats import RawRecord, Source, json_document
from app.io.labelstudio import CHOICES, LabelStudioMapping, Span
from app.io.problems import Location, Problems
from calibration import jsontext
from calibration.schemes.judge.faithbench import (
    ALL_COUNTED,
    COUNTED,
    FaithBenchError,
    batch_name,
    convert,
    span_samples,
)

if TYPE_CHECKING:
    from app.io.records import RecordValidator
    from app.store import Project

NAME = "judge"
SAMPLE_KEYS = frozenset(("sample_id", "summary", "annotations", "metadata"))


def check(v: "RecordValidator", loc: Location, record: Any | None) -> None:
    """No cross-record rules beyond the generic unique ids."""


def collect(v: "RecordValidator", loc: Location, record: Any) -> None:
    v.out.records.setdefault(NAME, []).append(record)


def _faithbench(path: Path) -> dict[str, Any] | None:
    """The decoded file when it is a FaithBench batch (a .json object whose `samples` are FaithBench samples)."""
    raw = json_document(path)
    if not (isinstance(raw, dict) and isinstance(raw.get("samples"), list) and raw["samples"]):
        return None
    first = raw["samples"][0]
    return raw if isinstance(first, dict) and SAMPLE_KEYS <= first.keys() else None


def read_file(path: str | Path, problems: Problems, options: Mapping[str, Any], project: "Project | None" = None) -> Source | None:
    """The judge records and annotators' label lines of a FaithBench batch file, or None when `path` is not one."""
    path = Path(path)
    raw = _faithbench(path)
    if raw is None:
        return None
    name = str(path)
    whole = Location(name, None)
    src = Source(path, "faithbench", n_lines=len(raw["samples"]))
    too_big = jsontext.check(raw)  # nesting and field size, with the path of the first excess
    if too_big is not None:
        problems.error(whole, *too_big)
        return src
    batches = {batch_name(path): raw}
    try:
        records, lines = convert(batches, ALL_COUNTED if options.get("count_all") else COUNTED)
        spans, truths, moved = span_samples(batches)
    except FaithBenchError as exc:
        problems.error(whole, "", str(exc))
        return src
    where = {rec["id"]: Location(name, i + 1, "sample") for i, rec in enumerate(records)}
    where.update((rec["id"], Location(name, i + 1, "sample")) for i, rec in enumerate(spans))
    for m in moved:
        problems.warn(where[spans[m.sample]["id"]], f"annotations[{m.annotation}].summary_span", m.message())
    src.records = [RawRecord(where[rec["id"]], rec) for pair in zip(records, spans) for rec in pair]
    src.labels = [RawRecord(where[ln["sample"]], ln) for annotator in sorted(lines) for ln in lines[annotator]]
    src.labels += [RawRecord(where[ln["sample"]], ln) for ln in truths]
    return src


# -- Label Studio (app/io/labelstudio.py): choices are judge labels --------------------------------------------------
def _ls_record(sample_id: str, text: str, predictions: dict[str, Any], levels: list[str] | None) -> dict[str, Any]:
    record: dict[str, Any] = {"scheme": "judge", "id": sample_id, "text": text, "judges": predictions}
    if levels is not None:
        record["levels"] = levels
    return record


def _ls_label_line(sample_id: str, annotator: str, _spans: list[Span], choice: Any) -> dict[str, Any] | None:
    """An annotator's choice is their `label` of the sample."""
    return None if choice is None else {"scheme": "judge", "sample": sample_id, "annotator": annotator, "label": choice}


def _ls_prediction(_text: str, _spans: list[Span], choice: Any, score: float | None,
                   levels: list[str] | None) -> dict[str, Any] | None:
    """A judge's output from its chosen level: its label, and P(positive) as the score for two levels (or true/false:
    the prediction's `score` when it chose the positive level, 1 - score otherwise, 1 or 0 without a score), else the
    level's index."""
    if choice is None:
        return None
    if levels is not None and len(levels) > 2:
        return {"score": levels.index(choice), "probability": False, "threshold": 1, "label": choice}
    positive = choice is True if levels is None else choice == levels[-1]
    p = 1.0 if score is None else float(score) if 0.0 <= score <= 1.0 else 1.0
    return {"score": p if positive else round(1.0 - p, 12), "probability": True, "label": choice}


LABELSTUDIO = LabelStudioMapping(
    CHOICES, "label", record=_ls_record, label_line=_ls_label_line, prediction=_ls_prediction,
    predictions_of=lambda rec: rec.get("judges", {}), choice_of=lambda output: output.get("label"),
    levels_of=lambda rec: rec.get("levels") or None, skipped="judge outputs without a label")
