"""Label Studio out (issue #27 item 9): `concord export PROJECT --format labelstudio --out tasks.json`.

Writes the project's violations and judge samples as Label Studio tasks (its import format, the same shape its JSON
export has, so `concord import` reads the file back: app/io/labelstudio.py):
  data         the text under its field (`text`, or the one it was imported from), the task's other data fields
               as imported, and `concord_id` (the sample id, so a file that went through Label Studio comes back
               to the same samples);
  annotations  one per annotator with a label of the sample: their curated ground truth as span labels
               (violations; a rule "A|B" is the labels ["A", "B"]; a violation without offsets cannot be a span and
               is left out, counted) or their label as one choice (judge); `completed_by` is the Label Studio user
               id for annotators imported as `user-<id>`, else `{"email": name}`;
  predictions  one per checker (its violations as span labels) or judge (its label as one choice; a judge
               without a label is left out, counted), `model_version` its name, `score` as imported;
  meta         (judge) `concord_levels`: the levels from negative to positive, so the import keeps their order.
Span offsets are code points, as Label Studio (since 2022) counts them. The file is written to a temporary file
beside `out` and renamed into place: a failed export leaves no half-written file. Deterministic: samples in import
order, annotators and names sorted, no timestamps.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import UsageError, os_error_message
from app.io import labelstudio as ls
from app.store import Project
from calibration.schemes.base import get

DEFAULT_CONTROL = {ls.SPANS: "label", ls.CHOICES: "choice"}  # from_name when the sample did not come from Label Studio
USER_ID = re.compile(ls.USER_PREFIX + r"(\d+)")


@dataclass
class LabelStudioExport:
    """What an export wrote: tasks per scheme, annotations, predictions, and what could not be written."""

    path: Path
    tasks: dict[str, int] = field(default_factory=dict)
    annotations: int = 0
    predictions: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # reason -> count

    def summary(self) -> str:
        lines = [f"wrote {sum(self.tasks.values())} Label Studio tasks to {self.path} ("
                 + ", ".join(f"{n} {s}" for s, n in self.tasks.items()) + f"): {self.annotations} annotations, "
                 f"{self.predictions} predictions"]
        lines += [f"  left out: {n} {reason}" for reason, n in self.skipped.items()]
        return "\n".join(lines)


def export_labelstudio(project: Project, out: str | Path, schemes: Sequence[str] | None = None) -> LabelStudioExport:
    """Write every sample of `project` whose scheme declares a Label Studio mapping (of `schemes` only, when given)
    to `out`: the built-ins' violations and judge samples."""
    out = Path(out)
    if out.is_dir():
        raise UsageError(f"--out: {out} is a directory; with --format labelstudio give the file to write (tasks.json)")
    held = project.counts.sample_counts()
    mappings = ls.mappings()
    present = [s for s in mappings if s in held and (schemes is None or s in schemes)]
    if not present:
        raise UsageError(f"--format labelstudio: the project holds no {' or '.join(mappings)} samples to export"
                         + (f" (of --scheme {', '.join(schemes)})" if schemes else ""))
    res = LabelStudioExport(out)
    labels: dict[str, list[tuple[str, Any]]] = {}
    kinds = [mappings[s].label_kind for s in present]
    for scheme, sid, unit, kind, annotator, value in project.decisions.annotator_label_rows(kinds):
        if unit == "" and scheme in mappings and mappings[scheme].label_kind == kind:
            labels.setdefault(sid, []).append((annotator, value))
    tasks = []
    for scheme in present:
        to_json = get(scheme).to_json
        for record in project.scheme_data.scheme_records(scheme):
            rec = to_json(record)
            tasks.append(_task(mappings[scheme], rec, labels.get(str(rec["id"]), []), res))
            res.tasks[scheme] = res.tasks.get(scheme, 0) + 1
    _write(out, json.dumps(tasks, ensure_ascii=False, indent=2, allow_nan=False) + "\n")
    return res


