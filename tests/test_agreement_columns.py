"""`concord agreement` from label columns read in chunks (app.services.agreement_codes.column_tables, issue #28 items
1 and 5) gives every figure and interval end, and the annotators' table, that the per-unit dicts of `collect_labels`
and `coded_tables` gave (kept below as the reference): on generated projects of each scheme and of several together,
with chunks of a few labels (so samples meet chunk ends), a selection of samples, a work log and labels left out
by a guideline version."""
from __future__ import annotations

import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

import app.services.agreement_codes as codes
from app.services.agreement import agreement, collect_labels
from app.services.agreement_codes import ColumnTables, coded_tables
from app.store import Project
from tests.test_agreement_codes import _project


def _reference(project: Any, schemes: Any = None, samples: Any = None, **_: Any) -> ColumnTables:
    """The tables and counts as `agreement` had them before: every label in a dict per (sample, unit, annotator)."""
    scope = collect_labels(project, schemes, samples)
    items, spans = coded_tables(scope)
    n_labels: dict[str, int] = defaultdict(int)
    units: dict[str, set] = defaultdict(set)
    for data in scope.values():
        for (sid, unit, annotator), kinds in data["labels"].items():
            n_labels[annotator] += len(kinds)
            units[annotator].add((sid, unit))
    worked = {(a, s, u) for a, us in units.items() for s, u in us}
    return ColumnTables(items, spans, dict(n_labels), {a: len(u) for a, u in units.items()}, worked)


def _both(monkeypatch: pytest.MonkeyPatch, project: Any, **kw: Any) -> tuple[Any, Any]:
    got = agreement(project, n_boot=100, seed=3, **kw)
    with monkeypatch.context() as m:
        m.setattr(codes, "column_tables", _reference)
        want = agreement(project, n_boot=100, seed=3, **kw)
    return got, want


@pytest.mark.parametrize("schemes", [("violations",), ("rubric",), ("trace",), ("rgb",), ("addm",), ("judge",),
                                     ("violations", "trace", "rgb"), ("rubric", "addm", "judge")])
@pytest.mark.parametrize("chunk", [7, 100_000])
def test_columns_give_the_per_unit_figures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           schemes: tuple[str, ...], chunk: int) -> None:
    monkeypatch.setattr(codes, "CHUNK", chunk)
    with Project.open(_project(tmp_path, schemes, len(schemes) + chunk)) as p:
        got, want = _both(monkeypatch, p)
        assert got["schemes"] and repr(got) == repr(want)


