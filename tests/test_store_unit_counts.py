"""count_units reads the cheapest way (kept row counts, only the joins a filter needs), and always equals the rows
unit_page lists over every page for the same filter."""
from __future__ import annotations

import itertools
from pathlib import Path

from app.store import Change, Project, UnitFilter
from tests.gui_data import C1, make_project


def test_count_units_equals_the_listed_rows_for_every_filter(tmp_path: Path) -> None:
    p = Project.open(make_project(tmp_path / "p.concord"))
    units = [(r["sample_id"], r["unit"]) for r in p.unit_page(UnitFilter(), 0, 1000)]
    assert len({p.unit(r["id"])["scheme"] for r in p.unit_page(UnitFilter(), 0, 1000)}) == 2  # two schemes
    for i, (sid, unit) in enumerate(units):  # resolved and per-annotator statuses that differ
        if i % 3 != 2:
            p.record("alice", [Change(sid, unit, "status", ("accepted", "flagged")[i % 2])])
        if i % 2:
            p.record("bob", [Change(sid, unit, "status", "corrected")])
    p.assign_work(["bob", "carol"], overlap=1)
    checked = 0
    for statuses, scheme, which, annotator, assigned, search, category in itertools.product(
            [(), ("unlabeled",), ("accepted",), ("accepted", "unlabeled"), ("flagged", "corrected")],
            [None, "violations", "rubric"], [(), (C1,)], [None, "bob"], [None, "bob"], ["", "aspirin"],
            [None, "medical"]):
        f = UnitFilter(statuses=statuses, scheme=scheme, units=which, annotator=annotator, assigned_to=assigned,
                       search=search, category=category)
        assert p.count_units(f) == len(p.unit_page(f, 0, 10_000)), f
        checked += p.count_units(f) > 0
    assert checked > 100  # most filters match something: the comparison is not between empty lists