def _task(mapping: ls.LabelStudioMapping, rec: Mapping[str, Any], labels: list[tuple[str, Any]],
          res: LabelStudioExport) -> dict[str, Any]:
    meta = (rec.get("meta") or {}).get(ls.META) or {}
    meta = meta if isinstance(meta, Mapping) else {}
    text_field = meta.get("text_field") if isinstance(meta.get("text_field"), str) else ls.DEFAULT_TEXT
    other = meta.get("data") if isinstance(meta.get("data"), Mapping) else {}
    task: dict[str, Any] = {}
    if type(meta.get("task")) is int:
        task["id"] = meta["task"]
    task["data"] = {text_field: rec["text"], **{k: v for k, v in other.items() if k not in (text_field, ls.ID_FIELD)},
                    ls.ID_FIELD: rec["id"]}
    kind = mapping.result_type
    given = (meta.get("controls") or {}).get(kind) if isinstance(meta.get("controls"), Mapping) else None
    control = list(given) if isinstance(given, list) and len(given) == 2 else [DEFAULT_CONTROL[kind], text_field]
    control = [c or d for c, d in zip(control, (DEFAULT_CONTROL[kind], text_field))]
    annotations = []
    for annotator, value in sorted(labels, key=lambda x: x[0]):
        result = _result(mapping, rec["text"], value, control, res, mapping.unlabeled, output=False)
        if kind == ls.CHOICES and not result:
            continue
        annotations.append({"completed_by": _completed_by(annotator), "result": result})
    task["annotations"] = annotations
    res.annotations += len(annotations)
    scores = meta.get("scores") if isinstance(meta.get("scores"), Mapping) else {}
    predictions = []
    for name, output in sorted(mapping.predictions_of(rec).items()):
        result = _result(mapping, rec["text"], output, control, res, mapping.skipped, output=True)
        if kind == ls.CHOICES and not result:
            res.skipped[mapping.skipped] = res.skipped.get(mapping.skipped, 0) + 1
            continue
        predictions.append(_prediction(name, result, scores))
    task["predictions"] = predictions
    levels = mapping.levels_of(rec) if kind == ls.CHOICES else None
    if levels:
        task["meta"] = {ls.LEVELS_KEY: levels}  # Label Studio keeps a task's meta; the import reads the order
    res.predictions += len(predictions)
    return task


def _prediction(name: str, result: list[dict[str, Any]], scores: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"model_version": name, "result": result}
    if isinstance(scores.get(name), (int, float)) and not isinstance(scores.get(name), bool):
        out["score"] = scores[name]
    return out


def _result(mapping: ls.LabelStudioMapping, text: str, value: Any, control: list[str], res: LabelStudioExport,
            skipped: str, *, output: bool) -> list[dict[str, Any]]:
    """The Label Studio result list of a human label or (`output`) a prediction's output: its spans, or its one
    choice (a label is its choice; an output's is the mapping's `choice_of`)."""
    if mapping.result_type == ls.SPANS:
        assert mapping.spans_of is not None  # (a spans mapping declares it: app/io/labelstudio.py)
        return _spans(text, mapping.spans_of(value), control, res, skipped)
    if output:
        assert mapping.choice_of is not None  # (a choices mapping declares it)
        value = mapping.choice_of(value)
    return _choice(value, control)


def _spans(text: str, spans: list[tuple[Any, Any, list[str]]], control: list[str], res: LabelStudioExport,
           skipped: str) -> list[dict[str, Any]]:
    out = []
    for start, end, labels in spans:
        if start is None or end is None:
            res.skipped[skipped] = res.skipped.get(skipped, 0) + 1
            continue
        out.append({"from_name": control[0], "to_name": control[1], "type": ls.SPANS,
                    "value": {"start": start, "end": end, "text": text[start:end], "labels": labels}})
    return out


def _choice(value: Any, control: list[str]) -> list[dict[str, Any]]:
    if value is None:
        return []
    choice = ls.BOOLEAN[int(value)] if isinstance(value, bool) else str(value)
    return [{"from_name": control[0], "to_name": control[1], "type": ls.CHOICES, "value": {"choices": [choice]}}]


def _completed_by(annotator: str) -> Any:
    m = USER_ID.fullmatch(annotator)
    return int(m.group(1)) if m else {"email": annotator}


def _write(out: Path, text: str) -> None:
    """All or nothing: a temporary file beside `out`, renamed into place."""
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"--out: {os_error_message(exc, out) or exc}") from None
