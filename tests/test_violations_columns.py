"""The columnar path of `concord evaluate` (issue #18): the violations read as columns from SQL give exactly the pair
table, and so the metrics, of the records path, on a generated project with the cases that differ between the two
(curated ground truth, checkers that ran and found nothing, samples without a given checker, ungrounded spans, blank
and padded texts, categories differing in case)."""
from __future__ import annotations

import math
import random
from dataclasses import replace
from pathlib import Path

import pandas as pd

from app.store import Change, Project
from calibration.schemes.violations import Violation, ViolationSample, build_pair_table
from calibration.schemes.violations.columns import ViolationColumns
from calibration.schemes.violations.evaluation import evaluate_report

TEXT = "The quick brown fox jumps over the lazy dog near the old river bank today."
RULES = ["Tone", " Tone ", "Claims.Unsupported", "tone", "jargon word"]
CATEGORIES = [None, "", "Style", " style", "STYLE", "Accuracy"]
NOTES = [None, "", "  ", "too formal", "too formal ", "unsupported claim"]


def violation(rng: random.Random) -> Violation:
    start = rng.randrange(0, 60)
    grounded = rng.random() < 0.8
    return Violation(rng.choice(RULES), start if grounded else None, start + rng.randrange(1, 12) if grounded else None,
                     None, rng.choice(CATEGORIES), rng.choice(NOTES), rng.choice(NOTES))


def generated(n: int, seed: int = 3) -> list[ViolationSample]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        checkers = rng.sample(["b@1|m", "a@2|m", "c@1|m"], rng.randrange(0, 4))
        preds = {c: tuple(violation(rng) for _ in range(rng.randrange(0, 4))) for c in checkers}
        out.append(ViolationSample(f"s{i:03d}", TEXT, tuple(violation(rng) for _ in range(rng.randrange(0, 4))), preds))
    return out


def make(path: Path) -> Project:
    p = Project.create(path)
    p.store("violations").write_violation_samples(generated(60))
    # curated ground truth on a few samples: a different list, an empty one
    p.decisions.record("ana", [Change("s001", "", "ground_truth", [{"start": 4, "end": 9, "rule": "Tone", "category": "Style"}]),
                     Change("s002", "", "ground_truth", []),
                     Change("s007", "", "ground_truth", [{"rule": "jargon word", "explanation": "x"},
                                                         {"start": 10, "end": 15, "rule": "tone"}])])
    return p


def assert_same_table(a, b) -> None:
    for frame in ("groups", "pairs", "gt_items", "pred_items"):
        pd.testing.assert_frame_equal(getattr(a, frame), getattr(b, frame), check_exact=True)
    assert a.similarity_key == b.similarity_key


def test_columns_from_sql_give_the_records_pair_table_and_metrics(tmp_path: Path) -> None:
    with make(tmp_path / "p.concord") as p:
        columns = p.store("violations").violation_columns()
        records = p.scheme_data.scheme_records("violations")
        samples = [r.sample for r in records]
        assert [len(s.ground_truth) for s in samples[1:3]] == [1, 0]  # the curated ground truth is what is read
        assert_same_table(build_pair_table(columns, "jaccard"), build_pair_table(samples, "jaccard"))
        assert_same_table(build_pair_table(p.store("violations").violation_columns(curated=False), "jaccard"),  # the file's, as stored
                          build_pair_table(p.store("violations").violation_samples(), "jaccard"))
        for checkers in (["b@1|m"], ["c@1|m", "a@2|m"]):
            assert_same_table(build_pair_table(columns, "jaccard", checkers=checkers),
                              build_pair_table(samples, "jaccard", checkers=checkers))
        labels = p.scheme_data.scheme_labels("violations")
        options = {"embedding": "jaccard", "n_boot": 50}
        assert evaluate_report(columns, labels, options).data == evaluate_report(records, labels, options).data


def test_columns_of_records_round_trip_the_rows(tmp_path: Path) -> None:
    samples = generated(20, seed=5)
    cols = ViolationColumns.from_samples(samples)
    assert len(cols) == sum(len(s.ground_truth) + sum(map(len, s.predictions.values())) for s in samples)
    assert sorted(zip(cols.unit_sample.tolist(), cols.unit_checker.tolist())) == sorted(
        (i, c) for i, s in enumerate(samples) for c in s.predictions)
    with Project.create(tmp_path / "p.concord") as p:
        p.store("violations").write_violation_samples(samples)
        from_sql = p.store("violations").violation_columns()
    assert_same_table(build_pair_table(from_sql, "jaccard"), build_pair_table(cols, "jaccard"))


def test_an_empty_project_gives_an_empty_table(tmp_path: Path) -> None:
    with Project.create(tmp_path / "p.concord") as p:
        table = build_pair_table(p.store("violations").violation_columns(), "jaccard")
    assert table.n_groups == 0 and len(table.pairs) == 0
    assert_same_table(table, build_pair_table([], "jaccard"))


def _rows(cols: ViolationColumns) -> list[tuple]:
    """Each violation as (sample id, checker, start, end, texts...) with NaN as None, in the columns' order."""

    def num(x: float) -> float | None:
        return None if math.isnan(x) else x
    return [(cols.sample_ids[s], c, num(a), num(b), *t) for s, c, a, b, *t in zip(
        cols.sample.tolist(), cols.checker, cols.start.tolist(), cols.end.tolist(), cols.rule, cols.category,
        cols.explanation, cols.correction)]


