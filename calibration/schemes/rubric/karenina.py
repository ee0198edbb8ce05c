"""Karenina metric traits as they are: the JSON of `MetricRubricTrait` objects (`model_dump_json()`), read into
MetricTraits with Karenina's rules (see traits.py) and messages that point at the line and field.

Accepted layouts, detected from the text:
- one trait object, or a JSON array of trait objects;
- a Karenina `Rubric` object: its `metric_traits` are read, the other trait kinds (llm, regex, callable) are not
  metric traits and are skipped with a warning;
- JSONL: one trait object per line.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from calibration.jsontext import JSONTextError, loads
from calibration.schemes.fields import type_name
from calibration.schemes.rubric.traits import MetricTrait, TraitError

RUBRIC_KINDS = ("llm_traits", "regex_traits", "callable_traits", "metric_traits")


@dataclass
class TraitFile:
    traits: list[MetricTrait] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # "line: path: message"
    warnings: list[str] = field(default_factory=list)


def _line_of(text: str, needle_index: int) -> int:
    return text.count("\n", 0, needle_index) + 1


def _items(text: str, out: TraitFile) -> list[tuple[int, str, Any]]:
    """(line, path, raw trait) for every trait in the text."""
    stripped = text.strip()
    if not stripped:
        out.problems.append("1: the file is empty; expected Karenina MetricRubricTrait JSON")
        return []
    first_line = _line_of(text, len(text) - len(text.lstrip()))
    try:
        doc = loads(stripped)  # strict JSON within the limits of calibration/jsontext.py (depth, field size)
    except JSONTextError as exc:
        if exc.line is None:  # valid JSON beyond a limit
            out.problems.append(f"{first_line}: {exc.field + ': ' if exc.field else ''}{exc.message}")
            return []
        lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
        items = []
        for n, line in lines:
            try:
                items.append((n, "", loads(line, bom=False)))
            except JSONTextError as exc:
                where = f" (column {exc.column})" if exc.column is not None else ""
                out.problems.append(f"{n}: {exc.field + ': ' if exc.field else ''}{exc.message}{where}")
        return items
    if isinstance(doc, list):
        return [(first_line, f"[{i}]", t) for i, t in enumerate(doc)]
    if isinstance(doc, Mapping) and any(k in doc for k in RUBRIC_KINDS):
        for kind in RUBRIC_KINDS[:3]:
            if doc.get(kind) is not None and not isinstance(doc[kind], list):
                out.problems.append(f"{first_line}: {kind}: expected a list, got {type_name(doc[kind])}")
            elif doc.get(kind):
                out.warnings.append(f"{kind}: {len(doc[kind])} trait(s) skipped: only metric traits are imported")
        unknown = sorted(set(doc) - set(RUBRIC_KINDS))
        if unknown:
            out.problems.append(f"{first_line}: {unknown[0]}: unknown Rubric field; valid: {', '.join(RUBRIC_KINDS)}")
        raw = doc.get("metric_traits") or []
        if not isinstance(raw, list):
            out.problems.append(f"{first_line}: metric_traits: expected a list, got {type_name(raw)}")
            return []
        return [(first_line, f"metric_traits[{i}]", t) for i, t in enumerate(raw)]
    return [(first_line, "", doc)]


def parse_trait_file(text: str) -> TraitFile:
    """Every trait of a Karenina trait file, validated; problems name the line and the field path."""
    out = TraitFile()
    seen: dict[str, dict[str, Any]] = {}
    for line, path, raw in _items(text, out):
        where = f"{line}: {path + '.' if path else ''}"
        warnings: list[str] = []
        try:
            trait = MetricTrait.from_dict(raw, strict=True, warnings=warnings)
        except TraitError as exc:
            field_path = path if exc.field == "trait" else f"{path + '.' if path else ''}{exc.field}"
            out.problems.append(f"{line}: {field_path}: {exc.message}")
            continue
        except TypeError as exc:
            out.problems.append(f"{line}: {path or 'trait'}: {exc}")
            continue
        out.warnings.extend(f"{where}{w}" for w in warnings)
        if trait.name in seen:
            if seen[trait.name] != trait.to_dict():
                out.problems.append(f"{where}name: trait {trait.name!r} is defined twice, differently")
            else:
                out.warnings.append(f"{where}name: trait {trait.name!r} appears twice (same definition)")
            continue
        seen[trait.name] = trait.to_dict()
        out.traits.append(trait)
    return out
