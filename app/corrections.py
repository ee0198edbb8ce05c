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
              known: Mapping[tuple[str, str, str], Any] | None = None,
              machine_visible: bool | None = None) -> "SetLabels":
        """Record the changes; the inverse restores the values found before. `known`: those values, when the caller
        has just read them (the GUI session reads them to skip no-op commands; reading twice cost each commit).
        `machine_visible`: whether the machine's labels were on screen (stored with each event; None: not known)."""
        # The annotator's own labels (each annotator has theirs), so undo restores what this person had set.
        def before_of(c: Change) -> Any:
            key = (c.sample_id, c.unit, c.kind)
            return known[key] if known is not None and key in known else project.decisions.current(*key, annotator)

        before = tuple(Change(c.sample_id, c.unit, c.kind, before_of(c)) for c in self.changes)
        project.decisions.record(annotator, self.changes, origin=origin, machine_visible=machine_visible)
        return SetLabels(before, self.text)


@dataclass(frozen=True)
class Adjudicate(SetLabels):
    """An adjudicator's decision (issue #15): recorded with origin `adjudication`, so it resolves its targets whatever
    the annotators said; it is recorded even when it repeats the adjudicator's own earlier label. Its inverse restores
    the adjudicator's previous label, still as an adjudication (a cleared one abstains, so the others resolve again)."""

    adjudicates = True

    def apply(self, project: Project, annotator: str, *, origin: str = "app",
              known: Mapping[tuple[str, str, str], Any] | None = None,
              machine_visible: bool | None = None) -> "SetLabels":
        from app.store.resolution import ADJUDICATION

        inverse = super().apply(project, annotator, origin=ADJUDICATION, known=known, machine_visible=machine_visible)
        return Adjudicate(inverse.changes, inverse.text)


@dataclass(frozen=True)
class Commit(SetLabels):
    """An annotator's own decision on a unit made while the machine's labels were hidden (blind mode without
    anchoring, app/store/reveals.py): applying it also reveals them for `unit` = (sample_id, unit), in the same
    transaction. Its inverse is a plain SetLabels: an undo restores the labels, not the hiding."""

    unit: tuple[str, str] = ("", "")
    advances = False  # the window stays on the unit, to show what was revealed

    def apply(self, project: Project, annotator: str, *, origin: str = "app",
              known: Mapping[tuple[str, str, str], Any] | None = None,
              machine_visible: bool | None = None) -> "SetLabels":
        with project.transaction():
            inverse = super().apply(project, annotator, origin=origin, known=known, machine_visible=machine_visible)
            project.reveals.reveal(annotator, *self.unit)
        return inverse


def commit(sample_id: str, unit: str, changes: tuple[Change, ...], agrees: bool, text: str = "commit") -> Commit:
    """The annotator's own labels of the unit with its status: 'accepted' when they equal what accepting the
    machine's labels would record (`agrees`), else 'corrected', so the status stays true to what happened."""
    status = Change(sample_id, unit, "status", "accepted" if agrees else "corrected")
    return Commit((*[c for c in changes if c.kind != "status"], status), text, (sample_id, unit))


def set_status(sample_id: str, unit: str, status: str | None) -> SetLabels:
    return SetLabels((Change(sample_id, unit, "status", status),), status or "clear status")


def set_note(sample_id: str, unit: str, note: str) -> SetLabels:
    return SetLabels((Change(sample_id, unit, "note", note or None),), "note")
