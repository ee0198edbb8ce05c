"""calibration.item_chunks.item_agreements_bounded (issue #28 item 5): the figures of `item_agreements`, every estimate
and interval end the same bits, on generated integer-coded tables taken a few samples at a time (windows cut between
samples), with missing categories, annotators absent from some items, one to five ratings per item, categories
that compare and that do not, and the three levels; tables it does not take go to `item_agreements`."""
from __future__ import annotations

import numpy as np
import pytest

import calibration.item_chunks as chunks
from calibration.annotators import CodedItems, item_agreements
from calibration.item_chunks import item_agreements_bounded


def _table(seed: int, n_samples: int, *, n_annotators: int = 3, categories: list | None = None,
           missing: float = 0.1, sorted_samples: bool = True) -> CodedItems:
    rng = np.random.default_rng(seed)
    cats = categories if categories is not None else ["no", "yes", "maybe"]
    rows = []
    for s in range(n_samples):
        for item in range(int(rng.integers(1, 6))):
            raters = rng.permutation(n_annotators)[:int(rng.integers(1, n_annotators + 1))]
            truth = int(rng.integers(len(cats)))
            for a in raters:
                c = truth if rng.random() < 0.7 else int(rng.integers(len(cats)))
                rows.append((3 * s + 1, 10 * item + 7, int(a), -1 if rng.random() < missing else c))
    if not sorted_samples:
        rng.shuffle(rows)
    sample, item, annotator, category = (np.array(c, dtype=np.int32) for c in zip(*rows))
    names = [f"ann{i}" for i in rng.permutation(n_annotators + 1)]  # one name never used, not in order
    return CodedItems(sample, item, annotator, category, names, list(cats))


@pytest.mark.parametrize("window", [(1 << 22, 1 << 20), (40, 7)])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_bounded_gives_item_agreements_figures(monkeypatch: pytest.MonkeyPatch, window: tuple[int, int],
                                               level: str) -> None:
    monkeypatch.setattr(chunks, "WINDOW_CELLS", window[0])
    monkeypatch.setattr(chunks, "WINDOW_LABELS", window[1])
    cats = [0, 2, 5, 1] if level == "interval" else ["b", "a", "c", "d"]
    tables = [_table(1, 60, categories=cats), _table(2, 60, n_annotators=5, categories=cats, missing=0.3),
              _table(3, 45, n_annotators=2, categories=cats)]
    want = item_agreements(tables, level=level, n_boot=150, seed=4)
    monkeypatch.setattr(chunks, "item_agreements", _refused)  # every table on the bounded path
    got = item_agreements_bounded(tables, level=level, n_boot=150, seed=4)
    assert repr(got) == repr(want)
    assert all(r["overall"]["alpha"]["n_valid"] > 0 for r in got)


def test_categories_that_do_not_compare_and_no_bootstrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunks, "WINDOW_LABELS", 11)
    tables = [_table(5, 40, categories=[True, 1.5, "x", "(1, 2)"], missing=0.0), _table(6, 30, n_annotators=4)]
    for n_boot in (0, 80):
        want = item_agreements(tables, n_boot=n_boot, seed=9)
        with monkeypatch.context() as m:
            m.setattr(chunks, "item_agreements", _refused)
            got = item_agreements_bounded(tables, n_boot=n_boot, seed=9)
        assert repr(got) == repr(want)


def test_what_it_does_not_take_goes_to_item_agreements() -> None:
    shuffled = _table(7, 30, sorted_samples=False)
    assert repr(item_agreements_bounded([shuffled], n_boot=50)) == repr(item_agreements([shuffled], n_boot=50))
    t = _table(8, 10)
    twice = CodedItems(np.r_[t.sample, t.sample[-1]], np.r_[t.item, t.item[-1]], np.r_[t.annotator, t.annotator[-1]],
                       np.r_[t.category, 0], t.annotators, t.categories)
    with pytest.raises(ValueError, match="labels item .* twice"):
        item_agreements_bounded([twice], n_boot=10)
    empty = CodedItems(t.sample, t.item, t.annotator, np.full(len(t), -1), t.annotators, t.categories)
    with pytest.raises(ValueError, match="no labels to compare"):
        item_agreements_bounded([empty], n_boot=10)