def test_selection_work_log_and_guideline_exclusions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codes, "CHUNK", 5)
    with Project.open(_project(tmp_path, ("violations", "trace"), 11)) as p:
        rows = p.decisions.annotator_label_rows()
        rng = random.Random(5)
        for _sc, sid, unit, _k, annotator, _v in rng.sample(rows, 12):
            p.decisions.log_time(annotator, sid, unit, rng.uniform(1, 30))
        chosen = {r[1] for r in rows if rng.random() < 0.5}
        got, want = _both(monkeypatch, p, samples=chosen)
        assert repr(got) == repr(want)
        assert any(a["seconds_per_unit"] is not None for a in got["annotators"])
        left_out = {(sid, unit, a) for _sc, sid, unit, _k, a, _v in rng.sample(rows, len(rows) // 3)}
        with p.guidelines.excluding_labels(left_out):
            got, want = _both(monkeypatch, p)
        assert repr(got) == repr(want)
        assert got["annotators"] != agreement(p, n_boot=100, seed=3)["annotators"]  # the exclusions mattered


def test_chunks_keep_each_sample_whole(tmp_path: Path) -> None:
    with Project.open(_project(tmp_path, ("violations", "rubric"), 2)) as p:
        rows = p.decisions.annotator_label_rows()
        order = list(p.counts.sample_counts())
        chunks = list(p.decisions.label_column_chunks(size=4))
    assert len(chunks) > 5
    got = [(*r[:5], json.loads(r[5])) for c in chunks for r in zip(*c)]
    assert got == sorted(rows, key=lambda r: (order.index(r[0]), r[1:5]))  # scheme by scheme, in sample order
    seen: set[str] = set()
    for c in chunks:
        mine = set(c[1])
        assert not mine & seen
        seen |= mine


@pytest.mark.parametrize("scheme", ["violations", "rubric", "trace", "judge"])
def test_the_ceiling_in_chunks_is_the_ceiling_in_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     scheme: str) -> None:
    """The human ceiling reads the same chunks (tests/test_ceiling_columns.py checks it against the per-row ceiling
    in one chunk): chunks of a few labels give the same figures."""
    from app.services.ceiling import _run_evaluate, ceiling

    with Project.open(_project(tmp_path, (scheme,), 4)) as p:
        machine, _ = _run_evaluate(p, scheme)
        whole = ceiling(p, scheme, n_boot=100, seed=2, machine=machine or None)
        monkeypatch.setattr(codes, "CHUNK", 5)
        parts = ceiling(p, scheme, n_boot=100, seed=2, machine=machine or None)
    assert whole is not None and whole["units"] > 5 and repr(parts) == repr(whole)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("shape", [(1, 2), (999, 2), (5000, 3), (20001, 5)])
def test_alpha_in_chunks_is_the_packages_alpha_bit_for_bit(level: str, shape: tuple[int, int]) -> None:
    import krippendorff
    import numpy as np

    from calibration.annotators import krippendorff_alpha

    rng = np.random.default_rng(shape[0])
    counts = rng.integers(0, 4, shape).astype(float)  # up to 4 ratings per value: divisions by 2..(4V - 1)
    counts[0] = [2] + [0] * (shape[1] - 1)  # a pairable unit
    domain = np.sort(rng.choice(np.arange(10.0), shape[1], replace=False))
    want = krippendorff.alpha(value_counts=counts, value_domain=domain, level_of_measurement=level)
    for chunk in (1, 7, 4096, 1 << 16):
        got = krippendorff_alpha(counts, domain, level, chunk=chunk)
        assert np.array_equal(got, want, equal_nan=True)  # the same float, not a close one (NaN: one value only)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_units_numbered_in_steps_as_factorize_numbers_them(seed: int) -> None:
    """item_agreement numbers (sample, item) pairs a step at a time when the samples come grouped in order: the codes
    pd.factorize gives the whole array, whatever the step (cuts inside a sample move to its end)."""
    import numpy as np
    import pandas as pd

    from calibration.annotators import _first_appearance, _units

    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(rng.integers(0, 10 ** 6, 300), 5000))  # grouped, ascending, with gaps
    item = rng.integers(0, 40, len(sample))
    code, in_order = _first_appearance(sample)
    assert in_order and np.array_equal(code, pd.factorize(sample)[0])
    key = code * 40 + item
    for step in (1, 7, 100, 4999, 10 ** 6):
        assert np.array_equal(_units(key, code, True, step=step), pd.factorize(key)[0])
    shuffled = rng.permutation(sample)
    code, in_order = _first_appearance(shuffled)
    assert not in_order and np.array_equal(code, pd.factorize(shuffled)[0])


@pytest.mark.parametrize("chunk", [7, 100_000])
def test_a_per_sample_kind_labelled_twice_by_one_annotator(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           chunk: int) -> None:
    """Trace's key lists under a second unit of some samples (the per-unit dicts keep one value per sample and
    annotator): the columns give the reference's figures, through the dicts."""
    import sqlite3

    monkeypatch.setattr(codes, "CHUNK", chunk)
    path = _project(tmp_path, ("trace",), 11)
    with sqlite3.connect(path) as conn:  # the generated labels copied under unit 'x' with other keys chosen
        rows = conn.execute("SELECT sample_id, kind, annotator, value, event_id, ts FROM labels "
                            "WHERE kind IN ('relevant', 'utilized') AND unit = '' ORDER BY rowid").fetchall()
        rng = random.Random(5)
        extra = [(s, "x", k, a, json.dumps(json.loads(v)[:rng.randrange(3)]), e, t)
                 for s, k, a, v, e, t in rows if v and v.startswith("[") and rng.random() < 0.4]
        assert extra
        conn.executemany("INSERT INTO labels (sample_id, unit, kind, annotator, value, event_id, ts) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?)", extra)
    conn.close()
    with Project.open(path) as p:
        got, want = _both(monkeypatch, p)
        assert got["schemes"]["trace"] and repr(got) == repr(want)


def test_trace_samples_sharing_their_keys_object_give_the_figures_of_one_object_each(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Trace's item records share one object per layout of sentence keys (equal labels of it drawn once): the
    figures of one object per sample, every interval end."""
    import copy

    import app.schemes.trace.store as trace_store

    monkeypatch.setattr(codes, "CHUNK", 50)
    with Project.open(_project(tmp_path, ("trace",), 4)) as p:
        shared = trace_store.item_records(p)
        assert len({id(r) for r in shared.values()}) < len(shared)  # some samples share their keys
        got = agreement(p, n_boot=100, seed=3)
        data = p.scheme_data
        own = data.scheme_item_records
        monkeypatch.setattr(data, "scheme_item_records", lambda name: {s: copy.copy(r) for s, r in own(name).items()})
        assert len({id(r) for r in p.scheme_data.scheme_item_records("trace").values()}) == len(shared)
        want = agreement(p, n_boot=100, seed=3)
        assert got["schemes"]["trace"] and repr(got) == repr(want)
