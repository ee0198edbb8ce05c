"""app/store/label_codes.py: the labels agreement reads, each column numbered once per chunk (issue #28 item 5), are
`DecisionsPart.label_column_chunks`' rows and chunks (the same labels in the same order, cut between the same
samples), in one-scheme projects read without the scheme's list of samples; a label naming no sample (a file edited
outside Concord) is caught and the read done again with the list, so `concord agreement` gives the figures it gave."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

import app.services.agreement_codes as codes
from app.services.agreement import NOT_ITEMS, agreement
from app.store import Project
from app.store.label_codes import UnknownSamples, label_code_chunks
from tests.test_agreement_codes import _project
from tests.test_agreement_columns import _reference


def _columns(chunk: Any) -> list[list[Any]]:
    return [names[c].tolist() for c, names in (chunk.sample, chunk.unit, chunk.kind, chunk.annotator, chunk.value)]


@pytest.mark.parametrize("schemes", [("violations",), ("rubric", "trace")])
@pytest.mark.parametrize("size", [5, 1000])
def test_coded_chunks_are_the_column_chunks(tmp_path: Path, schemes: tuple[str, ...], size: int) -> None:
    with Project.open(_project(tmp_path, schemes, size)) as p:
        names = sorted(p.counts.sample_counts())
        skip = sorted(NOT_ITEMS)
        rows = p.decisions.annotator_label_rows()
        left_out = {(sid, unit, a) for _sc, sid, unit, _k, a, _v in random.Random(size).sample(rows, len(rows) // 4)}
        for exclusions in (False, True):
            if exclusions:
                p.guidelines.excluded_labels = frozenset(left_out)
            want = list(p.decisions.label_column_chunks(names, skip=skip, size=size))
            for listed in (False, True):
                got = list(label_code_chunks(p, names, skip=skip, size=size, listed=listed))
                assert len(got) == len(want) > (3 if size == 5 else 0)
                for g, w in zip(got, want):
                    assert g.scheme == w[0][0] and _columns(g) == [list(c) for c in w[1:]]
                    for c, distinct in (g.sample, g.unit, g.kind, g.annotator, g.value):  # codes by first appearance
                        assert list(dict.fromkeys(c.tolist())) == list(range(len(distinct)))


def test_a_label_of_no_sample_is_read_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes, "CHUNK", 7)
    with Project.open(_project(tmp_path, ("violations",), 3)) as p:
        sid, unit, kind, annotator, value = p.conn.execute(
            "SELECT sample_id, unit, kind, annotator, value FROM labels WHERE kind = 'matches' LIMIT 1").fetchone()
        with p.conn:  # a file edited by hand: the label of a sample the project does not hold
            p.conn.execute("INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts) "
                           "VALUES (?, ?, ?, ?, ?, 0, '2026-01-01T00:00:00')", ("zz-gone", unit, kind, annotator, value))
        names = sorted(p.counts.sample_counts())
        with pytest.raises(UnknownSamples):
            list(label_code_chunks(p, names, skip=sorted(NOT_ITEMS), size=7))
        got = agreement(p, n_boot=50, seed=1)
        with monkeypatch.context() as m:
            m.setattr(codes, "column_tables", _reference)
            want = agreement(p, n_boot=50, seed=1)
    assert got["schemes"] and repr(got) == repr(want)