def test_columns_read_in_small_chunks_equal_the_records_row_for_row(tmp_path: Path, monkeypatch) -> None:
    """The chunked read (numbers by getters, each row's texts found as one tuple among the chunk's distinct ones,
    units as rowid lists per checker) gives every violation and unit of the records, in their order, with equal
    texts sharing one object; chunks of 7 rows so most chunks split a sample."""
    from app.schemes.violations import store

    monkeypatch.setattr(store, "_CHUNK", 7)
    rng = random.Random(11)
    samples = generated(40, seed=9)
    # unicode, quotes and separators in texts, and samples written out of id order (rowid order is what counts)
    odd = ["naïve “quote”, a,b", "tab\there", "emoji 🙂", "comma,separated", None]
    samples = [ViolationSample(s.id, s.text, tuple(v.__class__(rng.choice(RULES + odd[:4]), v.start, v.end, v.quote,
                                                               rng.choice(CATEGORIES + odd), v.explanation, rng.choice(odd))
                                                   for v in s.ground_truth), s.predictions) for s in samples]
    rng.shuffle(samples)
    with Project.create(tmp_path / "p.concord") as p:
        p.store("violations").write_violation_samples(samples)
        got = p.store("violations").violation_columns(curated=False)
        want = ViolationColumns.from_samples(p.store("violations").violation_samples())
    assert list(got.sample_ids) == list(want.sample_ids)
    assert _rows(got) == _rows(want)
    assert sorted(zip(got.unit_sample.tolist(), got.unit_checker)) == sorted(zip(want.unit_sample.tolist(), want.unit_checker))
    for column in (got.checker, got.rule, got.category, got.explanation, got.correction):
        firsts = {}
        assert all(firsts.setdefault(v, v) is v for v in column)  # equal strings are one object
    # the texts as codes: each column's codes name its strings, and the pair table built from the codes is the one
    # built from the strings
    assert got.codes is not None and want.codes is None
    values = list(got.codes.values) + [None]
    for f in ("unit_checker", "checker", "rule", "category", "explanation", "correction"):
        assert [values[c] for c in got.codes.columns[f].tolist()] == list(getattr(got, f))
    assert_same_table(build_pair_table(got, "jaccard"), build_pair_table(replace(got, codes=None), "jaccard"))
    assert_same_table(build_pair_table(got, "jaccard"), build_pair_table(want, "jaccard"))


def test_curated_ground_truth_extends_the_codes(tmp_path: Path) -> None:
    """New strings of a curated ground truth get codes after the stored ones; the table equals the strings' table."""
    with make(tmp_path / "p.concord") as p:
        cols = p.store("violations").violation_columns()
    values = list(cols.codes.values) + [None]
    assert "x" in values  # s007's curated explanation, in no stored row
    for f in ("checker", "rule", "category", "explanation", "correction"):
        assert [values[c] for c in cols.codes.columns[f].tolist()] == list(getattr(cols, f))
    assert_same_table(build_pair_table(cols, "jaccard"), build_pair_table(replace(cols, codes=None), "jaccard"))


def test_group_codes_of_a_stored_table_equal_pandas_factorize(tmp_path: Path) -> None:
    """A table built from the store's coded columns carries its groups' and items' codes; the counting codes and the
    humans' group lookup made from them equal those factorized from the frames, and so does the whole report."""
    import numpy as np

    from calibration.schemes.violations.config import PRESETS
    from calibration.schemes.violations.evaluation import human_group_arrays, proposed_matches
    from calibration.schemes.violations.metrics import table_codes

    with make(tmp_path / "p.concord") as p:
        columns = p.store("violations").violation_columns()
        p.decisions.record("ben", [Change("s005", c, "matches", []) for c in ("a@2|m", "c@1|m", "zz@0|m")])
        labels = p.scheme_data.scheme_labels("violations")
    for checkers in (None, ["c@1|m", "a@2|m"]):
        table = build_pair_table(columns, "jaccard", checkers=checkers)
        plain = replace(table, codes=None)
        assert table.codes is not None and len(table.codes.categories) > 2
        got, want = table_codes(table), table_codes(plain)
        for f in want.__dataclass_fields__:
            a, b = getattr(got, f), getattr(want, f)
            assert (a == b if isinstance(a, list) else np.array_equal(a, b)), f
        for a, b in zip(human_group_arrays(table, labels), human_group_arrays(plain, labels)):
            assert np.array_equal(a, b)
        assert len(human_group_arrays(table, labels)[1]) > 0
        config = PRESETS["ha_match"].with_(embedding="jaccard")
        got_matches, want_matches = proposed_matches(table, config, "greedy"), proposed_matches(plain, config, "greedy")
        assert got_matches == want_matches and list(got_matches) == list(want_matches)
        assert sum(len(v["matches"]) for v in got_matches.values()) > 5
    options = {"embedding": "jaccard", "n_boot": 30}
    assert evaluate_report(columns, labels, options).data == evaluate_report(
        replace(columns, codes=None), labels, options).data


def test_a_text_not_utf8_is_refused_as_sqlite3_refuses_it(tmp_path: Path) -> None:
    """Texts are read as bytes and decoded once per distinct value: a stored text that is not UTF-8 is still an
    sqlite3.OperationalError (as when sqlite3 decoded it per row), and the connection reads str again after."""
    import sqlite3

    import pytest

    with make(tmp_path / "p.concord") as p:
        with p.transaction() as c:
            c.execute("UPDATE violations SET rule = CAST(X'54FF6F6E65' AS TEXT) WHERE id = 3")
        with pytest.raises(sqlite3.OperationalError):
            p.store("violations").violation_columns()
        assert isinstance(p.conn.execute("SELECT checker FROM violations LIMIT 1").fetchone()[0], str)
