"""Label Studio in (issue #27 item 9): a Label Studio JSON export read as records and label lines for `concord import`.

A Label Studio export is a JSON array of tasks `{"id", "data": {...}, "annotations": [...], "predictions": [...]}`
(older versions say `completions` for annotations). Each annotation has `completed_by` (a user id, or an object with
`email`) and a `result` list; each prediction has `model_version`, an optional `score` and a `result` list. A result
`{"from_name", "to_name", "type", "value"}` is read when its type is
  labels   a span `value: {start, end, text, labels}` (the file's result type when any task has span labels);
  choices  `value: {choices: [one]}` (when no task has span labels).
The file becomes samples of the scheme whose io contribution declares a Label Studio mapping (`LABELSTUDIO`, a
`LabelStudioMapping`) for that result type: it builds the record of a task, each annotator's label line and each
prediction's output (`model_version`) from the spans or the choice read here. The built-ins: span labels ->
violations (ground truth and checkers' violations), choices -> judge (labels and judges' outputs).
Other result types are ignored with a warning. Choices "true"/"false" are true/false labels; any others are the
choices' `levels`, from most negative to most positive: `--levels` (options["levels"]) gives their order, else a
task's `meta.concord_levels` (what the export writes), else the order they first appear in (a warning says which
one counts as positive).

The sample's text is `data[--text-field]` (default `text`, else the first string field); its id is
`data.concord_id` (what `concord export --format labelstudio` writes), else `task-<id>` (`p<project>-task-<id>`
when the task names its Label Studio project), else `<file name>-<N>`.
Span offsets are code points (Label Studio since 2022); a span whose `text` sits at those offsets only when they
are read as UTF-16 units (older versions, JavaScript string indices) is converted. What the export needs to write
the file back the same way (task id, text field, other data fields, control names, prediction scores) is kept in
the record's `meta.labelstudio`.

Every problem names the file, the task (counted from 1) and the field (`annotations[0].result[2].value.end`);
any problem refuses the whole file (the import is one transaction). Detected from content: a .json file holding a
non-empty array whose first item is an object with a `data` object.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any


from app.errors import UsageError
from app.io.formats import RawRecord, Source, json_document
from app.io.problems import Location, Problems, type_name
from app.schemes import loader
from calibration import jsontext
from calibration.schemes.base import registry

if TYPE_CHECKING:
    from app.store import Project

FORMAT = "labelstudio"
SPANS, CHOICES = "labels", "choices"  # the result types read
ID_FIELD = "concord_id"  # data field holding the Concord sample id (written by the export)
LEVELS_KEY = "concord_levels"  # the choices' levels in order, in a task's `meta` (written by the export)
DEFAULT_MODEL = "labelstudio"  # the checker's (judge's) name of a prediction without model_version
DEFAULT_TEXT = "text"
BOOLEAN = ("false", "true")  # choices read as true/false labels
META = "labelstudio"
USER_PREFIX = "user-"  # annotator name of a numeric completed_by


OPTIONS = ("text_field", "levels")  # the import options only a Label Studio file takes (refused for any other)

Span = tuple[int, int, list[str]]  # (start, end, labels) of one span label


@dataclass(frozen=True)
class LabelStudioMapping:
    """How one scheme's samples are Label Studio tasks (a scheme's io contribution declares it as `LABELSTUDIO`).

    Read: `record(sample_id, text, predictions, levels)` is the scheme's record of a task, `label_line(sample_id,
    annotator, spans, choice)` an annotator's label line (None: none), `prediction(text, spans, choice, score,
    levels)` one prediction's output (None: left out). `choice` is the one choice read (None without one).
    Write: `label_kind` is the per-sample human label written as annotations; `predictions_of(record)` the outputs
    by name; `spans_of(value)` the (start, end, labels) of a label or output (start/end None: not a span), or
    `choice_of(output)` an output's choice (a label is its choice); `levels_of(record)` the choices' order kept in
    the task's meta; `skipped` and `unlabeled` name what could not be written (predictions, annotations)."""

    result_type: str  # SPANS or CHOICES
    label_kind: str
    record: Callable[[str, str, dict[str, Any], list[str] | None], dict[str, Any]]
    label_line: Callable[[str, str, list[Span], Any], dict[str, Any] | None]
    prediction: Callable[[str, list[Span], Any, float | None, list[str] | None], Any]
    predictions_of: Callable[[Mapping[str, Any]], Mapping[str, Any]]
    spans_of: Callable[[Any], list[tuple[Any, Any, list[str]]]] | None = None
    choice_of: Callable[[Any], Any] | None = None
    levels_of: Callable[[Mapping[str, Any]], list[str] | None] = lambda _rec: None
    skipped: str = "predictions that cannot be written"
    unlabeled: str = "labels that cannot be written"


def mappings() -> dict[str, LabelStudioMapping]:
    """{scheme: its mapping} of the registered schemes whose io contribution declares one, in registry order."""
    out = {}
    for name in registry().names():
        mapping = loader.io(name).labelstudio
        if mapping is not None:
            out[name] = mapping
    return out


def decode(path: Path) -> list[Any] | None:
    """The decoded file when it looks like a Label Studio export (see the module's docstring), else None."""
    raw = json_document(path)
    if isinstance(raw, list) and raw and isinstance(raw[0], dict) and isinstance(raw[0].get("data"), dict):
        return raw
    return None


def read_file(path: str | Path, problems: Problems, options: Mapping[str, Any],
              project: Project | None = None) -> Source | None:
    """The records and annotators' label lines of a Label Studio export, or None when `path` is not one."""
    path = Path(path)
    tasks = decode(path)
    if tasks is None:
        return None
    src = Source(path, FORMAT, n_lines=len(tasks))
    too_big = jsontext.check(tasks)
    if too_big is not None:
        problems.error(Location(str(path), None), *too_big)
        return src
    reader = _Reader(str(path), tasks, options, problems)
    src.records, src.labels = reader.read()
    return src


def annotator_of(completed_by: Any) -> str | None:
    """The annotator's name: an email, else `user-<id>` (None when neither is there)."""
    if isinstance(completed_by, Mapping):
        email = completed_by.get("email")
        if isinstance(email, str) and email.strip():
            return email
        completed_by = completed_by.get("id")
    if type(completed_by) is int:
        return f"{USER_PREFIX}{completed_by}"
    if isinstance(completed_by, str) and completed_by.strip():
        return completed_by
    return None


def _utf16_offsets(text: str, start: int, end: int) -> tuple[int, int] | None:
    """UTF-16 unit offsets of `text` as code points, or None when they fall inside a character or past the end."""
    at: dict[int, int] = {}
    unit = 0
    for i, ch in enumerate(text):
        at[unit] = i
        unit += 2 if ord(ch) > 0xFFFF else 1
    at[unit] = len(text)
    s, e = at.get(start), at.get(end)
    return None if s is None or e is None else (s, e)


class _Reader:
    """One pass over the tasks: records, label lines, and every problem with its task and field."""

    def __init__(self, name: str, tasks: list[Any], options: Mapping[str, Any], problems: Problems) -> None:
        self.name, self.tasks, self.problems = name, tasks, problems
        self.text_field: str | None = options.get("text_field") or None
        levels = options.get("levels")
        self.levels: list[str] | None = list(levels) if levels else None
        self.kind, self.scheme, self.mapping = self._mapping()
        self.control: str | None = None  # the Choices control read (one per file)
        self.ignored: dict[str, list[Any]] = {}  # result type -> [first location, count]

    def _results(self) -> Any:
        """(task index, result) of every annotation and prediction, for the file-wide decisions."""
        for i, task in enumerate(self.tasks):
            if not isinstance(task, dict):
                continue
            for key in ("annotations", "completions", "predictions"):
                items = task.get(key)
                for item in items if isinstance(items, list) else ():
                    results = item.get("result") if isinstance(item, dict) else None
                    for r in results if isinstance(results, list) else ():
                        if isinstance(r, dict):
                            yield i, r

    def _mapping(self) -> tuple[str, str, LabelStudioMapping]:
        """Span labels anywhere: the spans' scheme; else choices anywhere: the choices'; else (no labels at all)
        the spans'. The scheme is the first registered one declaring a mapping of that result type."""
        types = {r.get("type") for _, r in self._results()}
        kind = SPANS if SPANS in types or CHOICES not in types else CHOICES
        for scheme, mapping in mappings().items():
            if mapping.result_type == kind:
                return kind, scheme, mapping
        raise UsageError(f"{self.name}: no registered scheme reads Label Studio {kind!r} results")

    def _levels(self) -> list[str] | None:
        """The choices' levels (None: true/false labels), checked against the choices the file holds."""
        seen: dict[str, int] = {}
        for i, r in self._results():
            value = r.get("value")
            if r.get("type") == CHOICES and isinstance(value, dict) and isinstance(value.get("choices"), list):
                for c in value["choices"]:
                    if isinstance(c, str):
                        seen.setdefault(c, i)
        whole = Location(self.name, None)
        if self.levels is not None:
            for c, i in seen.items():
                if c not in self.levels:
                    self.problems.error(Location(self.name, i + 1, "task"), "choices",
                                        f"{c!r} is not one of the levels {self.levels} (--levels, else the tasks' "
                                        f"meta.{LEVELS_KEY})")
            return self.levels
        if set(seen) <= set(BOOLEAN):
            return None
        for task in self.tasks:  # the order a Concord export wrote (in the task's own `meta`)
            kept = task.get("meta") if isinstance(task, dict) else None
            kept = kept.get(LEVELS_KEY) if isinstance(kept, dict) else None
            if isinstance(kept, list) and len(kept) >= 2 and all(isinstance(x, str) for x in kept):
                self.levels = list(kept)
                return self._levels()
        order = list(seen)
        if len(order) >= 2:
            self.problems.warn(whole, "choices", f"levels taken in the order they first appear, from negative to "
                               f"positive: {order} ({order[1]!r} and above count as positive); give --levels to "
                               "set the order")
        else:
            self.problems.warn(whole, "choices", f"the file holds one choice only ({order}): every label is positive; "
                               "give --levels to name the others")
        return order

    def read(self) -> tuple[list[RawRecord], list[RawRecord]]:
        levels = self._levels() if self.kind == CHOICES else None
        if self.kind == SPANS and self.levels is not None:
            self.problems.warn(Location(self.name, None), "levels", "--levels ignored: the file has span labels (its "
                               f"tasks are {self.scheme} samples), not choices")
        records: list[RawRecord] = []
        labels: list[RawRecord] = []
        for i, task in enumerate(self.tasks):
            loc = Location(self.name, i + 1, "task")
            n_errors = len(self.problems.errors)
            got = self._task(loc, i, task, levels)
            if got is not None and len(self.problems.errors) == n_errors:
                record, lines = got
                records.append(RawRecord(loc, record))
                labels.extend(RawRecord(loc, line) for line in lines)
        for kind, (where, n) in self.ignored.items():
            why = (f"the file has span labels, so its tasks are {self.scheme} samples, which take no choices"
                   if kind == CHOICES else "Concord reads span labels and choices")
            self.problems.warn(where, "type", f"{n} result(s) of type {kind!r} ignored ({why})")
        return records, labels

    # -- one task ---------------------------------------------------------------------------------------------------
    def _task(self, loc: Location, i: int, task: Any, levels: list[str] | None
              ) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
        err = self.problems.error
        if not isinstance(task, dict):
            err(loc, "", f"expected a task object, got {type_name(task)}")
            return None
        data = task.get("data")
        if not isinstance(data, dict):
            err(loc, "data", f"expected an object, got {type_name(data)}")
            return None
        field = self._text_field(data)
        if field is None:
            err(loc, "data", f"no field {self.text_field!r} (--text-field); it has {sorted(data)}" if self.text_field
                else "no string field to read as the text")
            return None
        text = data[field]
        if not isinstance(text, str):
            err(loc, f"data.{field}", f"expected a string (the text), got {type_name(text)}")
            return None
        sid = self._sample_id(loc, task, data, i)
        if sid is None:
            return None
        meta: dict[str, Any] = {"text_field": field}
        if type(task.get("id")) is int:
            meta["task"] = task["id"]
        other = {k: v for k, v in data.items() if k not in (field, ID_FIELD)}
        if other:
            meta["data"] = other
        controls: dict[str, list[str]] = {}
        lines: list[dict[str, Any]] = []
        key = "annotations" if "annotations" in task or "completions" not in task else "completions"
        annotations = task.get(key, [])
        if not isinstance(annotations, list):
            err(loc, key, f"expected an array, got {type_name(annotations)}")
            annotations = []
        seen: dict[str, int] = {}  # annotator -> their annotation
        for j, ann in enumerate(annotations):
            path = f"{key}[{j}]"
            if not isinstance(ann, dict):
                err(loc, path, f"expected an annotation object, got {type_name(ann)}")
                continue
            if ann.get("was_cancelled") is True:
                continue  # a skipped task: no decision
            annotator = annotator_of(ann.get("completed_by"))
            if annotator is None:
                err(loc, f"{path}.completed_by", "expected a user id or an object with an email (who annotated)"
                    if "completed_by" in ann else "is required (who annotated)")
                continue
            if annotator in seen:
                err(loc, f"{path}.completed_by", f"a second annotation by {annotator!r} (the first is "
                    f"{key}[{seen[annotator]}]); Concord keeps one label per annotator and sample")
                continue
            seen[annotator] = j
            spans, choices = self._result(loc, path, ann.get("result"), text, controls, levels)
            line = self.mapping.label_line(sid, annotator, spans, choices[0] if choices else None)
            if line is not None:
                lines.append(line)
        predictions, scores = self._predictions(loc, task.get("predictions", []), text, controls, levels)
        if scores:
            meta["scores"] = scores
        if controls:
            meta["controls"] = controls
        record = self.mapping.record(sid, text, predictions, levels)
        record["meta"] = {META: meta}
        return record, lines

    def _text_field(self, data: dict[str, Any]) -> str | None:
        if self.text_field is not None:
            return self.text_field if self.text_field in data else None
        if isinstance(data.get(DEFAULT_TEXT), str):
            return DEFAULT_TEXT
        return next((k for k, v in data.items() if isinstance(v, str) and k != ID_FIELD), None)

    def _sample_id(self, loc: Location, task: dict[str, Any], data: dict[str, Any], i: int) -> str | None:
        """`data.concord_id`; else `task-<id>` (`p<project>-task-<id>` when the task names its Label Studio project,
        so two projects' task 1 stay two samples); else `<file name>-<N>` for a file without ids."""
        for where, value in ((f"data.{ID_FIELD}", data.get(ID_FIELD)), ("id", task.get("id"))):
            if value is None:
                continue
            if not (type(value) is int or (isinstance(value, str) and value.strip())):
                self.problems.error(loc, where, f"expected a non-empty string or an integer, got {type_name(value)}")
                return None
            if where == "id":
                project = task.get("project")
                return (f"p{project}-" if type(project) is int else "") + f"task-{value}"
            return str(value)
        return f"{Path(self.name).stem}-{i + 1}"

    def _predictions(self, loc: Location, raw: Any, text: str, controls: dict[str, list[str]],
                     levels: list[str] | None) -> tuple[dict[str, Any], dict[str, float]]:
        """Prediction name (`model_version`) -> its output (the mapping's); the predictions' own scores by name."""
        err = self.problems.error
        out: dict[str, Any] = {}
        scores: dict[str, float] = {}
        if not isinstance(raw, list):
            err(loc, "predictions", f"expected an array, got {type_name(raw)}")
            return out, scores
        first: dict[str, int] = {}
        for j, pred in enumerate(raw):
            path = f"predictions[{j}]"
            if not isinstance(pred, dict):
                err(loc, path, f"expected a prediction object, got {type_name(pred)}")
                continue
            model = pred.get("model_version")
            model = DEFAULT_MODEL if model is None or model == "" else str(model) if type(model) is int else model
            if not isinstance(model, str) or not model.strip():
                err(loc, f"{path}.model_version", f"expected a string, got {type_name(model)}")
                continue
            if model in first:
                err(loc, f"{path}.model_version", f"a second prediction of {model!r} (the first is "
                    f"predictions[{first[model]}])")
                continue
            first[model] = j
            score = pred.get("score")
            if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))
                                      or not math.isfinite(score)):
                err(loc, f"{path}.score", f"expected a finite number, got {score!r}")
                continue
            if score is not None:
                scores[model] = score
            spans, choices = self._result(loc, path, pred.get("result"), text, controls, levels)
            output = self.mapping.prediction(text, spans, choices[0] if choices else None, score, levels)
            if output is not None:
                out[model] = output
        return out, scores

    # -- one result list --------------------------------------------------------------------------------------------
    def _result(self, loc: Location, path: str, raw: Any, text: str, controls: dict[str, list[str]],
                levels: list[str] | None) -> tuple[list[tuple[int, int, list[str]]], list[Any]]:
        """The spans (start, end, labels) and choices of one annotation's or prediction's result list."""
        err = self.problems.error
        spans: list[tuple[int, int, list[str]]] = []
        choices: list[Any] = []
        if raw is None:
            return spans, choices
        if not isinstance(raw, list):
            err(loc, f"{path}.result", f"expected an array, got {type_name(raw)}")
            return spans, choices
        for k, r in enumerate(raw):
            where = f"{path}.result[{k}]"
            if not isinstance(r, dict):
                err(loc, where, f"expected a result object, got {type_name(r)}")
                continue
            kind = r.get("type")
            if kind != self.kind:
                self.ignored.setdefault(str(kind), [loc, 0])[1] += 1
                continue
            value = r.get("value")
            if not isinstance(value, dict):
                err(loc, f"{where}.value", f"expected an object, got {type_name(value)}")
                continue
            for name in ("from_name", "to_name"):
                if isinstance(r.get(name), str):
                    controls.setdefault(kind, ["", ""])[0 if name == "from_name" else 1] = r[name]
            if kind == SPANS:
                span = self._span(loc, where, value, text)
                if span is not None:
                    spans.append(span)
            else:
                choice = self._choice(loc, where, r, value, levels)
                if choice is not None:
                    if choices:
                        err(loc, where, "a second choice in one annotation (Concord reads one choice per annotator)")
                    choices.append(choice)
        return spans, choices

    def _span(self, loc: Location, where: str, value: dict[str, Any], text: str) -> tuple[int, int, list[str]] | None:
        err = self.problems.error
        labels = value.get("labels")
        if not isinstance(labels, list) or not labels or not all(isinstance(x, str) and x.strip() for x in labels):
            err(loc, f"{where}.value.labels", f"expected a non-empty array of label names, got {labels!r}")
            return None
        start, end = value.get("start"), value.get("end")
        for name, v in (("start", start), ("end", end)):
            if type(v) is not int:
                err(loc, f"{where}.value.{name}", f"expected an integer offset, got {type_name(v)}")
                return None
        quote = value.get("text")
        if quote is not None and not isinstance(quote, str):
            err(loc, f"{where}.value.text", f"expected a string, got {type_name(quote)}")
            return None
        ok = 0 <= start < end <= len(text)
        if quote is None or (ok and text[start:end] == quote):
            if not ok:
                err(loc, f"{where}.value", f"offsets {start}..{end} are not a span of the text (its length is "
                    f"{len(text)} code points)")
                return None
            return start, end, labels
        units = _utf16_offsets(text, start, end)  # an older Label Studio counted UTF-16 units
        if units is not None and units[0] < units[1] and text[units[0]:units[1]] == quote:
            return units[0], units[1], labels
        held = repr(text[start:end][:60]) if ok else f"nothing (its length is {len(text)} code points)"
        err(loc, f"{where}.value.text", f"{quote[:60]!r} is not at {start}..{end} of the text; it holds {held}")
        return None

    def _choice(self, loc: Location, where: str, r: dict[str, Any], value: dict[str, Any],
                levels: list[str] | None) -> Any:
        err = self.problems.error
        control = r.get("from_name") if isinstance(r.get("from_name"), str) else ""
        if self.control is None:
            self.control = control
        elif control != self.control:
            err(loc, f"{where}.from_name", f"a second Choices control {control!r} (Concord reads one per file: "
                f"{self.control!r})")
            return None
        chosen = value.get("choices")
        if not isinstance(chosen, list) or len(chosen) != 1 or not isinstance(chosen[0], str):
            err(loc, f"{where}.value.choices", f"expected one choice (a string), got {chosen!r}")
            return None
        if levels is None:
            return chosen[0] == BOOLEAN[1]
        return chosen[0]
