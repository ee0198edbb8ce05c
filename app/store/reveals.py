"""Blind mode without anchoring (issue #27): machine labels stay hidden from an annotator until they commit their own
decision for the unit; the commit reveals them for comparison, for good (what was seen cannot be unseen, so an undo
does not hide them again).

The setting is meta `hide_machine` ('1'/'0'); unset, it follows blind mode (app/store/assignments.py). A reveal is a
row of `reveals` (annotator, sample, unit), written in the commit's own transaction. Whether the machine's labels
were visible when an event was made is the event's `machine_visible` column (app/store/decisions.py `record`).
"""
from __future__ import annotations

from app.store.parts import ProjectPart
from app.store.project import now


class RevealsPart(ProjectPart):
    """`project.reveals`: which machine labels an annotator may see (module docstring)."""

    def hide_machine(self) -> bool:
        """Hide machine labels until the annotator's own decision: meta `hide_machine` when set, else blind mode."""
        value = self.project.get_meta("hide_machine")
        return self.project.assignments.blind() if value is None else value == "1"

    def set_hide_machine(self, on: bool) -> None:
        self.project.set_meta("hide_machine", "1" if on else "0")

    def revealed(self, annotator: str, sample_id: str, unit: str) -> bool:
        """Whether `annotator` has committed a decision on the unit (and so may see the machine's labels)."""
        return self.scalar("SELECT 1 FROM reveals WHERE annotator = ? AND sample_id = ? AND unit = ?",
                           (annotator, sample_id, unit)) is not None

    def reveal(self, annotator: str, sample_id: str, unit: str) -> None:
        """Record that `annotator` committed a decision on the unit (joins the caller's transaction if any)."""
        with self.transaction() as c:
            c.execute("INSERT OR IGNORE INTO reveals VALUES (?, ?, ?, ?)", (annotator, sample_id, unit, now()))
