"""Who labels which unit (issue #15): work spread over annotators with a chosen overlap, and blind mode.

`assign_work` gives every unit `overlap` annotators, stratum by stratum (scheme x checker/trait/judge), so each
annotator sees a share of every checker and the overlap units needed for agreement exist in every stratum. Inside
a stratum the units are shuffled with the seed and each goes to the annotators with the fewest units so far (in the
stratum, then overall; remaining ties in a seeded order), so loads differ by at most one per stratum.
`assign_adaptive` (issue #29, adaptive overlap) writes what app/services/overlap.py decided: a first annotator
for units nobody has, one more for the uncertain ones, each with the signals the choice rested on (`stratum`, schema
v8), which `adaptive_strata` gives back to the post-stratified agreement (app/services/overlap.py).
Blind mode (meta `blind`, on by default once work is assigned): the app shows an annotator only their own labels
and queue; the store only keeps the flag.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from app.names import annotator_name
from app.store.parts import ProjectPart
from app.store.project import now


class AssignmentsPart(ProjectPart):
    """`project.assignments`: who labels which unit, and blind mode."""

    def assign_work(self, annotators: Sequence[str], overlap: int, *, seed: int = 0, replace: bool = False,
                    schemes: Sequence[str] | None = None) -> dict[str, Any]:
        """Assign the units that have no annotator yet (all units with `replace`); returns counts per annotator."""
        names = list(dict.fromkeys(annotator_name(a, "annotators") for a in annotators))
        if not names:
            raise ValueError("annotators: at least one name is required")
        if not 1 <= overlap <= len(names):
            raise ValueError(f"overlap: must be between 1 and the number of annotators ({len(names)}), got {overlap}")
        rng = random.Random(seed)
        with self.transaction() as c:
            if replace:
                c.execute("DELETE FROM assignments")
            out = _spread(c, names, overlap, rng, schemes)
        return out

    def assign_adaptive(self, annotators: Sequence[str], more: Sequence[tuple[str, str]], *, seed: int = 0,
                        schemes: Sequence[str] | None = None,
                        signals: Mapping[tuple[str, str], Mapping[str, Any]] | None = None) -> dict[str, Any]:
        """Adaptive overlap's writes, in one transaction: one annotator for every unit that has neither an annotator
        nor a human label yet (as `assign_work` with overlap 1), and one more for each unit of `more` (sample_id,
        unit): of `annotators`, one neither assigned to it nor with a label on it, the least loaded (ties in a
        seeded order), stored with `signals[(sample_id, unit)]` (as JSON) when given. Returns the first
        pass's counts plus `more` (units given another annotator) and `no_annotator_left` (units of `more` every
        named annotator already has)."""
        names = list(dict.fromkeys(annotator_name(a, "annotators") for a in annotators))
        if not names:
            raise ValueError("annotators: at least one name is required")
        rng = random.Random(seed)
        with self.transaction() as c:
            out = _spread(c, names, 1, rng, schemes, skip_labeled=True)
            total: Counter[str] = Counter({a: 0 for a in names})
            for a, n in c.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator"):
                if a in total:
                    total[a] = n
            taken: dict[tuple[str, str], set[str]] = {}
            for sid, unit, a in c.execute("SELECT sample_id, unit, annotator FROM assignments"):
                taken.setdefault((sid, unit), set()).add(a)
            for sid, unit, a in c.execute("SELECT DISTINCT sample_id, unit, annotator FROM events"):
                taken.setdefault((sid, unit), set()).add(a)
            rows, left, ts = [], 0, now()
            for sid, unit in more:
                free = [a for a in names if a not in taken.get((sid, unit), set())]
                if not free:
                    left += 1
                    continue
                rng.shuffle(free)
                chosen = min(free, key=lambda a: total[a])
                total[chosen] += 1
                taken.setdefault((sid, unit), set()).add(chosen)
                signal = (signals or {}).get((sid, unit))
                rows.append((sid, unit, chosen, ts,
                             None if signal is None else json.dumps(signal, sort_keys=True, default=repr)))
            c.executemany("INSERT INTO assignments (sample_id, unit, annotator, created_at, stratum) "
                          "VALUES (?, ?, ?, ?, ?)", rows)
            if rows and c.execute("SELECT value FROM meta WHERE key = 'blind'").fetchone() is None:
                c.execute("INSERT INTO meta VALUES ('blind', '1')")
        for _, _, a, *_ in rows:
            out["per_annotator"][a] = out["per_annotator"].get(a, 0) + 1
        out.update(assignments=out["assignments"] + len(rows), more=len(rows), no_annotator_left=left)
        return out

    def assignment_rows(self) -> list[tuple[str, str, str, str]]:
        """(sample_id, unit, annotator, scheme) of every assignment."""
        return [(s, u, a, sc or "") for s, u, a, sc in self.conn.execute(
            "SELECT a.sample_id, a.unit, a.annotator, u.scheme FROM assignments a "
            "LEFT JOIN units u ON u.sample_id = a.sample_id AND u.unit = a.unit")]

    def adaptive_strata(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        """(sample_id, unit, annotator) -> the unit's signals when adaptive overlap added that annotator (only the
        assignments that recorded them: schema v8 and later)."""
        return {(s, u, a): json.loads(v) for s, u, a, v in self.conn.execute(
            "SELECT sample_id, unit, annotator, stratum FROM assignments WHERE stratum IS NOT NULL")}

    def assigned_units(self, annotator: str) -> list[tuple[str, str]]:
        """The annotator's queue: (sample_id, unit) in the unit list's order (empty when nothing is assigned)."""
        return [(s, u) for s, u in self.conn.execute(
            "SELECT a.sample_id, a.unit FROM assignments a JOIN units u ON u.sample_id = a.sample_id AND u.unit = a.unit "
            "WHERE a.annotator = ? ORDER BY u.id", (annotator,))]

    def annotator_statuses(self, annotator: str) -> dict[tuple[str, str], str]:
        """(sample_id, unit) -> this annotator's own status: what the unit list shows in blind mode."""
        return {(s, u): json.loads(v) for s, u, v in self.conn.execute(
            "SELECT sample_id, unit, value FROM labels WHERE kind = 'status' AND annotator = ? AND value IS NOT NULL",
            (annotator,))}

    def queue_progress(self, annotator: str) -> tuple[int, int]:
        """(units of the annotator's queue they have decided (accepted/corrected), units in the queue)."""
        row = self.conn.execute(
            "SELECT COUNT(*), COUNT(l.value) FROM assignments a LEFT JOIN labels l ON l.sample_id = a.sample_id "
            "AND l.unit = a.unit AND l.kind = 'status' AND l.annotator = a.annotator "
            "AND l.value IN ('\"accepted\"', '\"corrected\"') WHERE a.annotator = ?", (annotator,)).fetchone()
        return int(row[1]), int(row[0])

    def unit_annotators(self, sample_id: str, unit: str) -> list[str]:
        """Who is assigned a unit (sorted)."""
        return [r[0] for r in self.conn.execute(
            "SELECT annotator FROM assignments WHERE sample_id = ? AND unit = ? ORDER BY annotator", (sample_id, unit))]

    def assignment_counts(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator ORDER BY annotator"))

    def has_assignments(self) -> bool:
        return self.scalar("SELECT 1 FROM assignments LIMIT 1") is not None

    def blind(self) -> bool:
        """Blind mode: meta `blind` when set ('1'/'0'), else on exactly when work has been assigned."""
        value = self.project.get_meta("blind")
        return self.has_assignments() if value is None else value == "1"

    def set_blind(self, on: bool) -> None:
        self.project.set_meta("blind", "1" if on else "0")


def _spread(c: Any, names: list[str], overlap: int, rng: random.Random, schemes: Sequence[str] | None,
            skip_labeled: bool = False) -> dict[str, Any]:
    """Give every unit without an annotator (and, with `skip_labeled`, without any human event) `overlap` of
    `names`, stratum by stratum (module docstring), inside the caller's transaction `c`; returns the counts."""
    where, params = "", ()
    if schemes:
        where, params = f" WHERE scheme IN ({','.join('?' * len(schemes))})", tuple(schemes)
    taken = {(s, u) for s, u in c.execute("SELECT DISTINCT sample_id, unit FROM assignments")}
    if skip_labeled:
        taken |= {(s, u) for s, u in c.execute("SELECT DISTINCT sample_id, unit FROM events")}
    strata: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for sid, scheme, unit in c.execute(f"SELECT sample_id, scheme, unit FROM units{where} ORDER BY id", params):
        if (sid, unit) not in taken:
            strata.setdefault((scheme, unit), []).append((sid, unit))
    total: Counter[str] = Counter({a: 0 for a in names})
    for a, n in c.execute("SELECT annotator, COUNT(*) FROM assignments GROUP BY annotator"):
        if a in total:
            total[a] = n
    rows: list[tuple[str, str, str, str]] = []
    ts = now()
    for key in sorted(strata):
        units = strata[key]
        rng.shuffle(units)
        local: Counter[str] = Counter({a: 0 for a in names})
        for sid, unit in units:
            order = names[:]
            rng.shuffle(order)
            chosen = sorted(order, key=lambda a: (local[a], total[a]))[:overlap]
            for a in chosen:
                local[a] += 1
                total[a] += 1
                rows.append((sid, unit, a, ts))
    c.executemany("INSERT OR IGNORE INTO annotators VALUES (?, ?)", [(a, ts) for a in names])
    c.executemany("INSERT INTO assignments (sample_id, unit, annotator, created_at) VALUES (?, ?, ?, ?)", rows)
    if rows and c.execute("SELECT value FROM meta WHERE key = 'blind'").fetchone() is None:
        c.execute("INSERT INTO meta VALUES ('blind', '1')")
    units_new = len({(r[0], r[1]) for r in rows})
    return {"units": units_new, "assignments": len(rows), "strata": len(strata),
            "per_annotator": {a: int(n) for a, n in Counter(r[2] for r in rows).items()}}
