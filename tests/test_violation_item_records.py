"""The violations store's `item_records` (what agreement and the human ceiling read of each sample: its ground truth
and each checker's number of violations) read in the violations index's order (issue #28 item 5: no seek per sample
at random into a 0.5 GB index at 1M samples) gives the records the per-sample query gave: the same counts for every
sample in the same order, samples without violations and curated ground truths included, equal ones one object."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson

from app.schemes.violations.store import GROUND_TRUTH, SCHEME, SpanCounts, item_records, store_of
from app.store import Change, Project
from tests.test_agreement_codes import _project


def _reference(project: Any) -> dict[str, Any]:
    """The records as the per-sample correlated query made them (the code before the change)."""
    curated = {sid: len(value) for sid, value in store_of(project).curated_ground_truth().items()}
    shared: dict[tuple[str, int | None], Any] = {}
    out: dict[str, Any] = {}
    for sid, counted in project.conn.execute(
            "SELECT s.id, (SELECT json_group_array(json_array(checker, n)) FROM (SELECT checker, COUNT(*) AS n "
            "FROM violations v WHERE v.sample_id = s.id GROUP BY checker ORDER BY checker)) "
            "FROM samples s WHERE s.scheme = ? ORDER BY s.rowid", (SCHEME,)):
        key = (counted, curated.get(sid))
        if key not in shared:
            by_checker = dict(orjson.loads(counted))
            if key[1] is not None:
                by_checker[GROUND_TRUTH] = key[1]
            shared[key] = SpanCounts(range(by_checker.get(GROUND_TRUTH, 0)),
                                     {c: range(n) for c, n in by_checker.items() if c != GROUND_TRUTH})
        out[sid] = shared[key]
    return out


def test_item_records_match_the_per_sample_query(tmp_path: Path) -> None:
    rng = random.Random(11)
    with Project.open(_project(tmp_path, ("violations",), 4)) as p:
        ids = [r[0] for r in p.conn.execute("SELECT id FROM samples ORDER BY rowid")]
        for sid in rng.sample(ids, 6):  # curated ground truths of a few samples (their length replaces the counted)
            spans = [{"start": a, "end": a + 2, "rule": "r"} for a in range(0, 2 * rng.randint(0, 3), 2)]
            p.decisions.record("ana", [Change(sid, "", "ground_truth", spans)])
        want = _reference(p)
        got = item_records(p)
    assert list(got) == list(want) == ids
    assert [repr(r.sample) for r in got.values()] == [repr(r) for r in want.values()]  # checkers in the same order
    empty = [sid for sid, r in want.items() if not r.predictions]
    assert empty and any(r.predictions for r in want.values())  # samples with and without violations
    assert any(len(r.ground_truth) for r in want.values())
    # equal counts share one record, as before (the records' identities partition the samples the same way)
    assert len({id(r) for r in got.values()}) == len({(tuple(r.ground_truth), tuple((c, tuple(x)) for c, x in
                                                       r.predictions.items())) for r in want.values()})
