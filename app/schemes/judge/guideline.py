"""The judge guideline (issue #29): one part per label level (`## level NAME`, e.g. `## level Unwanted`; binary
labels are the levels `true` and `false`); a changed level affects the units of the samples someone labeled with
it (their labels may now belong to another level). Text before the first heading concerns every unit."""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

from app.services.guidelines import split_sections

SCHEME = "judge"
LABEL = "label"  # the per-sample human label kind (calibration/schemes/judge/scheme.py)


def _part(heading: str) -> str:
    kind, _, name = heading.partition(" ")
    if kind != "level" or not name.strip():
        raise ValueError(f"a heading must be `## level NAME`, got `## {heading}`")
    return f"level {name.strip()}"


def split(text: str) -> dict[str, str]:
    return split_sections(text, _part)


def _level(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def affected(project: Any, parts: Collection[str]) -> set[tuple[str, str]]:
    levels = {p.partition(" ")[2] for p in parts if p.startswith("level ")}
    samples = {sid for scheme, sid, _u, _k, _a, value in project.decisions.annotator_label_rows([LABEL])
               if scheme == SCHEME and _level(value) in levels}
    return {(s, u) for s, u in project.guidelines.scheme_unit_keys(SCHEME) if s in samples}
