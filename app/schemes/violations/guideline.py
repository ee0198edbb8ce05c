"""The violations guideline (issue #29): its parts are the rules (`## rule R7`) and categories (`## category
Style`), each a unit of change; a changed rule or category affects the units whose checker output or ground truth
cites it (app/schemes/violations/store.py `units_citing`). Text before the first heading concerns every unit."""
from __future__ import annotations

from collections.abc import Collection
from typing import Any

from app.services.guidelines import split_sections

KINDS = ("rule", "category")


def _part(heading: str) -> str:
    kind, _, name = heading.partition(" ")
    if kind not in KINDS or not name.strip():
        raise ValueError(f"a heading must be `## rule ID` or `## category NAME`, got `## {heading}`")
    return f"{kind} {name.strip()}"


def split(text: str) -> dict[str, str]:
    return split_sections(text, _part)


def affected(project: Any, parts: Collection[str]) -> set[tuple[str, str]]:
    from app.schemes.violations.store import units_citing

    named = {kind: {p.partition(" ")[2] for p in parts if p.partition(" ")[0] == kind} for kind in KINDS}
    return units_citing(project, named["rule"], named["category"])