def _refused(*_a: object, **_k: object) -> None:
    raise AssertionError("the bounded path left a table to item_agreements")


def test_distinct_rows_numbers_each_row_by_its_distinct_one(monkeypatch: pytest.MonkeyPatch) -> None:
    block = np.random.default_rng(3).integers(0, 3, size=(500, 6))
    for hashed in (True, False):  # the hashed rows, and np.unique's when a hash collides
        if not hashed:
            monkeypatch.setattr(chunks.np, "array_equal", lambda *_a: False)
        rows, codes = chunks.distinct_rows(block)
        monkeypatch.undo()
        assert np.array_equal(rows[codes], block) and len(np.unique(rows, axis=0)) == len(rows)


@pytest.mark.parametrize(("shared_category", "n_annotators"), [(False, 3), (True, 3), (False, 5)])
def test_a_pool_of_tables_gives_item_agreements_figures(monkeypatch: pytest.MonkeyPatch, shared_category: bool,
                                                        n_annotators: int) -> None:
    """A pool (agreement's `overall`): tables one after the other, samples shared between them and not in order,
    each table's categories its own (else, one category in two tables, `item_agreements` itself; so too with items
    of four ratings, whose Krippendorff terms in thirds would be summed in another order)."""
    from calibration.item_chunks import KindCodedItems

    monkeypatch.setattr(chunks, "WINDOW_LABELS", 13)
    parts = [_table(20 + i, 25 + 7 * i, n_annotators=n_annotators) for i in range(3)]
    names: list = []
    cols: list = [[], [], [], [], []]
    item_base = 0
    for i, t in enumerate(parts):
        cols[0].append(np.asarray(t.sample) * (i + 1) % 61)  # samples met again in later tables, out of order
        cols[1].append(np.asarray(t.item) + item_base)
        cols[2].append(np.asarray(t.annotator))
        cols[3].append(np.where(np.asarray(t.category) >= 0, np.asarray(t.category) + len(names), -1))
        cols[4].append(np.full(len(t), i))
        item_base += int(np.asarray(t.item).max()) + 1
        names += [f"k{i}={c}" for c in t.categories]
    if shared_category:
        names[-1] = names[0]
    sample, item, annotator, category, kind = (np.concatenate(c) for c in cols)
    _, category_names = np.unique(names, return_inverse=True)
    category = np.where(category >= 0, category_names[np.maximum(category, 0)], -1)
    labels = sorted(set(names))
    pool = KindCodedItems(sample, item, annotator, category, parts[0].annotators, labels, kind=kind)
    plain = CodedItems(sample, item, annotator, category, parts[0].annotators, labels)
    want = item_agreements([plain, parts[1]], n_boot=120, seed=6)
    if not shared_category and n_annotators == 3:
        monkeypatch.setattr(chunks, "item_agreements", _refused)
    got = item_agreements_bounded([pool, parts[1]], n_boot=120, seed=6)
    assert repr(got) == repr(want)


@pytest.mark.parametrize("n_tables", [1, 2, 4])
def test_replicate_sums_of_joined_codes_are_each_tables_own(n_tables: int) -> None:
    """The draws counted once per joined code give each table the sums its own codes give (the per-table count of
    every replicate's draws times its rows), bit for bit, however many combinations of rows the samples have."""
    from calibration.agreement import draw_chunk, resample_index_chunks

    rng = np.random.default_rng(n_tables)
    n, n_boot = 500, 70  # two chunks of draws
    prepared = []
    for t in range(n_tables):
        n_rows = int(rng.integers(1, 40))
        rows = rng.integers(0, 9, size=(n_rows, int(rng.integers(1, 12)))).astype(np.int32)
        rows[:, 0] = 0  # a cell never used
        codes = rng.integers(0, n_rows, size=n).astype(np.int32)
        prepared.append(chunks._Prepared(n, codes, rows, lambda *_: {}))
    got = chunks._replicate_sums(prepared, n, n_boot, seed=3)
    for p, out in zip(prepared, got):
        want = np.concatenate([np.stack([np.bincount(p.codes[i], minlength=len(p.rows)) for i in idx])
                               for idx in resample_index_chunks(n, n_boot, 3, draw_chunk(n))]) @ p.rows.astype(float)
        assert out.shape == want.shape and np.array_equal(out, want)
