"""The compact label reads (app/store/label_reads.py) give what the per-row reads they replaced gave, key order
included, on generated rows; and the store's reads through them equal a plain per-row read of the labels table."""
from __future__ import annotations

import json
import random
from typing import Any

from app.store.label_reads import read_labels, read_labels_by_annotator
from app.store.samples import loads

TEXTS = ['"pass"', '"fail"', "true", "false", "null", "1", "2.5", '["a", "b"]', '{"x": [1, 2], "y": null}', "[]",
         '{"big": 123456789012345678901234567890}', '"\\ud800"', '{"n": NaN}']


def _rows(rng: random.Random, n: int) -> list[tuple[str, str, str, str, str]]:
    """Rows ordered as the store's query orders them: sample, unit, then event (kinds may repeat within a unit)."""
    rows = []
    for s in range(n):
        for unit in sorted(rng.sample(["", "u1", "u2", "u10"], rng.randint(1, 3))):
            for _ in range(rng.randint(1, 5)):
                rows.append((f"s{s:04d}", unit, rng.choice(["label", "marks", "status"]), rng.choice(TEXTS),
                             rng.choice(["ann", "bob", "cy"])))
    return rows


def _old_read(rows, excluded) -> dict[tuple[str, str], dict[str, Any]]:
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for sid, unit, kind, value, who in rows:
        if excluded and (sid, unit, who) in excluded:
            continue
        out.setdefault((sid, unit), {})[kind] = json.loads(value)
    return out


def _old_by_annotator(rows, excluded) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    out: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for sid, unit, kind, value, who in rows:
        if excluded and (sid, unit, who) in excluded:
            continue
        out.setdefault(who, {}).setdefault((sid, unit), {})[kind] = json.loads(value)
    return out


def _ordered(x: Any) -> str:
    """repr keeps dict key order and float/int types: equal reprs, equal reads (NaN included)."""
    return repr(x)


def test_read_labels_equals_the_per_row_read() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        rows = _rows(rng, 60)
        excluded = {(r[0], r[1], r[4]) for r in rng.sample(rows, 10)} if seed % 2 else set()
        assert _ordered(read_labels(rows, excluded, loads)) == _ordered(_old_read(rows, excluded))
        assert _ordered(read_labels_by_annotator(rows, excluded, loads)) == _ordered(_old_by_annotator(rows, excluded))


def test_equal_units_share_one_dict_and_values_one_object() -> None:
    rows = [(f"s{i}", "", "label", '{"x": [1, 2], "y": null}', "ann") for i in range(5)]
    rows += [("t", "", "label", '{"x": [1, 2], "y": null}', "ann"), ("t", "", "status", '"ok"', "ann")]
    got = read_labels(rows, set(), loads)
    assert len({id(v) for k, v in got.items() if k[0] != "t"}) == 1
    assert got[("t", "")]["label"] is got[("s0", "")]["label"]
    assert got[("t", "")] == {"label": {"x": [1, 2], "y": None}, "status": "ok"}
    two = read_labels([("s", "checker@1", "k", "1", "a"), ("s", "checker@2", "k", "1", "a"),
                       ("t", "checker@1", "k", "1", "a")], set(), loads)
    (s1, u1), (s2, _), (_, u3) = two
    assert s1 is s2 and u1 is u3  # a sample's id and equal unit names: one str each


def test_empty_rows_read_empty() -> None:
    assert read_labels([], set(), loads) == {} and read_labels_by_annotator([], set(), loads) == {}


def test_store_reads_equal_a_per_row_read_of_the_table(tmp_path) -> None:
    """scheme_labels and labels_by_annotator of a project with labels written through the store."""
    from app.store.assembled import Project

    p = Project(tmp_path / "p.concord", create=True)
    rng = random.Random(7)
    rows = _rows(rng, 40)
    with p.conn:
        p.conn.executemany("INSERT INTO samples (id, scheme, text, content_hash) VALUES (?, 'judge', '', '')",
                           [(s,) for s in sorted({r[0] for r in rows})])
        p.conn.executemany("INSERT OR REPLACE INTO labels (sample_id, unit, kind, annotator, value, event_id, ts, "
                           "resolved) VALUES (?, ?, ?, ?, ?, ?, '', ?)",
                           [(*r[:3], r[4], r[3], i // 4, int(r[4] == "ann")) for i, r in enumerate(rows)])
    # one event sets several kinds (event ids tie): those come by kind, then annotator
    table = p.conn.execute("SELECT sample_id, unit, kind, value, annotator, resolved FROM labels "
                           "ORDER BY sample_id, unit, event_id, kind, annotator").fetchall()
    assert len(table) > 100
    assert _ordered(p.scheme_data.scheme_labels("judge")) == _ordered(_old_read([r[:5] for r in table if r[5]], set()))
    assert _ordered(p.scheme_data.labels_by_annotator("judge")) == _ordered(_old_by_annotator([r[:5] for r in table],
                                                                                               set()))
