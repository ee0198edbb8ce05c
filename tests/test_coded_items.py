"""item_agreement on integer codes (calibration.annotators.CodedItems, issue #28): the same figures, bit for bit, as
the rows the codes stand for, on random tables (missing labels, several category sets, units one annotator labels,
codes numbered in any order, names the entries never use)."""
from __future__ import annotations

import json
import random

import numpy as np
import pandas as pd
import pytest

from calibration.annotators import COLUMNS, CodedItems, item_agreement, item_agreements

CATEGORY_SETS = {
    "words": ["tp", "fp", "fn", "tn"],
    "ints": [0, 1, 2, 3, 4],
    "bools": [True, False],
    "floats": [0.0, 0.5, 1.0, 2.5],
    "numbers": [1, 1.0, 2.5, 3],  # ints and floats: a column of floats
    "mixed": [True, 1, 0, "x"],  # True and 1 equal: one category of the rows
}


def _random_rows(rng: random.Random, values: list, seconds: bool) -> list[tuple]:
    rows = []
    annotators = [f"ann{i}" for i in range(rng.randint(2, 5))]
    for s in range(rng.randint(3, 40)):
        sample = f"s{rng.randint(0, 10**6)}-{s}"
        for i in range(rng.randint(1, 4)):
            who = rng.sample(annotators, rng.randint(1, len(annotators)))  # sometimes one annotator only
            for a in who:
                cat = None if rng.random() < 0.1 else rng.choice(values)  # a missing label
                row = (sample, f"it{i}", a, cat)
                rows.append((*row, rng.choice([rng.random() * 10, float("nan")])) if seconds else row)
    rng.shuffle(rows)
    return rows


def _coded(rows: list[tuple], rng: random.Random) -> CodedItems:
    """The rows as codes numbered in a random order, each name list with an unused name added."""
    cols = list(zip(*rows))

    def code(values: tuple, extra: object) -> tuple[np.ndarray, list]:
        names = list({(type(v), v): v for v in values if v is not None}.values()) + [extra]
        rng.shuffle(names)
        index = {(type(n), n): i for i, n in enumerate(names)}
        return np.array([-1 if v is None else index[(type(v), v)] for v in values], dtype=np.int64), names

    sample, samples = code(cols[0], "unused-sample")
    item, items = code(cols[1], "unused-item")
    annotator, annotators = code(cols[2], "zz-nobody")
    category, categories = code(cols[3], "never-given" if isinstance(cols[3][0], str) else 99)
    seconds = np.array(cols[4], dtype=float) if len(cols) > 4 else None
    return CodedItems(sample, item, annotator, category, annotators, categories, seconds, samples, items)


def _frame(rows: list[tuple]) -> pd.DataFrame:
    """The rows as a DataFrame whose categories keep their type (from_records makes ints floats beside a None)."""
    cols = list(zip(*rows))
    return pd.DataFrame({name: pd.Series(col, dtype=object) for name, col in zip([*COLUMNS, "seconds"], cols)})


def _same(a: dict, b: dict) -> bool:
    return json.dumps(a, sort_keys=True, default=str) == json.dumps(b, sort_keys=True, default=str)


@pytest.mark.parametrize("seed", range(18))
def test_coded_items_give_the_rows_figures(seed: int) -> None:
    rng = random.Random(seed)
    name = list(CATEGORY_SETS)[seed % len(CATEGORY_SETS)]
    level = ["nominal", "ordinal", "interval"][seed % 3] if name not in ("words", "mixed") else "nominal"
    rows = _random_rows(rng, CATEGORY_SETS[name], seconds=seed % 2 == 0)
    complete = seed >= 6  # rows as agreement passes them (no missing category): a DataFrame infers their type
    rows = [r for r in rows if r[3] is not None] if complete else rows
    coded = _coded(rows, rng)
    got = item_agreement(coded, level=level, n_boot=200, seed=seed)
    want = item_agreement(rows if complete else _frame(rows), level=level, n_boot=200, seed=seed)
    assert _same(got, want), name
    assert got["n_labels"] == sum(r[3] is not None for r in rows)


def test_coded_and_row_tables_share_a_draw_alike() -> None:
    rng = random.Random(99)
    tables = [_random_rows(rng, CATEGORY_SETS["words"], seconds=False) for _ in range(3)]
    want = item_agreements(tables, n_boot=100, seed=3)
    got = item_agreements([_coded(t, rng) if i != 1 else t for i, t in enumerate(tables)], n_boot=100, seed=3)
    assert all(_same(g, w) for g, w in zip(got, want))


def test_coded_subset_is_the_subset_of_rows() -> None:
    rng = random.Random(5)
    rows = [r for r in _random_rows(rng, CATEGORY_SETS["ints"], seconds=False) if r[3] is not None]
    coded = _coded(rows, rng)
    keep = np.array([rng.random() < 0.6 for _ in rows])
    got = item_agreement(coded.take(keep), n_boot=50)
    want = item_agreement([r for r, k in zip(rows, keep) if k], n_boot=50)
    assert _same(got, want)


def test_coded_items_refuse_a_label_given_twice_naming_it() -> None:
    coded = CodedItems(np.array([0, 0, 1]), np.array([0, 0, 0]), np.array([1, 1, 0]), np.array([0, 1, 0]),
                       ["ana", "ben"], ["yes", "no"], samples=["s-a", "s-b"], items=["x"])
    with pytest.raises(ValueError, match="annotator 'ben' labels item 'x' of sample 's-a' twice"):
        item_agreement(coded, n_boot=0)
    with pytest.raises(ValueError, match="no labels"):
        item_agreement(coded.take(np.zeros(3, dtype=bool)), n_boot=0)
