"""Guideline versions (issue #29 item 1): each scheme's guideline as numbered versions of its parts, and the version
in force on each human event.

A version is the whole guideline as parts (a rule, a trait, a category: what the scheme's guideline contribution
splits its text into, app/schemes/contracts.py `GuidelinePart`), numbered from 1 per scheme. Versions are never
changed; setting a guideline equal to the current one adds none. `events.guideline_version` is filled by
`record` (app/store/decisions.py) with `GUIDELINE_IN_FORCE_SQL`; NULL means the event predates the scheme's first
version ("before versioning").

Reads that some commands want limited to the labels still valid under one guideline version (`--guideline-version`)
honour `excluding_labels`: the (sample, unit, annotator) keys app/services/guidelines.py found stale.
"""
from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from app.store.parts import ProjectPart
from app.store.project import now

# The version of the sample's scheme in force now (one bound parameter: the sample id); NULL before any version.
GUIDELINE_IN_FORCE_SQL = ("(SELECT MAX(g.version) FROM guidelines g JOIN samples s ON s.scheme = g.scheme "
                          "WHERE s.id = ?)")


class GuidelinesPart(ProjectPart):
    """`project.guidelines`: guideline versions, and the labels reads leave out (`excluding_labels`)."""

    excluded_labels: frozenset[tuple[str, str, str]] = frozenset()

    def guideline_version(self, scheme: str) -> int | None:
        """The scheme's current guideline version, None before its first."""
        v = self.scalar("SELECT MAX(version) FROM guidelines WHERE scheme = ?", (scheme,))
        return None if v is None else int(v)

    def guideline_parts(self, scheme: str, version: int | None = None) -> dict[str, str]:
        """part -> text of a version (default: the current one) in the guideline's order; {} when there is none."""
        version = self.guideline_version(scheme) if version is None else version
        return dict(self.conn.execute("SELECT part, text FROM guidelines WHERE scheme = ? AND version = ? "
                                      "ORDER BY position", (scheme, version)))

    def guideline_history(self, scheme: str) -> list[dict[str, Any]]:
        """Every version of a scheme's guideline, oldest first: version, created_at, parts (part -> text, in order)."""
        out: dict[int, dict[str, Any]] = {}
        for version, created, part, text in self.conn.execute(
                "SELECT version, created_at, part, text FROM guidelines WHERE scheme = ? ORDER BY version, position",
                (scheme,)):
            out.setdefault(version, {"version": version, "created_at": created, "parts": {}})["parts"][part] = text
        return list(out.values())

    def guideline_schemes(self) -> list[str]:
        """The schemes that have a stored guideline."""
        return [r[0] for r in self.conn.execute("SELECT DISTINCT scheme FROM guidelines ORDER BY scheme")]

    def add_guideline_version(self, scheme: str, parts: Mapping[str, str]) -> int | None:
        """Store `parts` (in order) as the scheme's next version, in one transaction; None when they equal the
        current version's (nothing changed, no version added)."""
        with self.transaction() as c:
            current = self.guideline_version(scheme)
            if current is not None and list(self.guideline_parts(scheme, current).items()) == list(parts.items()):
                return None
            version = (current or 0) + 1
            at = now()
            c.executemany("INSERT INTO guidelines (scheme, version, part, position, text, created_at) "
                          "VALUES (?, ?, ?, ?, ?, ?)",
                          [(scheme, version, part, i, text, at) for i, (part, text) in enumerate(parts.items())])
        return version

    def label_guideline_versions(self, scheme: str) -> list[tuple[str, str, str, str, int | None]]:
        """(sample, unit, kind, annotator, guideline version of the event that set it) of every current, non-cleared
        label of a scheme's samples."""
        return [(s, u, k, a, v) for s, u, k, a, v in self.conn.execute(
            "SELECT l.sample_id, l.unit, l.kind, l.annotator, e.guideline_version FROM labels l "
            "JOIN events e ON e.id = l.event_id JOIN samples s ON s.id = l.sample_id "
            "WHERE s.scheme = ? AND l.value IS NOT NULL", (scheme,))]

    def label_versions(self) -> dict[tuple[str, str, str, str], int | None]:
        """(sample, unit, kind, annotator) -> the guideline version its current label was given under (agreement
        per version)."""
        return {(s, u, k, a): v for s, u, k, a, v in self.conn.execute(
            "SELECT l.sample_id, l.unit, l.kind, l.annotator, e.guideline_version FROM labels l "
            "JOIN events e ON e.id = l.event_id WHERE l.value IS NOT NULL")}

    def scheme_unit_keys(self, scheme: str, units: Collection[str] | None = None) -> set[tuple[str, str]]:
        """(sample, unit) of a scheme's units (only those named `units` when given)."""
        rows = self.conn.execute("SELECT sample_id, unit FROM units WHERE scheme = ?", (scheme,))
        return {(s, u) for s, u in rows if units is None or u in units}

    @contextmanager
    def every_label(self) -> Iterator[None]:
        """Within the block, label reads see every label again (agreement per guideline version reads each label
        under its own version)."""
        before = self.excluded_labels
        self.excluded_labels = frozenset()
        try:
            yield
        finally:
            self.excluded_labels = before

    @contextmanager
    def excluding_labels(self, keys: Collection[tuple[str, str, str]]) -> Iterator[None]:
        """Within the block, label reads (`scheme_labels`, `annotator_label_rows`, `label_rows`) leave out the labels
        of these (sample, unit, annotator) keys: labels not valid under the guideline version a command was asked
        for."""
        before = self.excluded_labels
        self.excluded_labels = frozenset(keys) | before
        try:
            yield
        finally:
            self.excluded_labels = before
