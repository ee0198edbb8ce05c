"""Curated ground truth (issue #15): an annotator's own list of ground-truth violations for a sample.

Label kind `ground_truth` (per sample, unit ''): a list of violations as import reads them (`violation_json`:
start/end, quote, rule, category, explanation, correction). Each annotator keeps theirs; the resolved one
(app/store/resolution.py) replaces the file's ground truth wherever calibration, evaluation and export read the
samples (`with_ground_truth`). A label line may also carry bare spans (`{"start", "end", "label"}`, optionally
`quote` and `note`; FaithBench's annotations): `spans_to_violations` turns them into violations (rule = the labels
joined by '|', category = the part of the first label before '.', explanation = the note), so they go through the
same validation as an imported record.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from calibration.schemes.base import FieldProblem, LabelKind, Parsed
from calibration.schemes.violations.parse import parse_record, violation_json
from calibration.schemes.violations.records import Violation, ViolationSample

KIND = "ground_truth"
SPAN_RULE = "span"  # the rule of a span that has no label


def _validate(value: Any) -> list[FieldProblem]:
    if value is None:
        return []
    if not isinstance(value, list):
        return [FieldProblem("", f"expected an array of violations, got {type(value).__name__}")]
    return [FieldProblem(f"[{i}]", f"expected a violation object, got {type(v).__name__}")
            for i, v in enumerate(value) if not isinstance(v, dict)]


GROUND_TRUTH = LabelKind(KIND, _validate, per_sample=True,
                         description="an annotator's curated ground-truth violations of the sample")


def spans_to_violations(spans: Any) -> tuple[list[Any], list[FieldProblem]]:
    """Bare spans -> violation objects (offsets checked later by `parse_ground_truth`)."""
    if not isinstance(spans, list):
        return [], [FieldProblem("spans", f"expected an array of spans, got {type(spans).__name__}")]
    out: list[Any] = []
    problems: list[FieldProblem] = []
    for i, sp in enumerate(spans):
        if not isinstance(sp, dict):
            problems.append(FieldProblem(f"spans[{i}]", f"expected a span object, got {type(sp).__name__}"))
            continue
        label = sp.get("label")
        labels = [label] if isinstance(label, str) else list(label) if isinstance(label, list) else []
        if label is not None and not all(isinstance(x, str) for x in labels):
            problems.append(FieldProblem(f"spans[{i}].label", "expected a string or an array of strings"))
            continue
        v: dict[str, Any] = {"start": sp.get("start"), "end": sp.get("end"),
                             "rule": "|".join(labels) if labels else SPAN_RULE}
        if labels:
            v["category"] = labels[0].split(".", 1)[0]
        if sp.get("quote") is not None and not isinstance(sp["quote"], str):
            problems.append(FieldProblem(f"spans[{i}].quote", "expected a string (the span's text)"))
            continue
        if sp.get("quote") is not None:
            v["quote"] = sp["quote"]
        if isinstance(sp.get("note"), str) and sp["note"]:
            v["explanation"] = sp["note"]
        out.append(v)
    return out, problems


def parse_ground_truth(sample_id: str, text: str, raw: Any, field: str = "ground_truth") -> tuple[list[dict[str, Any]] | None, list[FieldProblem]]:
    """Validate violations against the sample's text exactly as sample import does; the normalised label value."""
    parsed: Parsed = parse_record({"id": sample_id, "text": text, "ground_truth": raw, "predictions": {}})
    problems = [replace(p, field=field + p.field[len("ground_truth"):]) if p.field.startswith("ground_truth") else p
                for p in parsed.problems]
    if not parsed.ok:
        return None, problems
    return [violation_json(v) for v in parsed.record.sample.ground_truth], problems


def violations_of(value: Sequence[Mapping[str, Any]]) -> tuple[Violation, ...]:
    return tuple(Violation(v["rule"], v.get("start"), v.get("end"), v.get("quote"), v.get("category"),
                           v.get("explanation"), v.get("correction")) for v in value)


def with_ground_truth(sample: ViolationSample, value: Sequence[Mapping[str, Any]] | None) -> ViolationSample:
    """The sample with its curated ground truth (unchanged when there is none)."""
    if value is None:
        return sample
    return replace(sample, ground_truth=violations_of(value))


def spans_of(value: Sequence[Mapping[str, Any]] | None) -> list[tuple[int, int]]:
    """The grounded spans of a ground-truth value (for span agreement)."""
    return [(int(v["start"]), int(v["end"])) for v in value or () if v.get("start") is not None and v.get("end") is not None]
