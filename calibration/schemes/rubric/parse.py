"""Validate one raw `rubric` record into a `RubricSample` (pure; field paths on every problem).

Whether a trait agrees with the same trait elsewhere in the file or in the project is checked by the importer
(app/schemes/rubric/io.py); here each trait is validated on its own and returned in canonical form.
"""
from __future__ import annotations

from typing import Any

from calibration.schemes.base import FieldProblem, Parsed
from calibration.schemes.rubric.buckets import BucketError, validate_buckets
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.rubric.traits import MetricTrait, TraitError
from calibration.schemes.fields import EMPTY_DROPPED, REPEATED, clip, key, meta_of, record_id, string, type_name, unknown

RECORD_KEYS = frozenset(("scheme", "id", "question", "response", "traits", "buckets", "split", "meta"))


def parse_record(rec: dict[str, Any]) -> Parsed:
    problems: list[FieldProblem] = []
    if rec.keys() - RECORD_KEYS:
        problems.extend(unknown("rubric", n) for n in rec.keys() - RECORD_KEYS)
    sid = record_id(rec, problems)
    question = string(rec, "question", True, problems)
    response = string(rec, "response", True, problems)
    split = string(rec, "split", False, problems)
    meta = meta_of(rec, problems)
    traits = traits_of(rec.get("traits"), problems)
    buckets: dict[str, dict[str, list[str]]] = {}
    raw = rec.get("buckets")
    if raw is not None and type(raw) is not dict:
        problems.append(FieldProblem("buckets", f"expected an object mapping trait names to buckets, got {type_name(raw)}"))
    elif raw is not None:
        names = {t["name"] for t in traits}
        for name, b in raw.items():
            path = f"buckets{key(name)}"
            if traits and name not in names:
                problems.append(FieldProblem(path, f"no trait named {clip(name)} in this record's traits"))
                continue
            dropped: list[str] = []
            try:
                buckets[name] = dict(validate_buckets(b, path, dropped))
            except BucketError as exc:
                problems.append(FieldProblem(exc.path, exc.message))
                continue
            problems.extend(FieldProblem(d, "empty or whitespace-only excerpt dropped (as Karenina's deduplication does)",
                                         "warning", EMPTY_DROPPED) for d in dropped)
    # With errors, what was valid is still returned (Parsed.ok is False), so the importer can check the traits
    # against the rest of the file.
    return Parsed(RubricSample(sid or "", question or "", response or "", tuple(traits), buckets, split, meta),
                  tuple(problems))


def traits_of(raw: Any, problems: list[FieldProblem]) -> list[dict[str, Any]]:
    """Canonical trait definitions (MetricTrait.to_dict()), each with its path `traits[i]` checked."""
    if type(raw) is not list or not raw:
        problems.append(FieldProblem("traits", "is required: a non-empty array of metric traits" if raw is None or raw == []
                                     else f"expected an array of metric traits, got {type_name(raw)}"))
        return []
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for i, t in enumerate(raw):
        path = f"traits[{i}]"
        warnings: list[str] = []
        try:
            trait = MetricTrait.from_dict(t, warnings=warnings)
        except TraitError as exc:
            problems.append(FieldProblem(path if exc.field == "trait" else f"{path}.{exc.field}", exc.message))
            continue
        except TypeError as exc:
            problems.append(FieldProblem(path, str(exc)))
            continue
        if trait.name in seen:
            problems.append(FieldProblem(f"{path}.name", f"trait {clip(trait.name)} appears twice in this record"))
            continue
        seen.add(trait.name)
        for w in warnings:  # "metrics[2]: metric 'f1' is named more than once; it is computed once"
            where, _, message = w.partition(": ")
            problems.append(FieldProblem(f"{path}.{where}", message, "warning", REPEATED))
        out.append(trait.to_dict())
    return out
