"""`DecisionsPart.record_many` (the labels import's batch path) stores the rows one `record` per command stores:
the same events (ids, before/after, origin, guideline version, grouping into commands) and the same labels (values,
event ids, adjudicated and resolved flags, row order), on random command sequences over existing labels."""
from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from app.io.imports import import_file
from app.io.labels import import_labels
from app.store import Change, Project, decision_batches
from tests.jsonl_files import write_jsonl

DEMO = Path(__file__).resolve().parents[1] / "resources" / "demo" / "rgb.jsonl"
VALUES = {"status": ["accepted", "corrected", "skipped", None], "note": ["ok", "odd", "", None],
          "correct": [True, False, None, 1], "rejected": [True, False, None]}


def _project(path: Path, versioned: bool) -> Project:
    p = Project.create(path)
    import_file(p, DEMO)
    if versioned:
        p.guidelines.add_guideline_version("rgb", {"preamble": "Judge the answer.\n"})
    return p


def _commands(rng: random.Random, samples: list[str], n: int) -> list[tuple[str, str, list[Change]]]:
    """(annotator, origin, changes): a few annotators (one adjudicating, or not) over few targets, so they collide."""
    out = []
    for _ in range(n):
        who = rng.choice(["ana", "ben", "cy", "dee"])
        origin = rng.choice(["adjudication", "app"]) if who == "dee" else rng.choice(["import", "app"])
        sid = rng.choice(samples)
        unit = rng.choice(["", "m1", "m2"])
        kinds = rng.sample(sorted(VALUES), rng.randint(1, 3))
        out.append((who, origin, [Change(sid, unit, k, rng.choice(VALUES[k])) for k in kinds]))
    return out


def _state(p: Project) -> dict[str, Any]:
    """Every stored row but clock and random values (ts, command ids, uids), commands as groups of event ids."""
    events = p.conn.execute("SELECT id, annotator, sample_id, unit, kind, before, after, origin, guideline_version, "
                            "machine_visible FROM events ORDER BY id").fetchall()
    groups = sorted(tuple(r[0] for r in p.conn.execute(
        "SELECT id FROM events WHERE command = ? ORDER BY id", (c,))) for (c,) in p.conn.execute(
        "SELECT DISTINCT command FROM events"))
    labels = p.conn.execute("SELECT rowid, sample_id, unit, kind, annotator, value, event_id, adjudicated, resolved "
                            "FROM labels ORDER BY rowid").fetchall()
    annotators = [r[0] for r in p.conn.execute("SELECT name FROM annotators ORDER BY rowid")]
    seq = p.conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'events'").fetchone()
    return {"events": events, "groups": groups, "labels": labels, "annotators": annotators, "seq": seq}


@pytest.mark.parametrize("seed", range(6))
def test_record_many_stores_what_record_stores(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(decision_batches, "CHUNK", 7)  # commands of one batch spread over several chunks
    rng = random.Random(seed)
    versioned, newest = seed % 2 == 1, seed % 3 == 2
    one, many = _project(tmp_path / "one.concord", versioned), _project(tmp_path / "many.concord", versioned)
    samples = [r[0] for r in one.conn.execute("SELECT id FROM samples ORDER BY rowid")][:4]
    for p in (one, many):
        if newest:
            p.decisions.set_resolution_policy("newest")
        for who, origin, changes in _commands(random.Random(seed + 100), samples, 40):  # labels already there
            p.decisions.record(who, changes, origin=origin)
        if versioned:  # labels given under version 1 are confirmed by repeating them under version 2
            p.guidelines.add_guideline_version("rgb", {"preamble": "Judge the answer, and its reasons.\n"})
    assert _state(one) == _state(many)
    batches = _commands(rng, samples, 120)
    by_origin: dict[str, list[tuple[str, list[Change]]]] = {}
    for who, origin, changes in batches:
        by_origin.setdefault(origin, []).append((who, changes))
    for origin, commands in by_origin.items():
        want = [one.decisions.record(who, changes, origin=origin, machine_visible=origin == "app")
                for who, changes in commands]
        got = many.decisions.record_many(commands, origin=origin, machine_visible=origin == "app")
        assert got == want
    assert _state(one) == _state(many)
    assert len(_state(many)["events"]) > 40  # the commands wrote, not only skipped
    one.close()
    many.close()


def test_labels_import_twice_records_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A re-imported file is skipped line by line across chunks; a line changed since is recorded."""
    monkeypatch.setattr(decision_batches, "CHUNK", 5)
    p = _project(tmp_path / "p.concord", False)
    samples = [r[0] for r in p.conn.execute("SELECT id, payload FROM samples ORDER BY rowid")]
    units = {sid: [u["unit"] for u in p.units.units_for_sample(sid) if u["unit"]] for sid in samples}
    lines = [{"scheme": "rgb", "sample": sid, "unit": unit, "annotator": who, "correct": (i + j) % 2 == 0}
             for i, sid in enumerate(samples) for j, unit in enumerate(units[sid]) for who in ("ana", "ben", "cy")]
    first = import_labels(p, write_jsonl(tmp_path / "a.jsonl", lines))
    assert (first.applied, first.unchanged, first.events) == (len(lines), 0, len(lines))
    again = import_labels(p, write_jsonl(tmp_path / "a.jsonl", lines))
    assert (again.applied, again.unchanged, again.events) == (0, len(lines), 0)
    lines[3]["correct"] = not lines[3]["correct"]
    changed = import_labels(p, write_jsonl(tmp_path / "b.jsonl", lines))
    assert (changed.applied, changed.unchanged, changed.events) == (1, len(lines) - 1, 1)
    assert p.decisions.annotator_labels(lines[3]["sample"], lines[3]["unit"], "correct")[lines[3]["annotator"]] == lines[3]["correct"]
    p.close()
