"""The project file. The only package that contains SQL (besides the schemes' own store modules)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from app.store.decisions import STATUSES, Change
from app.store.samples import WriteCounts
from app.store.schema import LATEST as SCHEMA_VERSION
from app.store.units import UnitFilter

if TYPE_CHECKING:
    from app.store.assembled import Project


def __getattr__(name: str) -> Any:
    """`Project` is assembled on first use (app/store/assembled.py): importing the package (e.g. for `WriteCounts`)
    does not import every part of the project class."""
    if name == "Project":
        from app.store.assembled import Project

        globals()["Project"] = Project
        return Project
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Project", "Change", "UnitFilter", "WriteCounts", "STATUSES", "SCHEMA_VERSION"]
