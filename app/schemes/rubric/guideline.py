"""The rubric guideline (issue #29): one part per metric trait (`## trait NAME`, the trait's name as the traits
file has it); a changed trait affects that trait's units only. Text before the first heading concerns every unit."""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

from app.services.guidelines import split_sections

SCHEME = "rubric"


def _part(heading: str) -> str:
    kind, _, name = heading.partition(" ")
    if kind != "trait" or not name.strip():
        raise ValueError(f"a heading must be `## trait NAME`, got `## {heading}`")
    return f"trait {name.strip()}"


def split(text: str) -> dict[str, str]:
    return split_sections(text, _part)


def affected(project: Any, parts: Collection[str]) -> set[tuple[str, str]]:
    traits = {p.partition(" ")[2] for p in parts if p.startswith("trait ")}
    return project.guidelines.scheme_unit_keys(SCHEME, traits)
