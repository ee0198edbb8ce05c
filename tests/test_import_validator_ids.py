"""The validator keeps where each id was first used as line numbers, not a Location per id (issue #28): parts of a
file validated apart and merged, their states pickled as they cross from a worker, report exactly the problems the
merge of Location objects reported, and place every id at the same line."""
from __future__ import annotations

import pickle
import random

import pytest

from app.io.problems import Location, Problems
from app.io.records import RecordValidator

TEXT = "Buy now, only 3 left!"


def record(sid: str) -> dict[str, object]:
    return {"id": sid, "text": TEXT, "ground_truth": [], "predictions": {}}


def problems_of(p: Problems) -> list[tuple[str, str, str]]:
    return [(str(e.location), e.field, e.message) for e in p.errors]


@pytest.mark.parametrize("seed", range(6))
def test_parts_merged_report_what_the_merge_of_locations_reported(seed: int) -> None:
    rng = random.Random(seed)
    n = 300
    ids = [f"s{rng.randrange(n)}" for _ in range(n)]  # about a third of them used again, in any part
    known = {i: f"s{rng.randrange(n)}" for i in rng.sample(range(1, n + 1), 40)}  # lines the project holds verbatim
    path = "data.jsonl"

    # the reference: the merge as it was written with a Location per id (each part's ids, then merged in order)
    expected: list[tuple[str, str, str]] = []
    first_at: dict[str, Location] = {}
    cuts = sorted(rng.sample(range(1, n), 7))
    parts = list(zip([0, *cuts], [*cuts, n]))
    for a, b in parts:
        mine: dict[str, Location] = {}
        for number in range(a + 1, b + 1):
            sid, loc = known.get(number, ids[number - 1]), Location(path, number)
            if sid in mine:
                expected.append((str(loc), "id", f"duplicate id {sid!r} (first used at {mine[sid]})"))
            else:
                mine[sid] = loc
        for sid, loc in mine.items():
            if sid in first_at:
                expected.append((str(loc), "id", f"duplicate id {sid!r} (first used at {first_at[sid]})"))
            else:
                first_at[sid] = loc

    merged_problems = Problems()
    merged = RecordValidator(merged_problems)
    for a, b in parts:
        part_problems = Problems()
        part = RecordValidator(part_problems, file=path)
        for number in range(a + 1, b + 1):
            if number in known:
                part.add_unchanged(number, known[number])
            else:
                part.add(Location(path, number), record(ids[number - 1]))
        state = pickle.loads(pickle.dumps(part.state()))  # as a worker's answer crosses the pipe
        merged_problems.errors.extend(part_problems.errors)
        merged.absorb(state)

    assert problems_of(merged_problems) == expected
    assert len(expected) > 50
    for sid, loc in first_at.items():
        assert merged.location_of(sid) == loc
    assert merged.state().home == (path, "line") and all(type(n) is int for n in merged.state().ids.values())


def test_ids_of_another_file_or_unit_keep_their_location() -> None:
    """A validator fed records of two files (or rows, not lines) places each id in its own file."""
    p = Problems()
    v = RecordValidator(p)
    v.add(Location("a.jsonl", 3), record("x"))
    v.add(Location("b.csv", 5, "row"), record("y"))
    v.add(Location("a.jsonl", None), record("z"))
    other = RecordValidator(Problems(), file="c.jsonl")
    other.add_unchanged(9, "w")
    other.add_unchanged(10, "x")
    v.absorb(pickle.loads(pickle.dumps(other.state())))
    assert [str(v.location_of(s)) for s in "xyzw"] == ["a.jsonl:3", "b.csv:row 5", "a.jsonl", "c.jsonl:9"]
    assert [str(e) for e in p.errors] == [
        "c.jsonl:10: id: duplicate id 'x' (first used at a.jsonl:3)"]
    assert v.state().ids == {"x": 3, "y": Location("b.csv", 5, "row"), "z": Location("a.jsonl", None), "w": Location("c.jsonl", 9)}
