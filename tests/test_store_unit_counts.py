"""count_units reads the cheapest way (kept row counts, only the joins a filter needs), and always equals the rows
unit_page lists over every page for the same filter."""
from __future__ import annotations

import itertools
from pathlib import Path

from app.store import Change, Project, UnitFilter
from tests.gui_data import C1, make_project


def test_count_units_equals_the_listed_rows_for_every_filter(tmp_path: Path) -> None:
    p = Project.open(make_project(tmp_path / "p.concord"))
    units = [(r["sample_id"], r["unit"]) for r in p.units.unit_page(UnitFilter(), 0, 1000)]
    assert len({p.units.unit(r["id"])["scheme"] for r in p.units.unit_page(UnitFilter(), 0, 1000)}) == 2  # two schemes
    for i, (sid, unit) in enumerate(units):  # resolved and per-annotator statuses that differ
        if i % 3 != 2:
            p.decisions.record("alice", [Change(sid, unit, "status", ("accepted", "flagged")[i % 2])])
        if i % 2:
            p.decisions.record("bob", [Change(sid, unit, "status", "corrected")])
        if i % 4 == 1:  # bob's status set, then cleared: his label row without a value counts as unlabeled
            p.decisions.record("bob", [Change(sid, unit, "status", None)])
    p.assignments.assign_work(["bob", "carol"], overlap=1)
    checked = 0
    for statuses, scheme, which, annotator, assigned, search, category in itertools.product(
            [(), ("unlabeled",), ("accepted",), ("accepted", "unlabeled"), ("flagged", "corrected")],
            [None, "violations", "rubric"], [(), (C1,)], [None, "bob"], [None, "bob"], ["", "aspirin"],
            [None, "medical"]):
        f = UnitFilter(statuses=statuses, scheme=scheme, units=which, annotator=annotator, assigned_to=assigned,
                       search=search, category=category)
        listed = p.units.unit_page(f, 0, 10_000)
        assert p.units.count_units(f) == len(listed), f
        # a caller that knows the count may let a sparse text search read the samples once: the same rows
        assert p.units.unit_page(f, 0, 10_000, matching=len(listed)) == listed, f
        checked += p.units.count_units(f) > 0
    assert checked > 100  # most filters match something: the comparison is not between empty lists


def test_keyset_pages_equal_offset_pages(tmp_path: Path) -> None:
    """A page read after the last id seen is the page OFFSET reads, for every filter a list uses, in list order."""
    p = Project.open(make_project(tmp_path / "p.concord"))
    for i, r in enumerate(p.units.unit_page(UnitFilter(), 0, 1000)):
        if i % 3 == 1 or i == 2:
            p.decisions.record("alice", [Change(r["sample_id"], r["unit"], "status", "skipped" if i == 2 else "accepted")])
    for f in (UnitFilter(), UnitFilter(statuses=("unlabeled",)), UnitFilter(statuses=("accepted",)),
              UnitFilter(scheme="rubric"), UnitFilter(search="aspirin")):
        every = p.units.unit_page(f, 0, 10_000)
        assert len(every) > 1, f  # more than one page of one
        pages, after = [], None
        while True:
            page = p.units.unit_page(f, 12345, 1, after=after)  # the offset is ignored once `after` is given
            if after is None:
                page = p.units.unit_page(f, 0, 1)
            if not page:
                break
            pages += page
            after = page[-1]["id"]
        assert pages == every, f


def test_a_search_sees_samples_written_after_it(tmp_path: Path) -> None:
    """The sample ids a search found are kept for the next page only while the project is unchanged."""
    from calibration.schemes.violations.records import ViolationSample

    p = Project.open(make_project(tmp_path / "p.concord"))
    f = UnitFilter(search="a phrase no sample has yet")
    assert p.units.count_units(f) == 0 and p.units.unit_page(f, matching=0) == []
    p.store("violations").write_violation_samples([ViolationSample("late", "now a phrase no sample has yet", (), {C1: ()})])
    assert p.units.count_units(f) == 1 and [r["sample_id"] for r in p.units.unit_page(f, matching=1)] == ["late"]
    with Project.open(tmp_path / "p.concord") as other:  # another connection's write is seen too
        other.store("violations").write_violation_samples([ViolationSample("later", "A PHRASE NO SAMPLE HAS YET", (), {C1: ()})])
    assert p.units.count_units(f) == 2 and [r["sample_id"] for r in p.units.unit_page(f, matching=2)] == ["late", "later"]
