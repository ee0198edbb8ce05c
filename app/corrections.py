"""Human corrections as immutable command objects: applying one records events and returns its inverse.

The GUI's QUndoStack only wraps these; the CLI's label import uses the same objects, so every path into the
project writes the same events.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.store import Change, Project

@dataclass(frozen=True)
class SetLabels:
    """Set several targets at once (one undo step); its inverse restores the values found when it was applied."""

    changes: tuple[Change, ...]
    text: str = "edit"

    def apply(self, project: Project, annotator: str, *, origin: str = "app",
              known: Mapping[tuple[str, str, str], Any] | None = None) -> "SetLabels":
        """Record the changes; the inverse restores the values found before. `known`: those values, when the caller
        has just read them (the GUI session reads them to skip no-op commands; reading twice cost each commit)."""
        # The annotator's own labels (each annotator has theirs), so undo restores what this person had set.
        def before_of(c: Change) -> Any:
            key = (c.sample_id, c.unit, c.kind)
            return known[key] if known is not None and key in known else project.current(*key, annotator)

        before = tuple(Change(c.sample_id, c.unit, c.kind, before_of(c)) for c in self.changes)
        project.record(annotator, self.changes, origin=origin)
        return SetLabels(before, self.text)


@dataclass(frozen=True)
class Adjudicate(SetLabels):
    """An adjudicator's decision (issue #15): recorded with origin `adjudication`, so it resolves its targets whatever
    the annotators said; it is recorded even when it repeats the adjudicator's own earlier label. Its inverse restores
    the adjudicator's previous label, still as an adjudication (a cleared one abstains, so the others resolve again)."""

    adjudicates = True

    def apply(self, project: Project, annotator: str, *, origin: str = "app",
              known: Mapping[tuple[str, str, str], Any] | None = None) -> "SetLabels":
        from app.store.resolution import ADJUDICATION

        inverse = super().apply(project, annotator, origin=ADJUDICATION, known=known)
        return Adjudicate(inverse.changes, inverse.text)


def set_status(sample_id: str, unit: str, status: str | None) -> SetLabels:
    return SetLabels((Change(sample_id, unit, "status", status),), status or "clear status")


def set_note(sample_id: str, unit: str, note: str) -> SetLabels:
    return SetLabels((Change(sample_id, unit, "note", note or None),), "note")
