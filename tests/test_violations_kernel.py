"""Property test (issue #18): the fused numba grid kernel counts exactly what the numpy greedy passes count.

Random pair tables with coarse component values (exact score ties everywhere), absent components (NaN, including
pairs with no weighted component at all), units up to 12 x 12 (components big enough for the kernel's sorted
greedy), gates that let everything through or almost nothing, weight rows with zeros, and threshold grids from
1 to 40 values (the kernel's linear and binary-search binning) including -inf and values equal to scores.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calibration.schemes.violations import grid, kernel
from calibration.schemes.violations.config import COMPONENTS
from calibration.schemes.violations.pairdata import PairData
from calibration.schemes.violations.pairs import PairTable, unit_pair_indices

LEVELS = np.array([-0.5, 0.0, 0.01, 0.1, 0.25, 0.3, 0.5, 0.75, 1.0])


def random_case(seed: int, max_side: int) -> tuple[PairData, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    G = int(rng.integers(1, 12))
    n_gt, n_pred = rng.integers(1, max_side + 1, G), rng.integers(1, max_side + 1, G)
    group, gt, pred = unit_pair_indices(n_gt, n_pred)
    P = group.size
    comps = LEVELS[rng.integers(0, LEVELS.size, (P, len(COMPONENTS)))]
    if rng.random() < 0.5:  # continuous values too
        comps = np.where(rng.random(comps.shape) < 0.5, comps, np.round(rng.random(comps.shape), 3))
    comps[rng.random(comps.shape) < rng.uniform(0, 0.5)] = np.nan
    pairs = pd.DataFrame({"group": group, "gt": gt, "pred": pred, **{c: comps[:, i] for i, c in enumerate(COMPONENTS)}})
    groups = pd.DataFrame({"sample_id": [f"s{g // 2}" for g in range(G)], "checker": [f"c{g % 2}" for g in range(G)],
                           "n_gt": n_gt, "n_pred": n_pred})
    table = PairTable.from_frames(groups, pairs)
    human = set(zip(group[rng.random(P) < 0.3].tolist(), gt[rng.random(P) < 0.3].tolist(), pred[rng.random(P) < 0.3].tolist()))
    human = {h for h in human if h in set(zip(group.tolist(), gt.tolist(), pred.tolist()))}
    units = rng.integers(0, 3, G)
    data = PairData.build(table, human, units, 3)
    W = LEVELS[rng.integers(1, LEVELS.size, (int(rng.integers(1, 20)), len(COMPONENTS)))]
    W[rng.random(W.shape) < 0.4] = 0.0
    T = int(rng.integers(1, 41))
    tm = np.sort(np.concatenate([rng.choice(np.concatenate([LEVELS, [-np.inf]]), min(T, 10)),
                                 np.round(rng.uniform(-0.2, 1.2, max(0, T - 10)), 2)]))
    return data, W, tm


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from([2, 5, 12]),
       st.sampled_from([(0.0, 0.01), (-np.inf, -np.inf), (0.1, 0.25), (-np.inf, 0.0)]))
def test_fused_kernel_equals_numpy_passes(seed: int, max_side: int, gates: tuple[float, float]) -> None:
    assert kernel.AVAILABLE, "numba is a dependency (pyproject.toml); the fused kernel must be what runs"
    data, W, tm = random_case(seed, max_side)
    st_ = grid.structure(data, *gates)
    fused = grid.count_batch(st_, W, tm, data.n_units, fused=True)
    plain = grid.count_batch(st_, W, tm, data.n_units, fused=False)
    assert fused.shape == (W.shape[0], tm.size, data.n_units, 2)
    np.testing.assert_array_equal(fused, plain)


def test_big_components_take_the_sorted_greedy_and_agree() -> None:
    """A 12 x 12 unit where everything passes: one component of 144 cells > SORT_ABOVE, 12 greedy steps."""
    big = 0
    for seed in range(20):
        data, W, tm = random_case(seed, 12)
        st_ = grid.structure(data, -np.inf, -np.inf)
        big += any(bk.R * bk.C > kernel.SORT_ABOVE and min(bk.R, bk.C) > 2 for bk in st_.buckets)
        np.testing.assert_array_equal(grid.count_batch(st_, W, tm, data.n_units, fused=True),
                                      grid.count_batch(st_, W, tm, data.n_units, fused=False))
    assert big >= 5  # the sorted path really ran


def test_small_gate_passes_run_numpy_and_count_the_same(monkeypatch) -> None:
    """Below grid.FUSED_MIN_WORK pair-weights a gate pair runs the numpy passes (numba is not even imported for a
    small project); the counts are the kernel's."""
    data, W, tm = random_case(7, 5)
    tm = np.sort(tm)
    small = grid.threshold_counts(data, W, tm, 0.0, 0.01)
    monkeypatch.setattr(grid, "FUSED_MIN_WORK", 0)
    calls = []
    real = grid.count_batch
    monkeypatch.setattr(grid, "count_batch", lambda *a: calls.append(a[-1]) or real(*a))
    np.testing.assert_array_equal(grid.threshold_counts(data, W, tm, 0.0, 0.01), small)
    assert calls and all(calls)  # fused=True on every batch once the work is above the threshold


def _kernel_counts(st_: grid.Structure, W: np.ndarray, tm: np.ndarray, n_units: int,
                   order: np.random.Generator | None = None) -> np.ndarray:
    """kernel.count_bucket over every bucket (components shuffled within each when `order` is given), as
    grid.count_batch turns it into counts above each threshold."""
    total, _ = grid.weight_sums(W)
    h = np.zeros((W.shape[0], 2 * n_units, tm.size + 1), dtype=np.int64)
    for bk in st_.buckets:
        rc = bk.R * bk.C
        perm = np.arange(bk.n) if order is None else order.permutation(bk.n)
        cells = (perm[:, None] * rc + np.arange(rc)[None, :]).ravel()
        kernel.count_bucket(bk.R, bk.C, bk.n, np.ascontiguousarray(bk.comps_t[:, cells]), bk.pattern[cells],
                            bk.valid[cells], bk.uh[cells], W, total, tm, h)
    return np.cumsum(h[:, :, ::-1], axis=2)[:, :, ::-1][:, :, 1:]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_kernel_counts_do_not_depend_on_component_order(seed: int) -> None:
    """grid.structure sorts a shape's components by unit so the kernel empties its counters once per unit; in any
    other order (a unit's components interleaved with others') the counts are the same."""
    data, W, tm = random_case(seed, 5)
    st_ = grid.structure(data, -np.inf, -np.inf)
    np.testing.assert_array_equal(_kernel_counts(st_, W, tm, data.n_units, np.random.default_rng(seed)),
                                  _kernel_counts(st_, W, tm, data.n_units))


def test_many_pick_rows_in_one_unit_empty_the_byte_counters_in_time() -> None:
    """One unit with thousands of 1 x 1 and 2 x 2 components: far more than kernel.ROWS_MAX pick rows, so the uint16
    counters (a byte per count) are emptied mid-unit; the counts equal the numpy passes'."""
    rng = np.random.default_rng(3)
    G = 1500
    n_gt, n_pred = rng.integers(1, 3, G), rng.integers(1, 3, G)
    group, gt, pred = unit_pair_indices(n_gt, n_pred)
    P = group.size
    comps = np.round(rng.random((P, len(COMPONENTS))), 1)
    pairs = pd.DataFrame({"group": group, "gt": gt, "pred": pred, **{c: comps[:, i] for i, c in enumerate(COMPONENTS)}})
    groups = pd.DataFrame({"sample_id": [f"s{g}" for g in range(G)], "checker": "c", "n_gt": n_gt, "n_pred": n_pred})
    table = PairTable.from_frames(groups, pairs)
    human = {(int(g), int(a), int(b)) for g, a, b in zip(group, gt, pred) if rng.random() < 0.5}
    data = PairData.build(table, human, np.zeros(G, dtype=np.int64), 1)
    W = np.round(rng.random((7, len(COMPONENTS))), 1)
    tm = np.round(np.linspace(-0.1, 1.0, 12), 2)
    st_ = grid.structure(data, -np.inf, -np.inf)
    assert sum(bk.n * min(bk.R, bk.C) for bk in st_.buckets) > 3 * kernel.ROWS_MAX
    plain = grid.count_batch(st_, W, tm, 1, fused=False)
    np.testing.assert_array_equal(grid.count_batch(st_, W, tm, 1, fused=True), plain)
    assert plain[:, 0].sum() > 3 * kernel.ROWS_MAX * W.shape[0]  # the counts really exceed a byte


def test_a_component_across_units_is_refused() -> None:
    """The kernel counts a component into one unit; pairs of one component in two units (units that do not
    partition the groups) are an error, not a silent miscount."""
    data, W, tm = random_case(11, 5)
    st_ = grid.structure(data, -np.inf, -np.inf)
    bk = next(b for b in st_.buckets if b.valid.sum() > b.n)  # a bucket with components of 2+ pairs
    uh = bk.uh.copy()
    first = np.flatnonzero(bk.valid[:bk.R * bk.C])[0]
    uh[first] += 2  # the next unit
    total, _ = grid.weight_sums(W)
    h = np.zeros((W.shape[0], 2 * (data.n_units + 1), tm.size + 1), dtype=np.int64)
    try:
        kernel.count_bucket(bk.R, bk.C, bk.n, bk.comps_t, bk.pattern, bk.valid, uh, W, total, tm, h)
    except ValueError as exc:
        assert "different units" in str(exc)
    else:
        raise AssertionError("a component across two units was counted")


def test_fused_batches_split_evenly_over_the_threads_and_keep_the_counts_small() -> None:
    """The kernel's batch (its vector lanes) is at most FUSED_BATCH weight vectors, every thread gets as many
    batches, and with many units the (batch, units x 2, thresholds + 1) counts stay within HIST_BYTES."""
    for nw, jobs in [(1001, 2), (300, 3), (1001, 3), (1001, 1), (11, 2), (513, 3)]:
        bs = grid._batch_size(0, nw, True, 20, 11, jobs)
        n_batches = -(-nw // bs)
        assert bs <= grid.FUSED_BATCH and (nw < 8 * jobs or n_batches % jobs == 0)
        assert n_batches * bs - nw < n_batches  # one size, the last batch at most one short per batch
    bs = grid._batch_size(0, 1001, True, 50_000, 11, 2)
    assert 8 <= bs and (bs == 8 or bs * 2 * 50_000 * 12 * 8 <= grid.HIST_BYTES)


def _one_unit_case(n_gt: int, n_pred: int, groups: int, human_share: float, seed: int,
                   T: int) -> tuple[PairData, np.ndarray, np.ndarray]:
    """`groups` units of n_gt x n_pred pairs that all pass, coarse component values (ties), a given share of human
    matches, T thresholds including -inf and score values."""
    rng = np.random.default_rng(seed)
    n_g, n_p = np.full(groups, n_gt), np.full(groups, n_pred)
    group, gt, pred = unit_pair_indices(n_g, n_p)
    P = group.size
    comps = LEVELS[rng.integers(0, LEVELS.size, (P, len(COMPONENTS)))]
    comps[rng.random(comps.shape) < 0.2] = np.nan
    pairs = pd.DataFrame({"group": group, "gt": gt, "pred": pred, **{c: comps[:, i] for i, c in enumerate(COMPONENTS)}})
    frame = pd.DataFrame({"sample_id": [f"s{g}" for g in range(groups)], "checker": "c", "n_gt": n_g, "n_pred": n_p})
    table = PairTable.from_frames(frame, pairs)
    human = {(int(g), int(a), int(b)) for g, a, b in zip(group, gt, pred) if rng.random() < human_share}
    data = PairData.build(table, human, rng.integers(0, 2, groups), 2)
    W = LEVELS[rng.integers(1, LEVELS.size, (int(rng.integers(1, 40)), len(COMPONENTS)))]
    W[rng.random(W.shape) < 0.3] = 0.0
    tm = np.sort(np.concatenate([[-np.inf], rng.choice(LEVELS, T - 1)]))
    return data, W, tm


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from([(1, 1), (1, 3), (3, 1), (2, 2), (2, 3), (3, 3), (4, 5)]),
       st.sampled_from([0.0, 0.3, 1.0]), st.integers(1, 24))
def test_human_free_and_all_human_components_agree(seed: int, shape: tuple[int, int], human_share: float,
                                                    T: int) -> None:
    """No human match at all (every component's last round is a plain maximum, no strike word), every pair a human
    match (every winner flagged), or a mix; 1 to 24 thresholds (one, two or three counter words, a last word of 4
    thresholds or of 8): the kernel counts what the numpy passes count."""
    data, W, tm = _one_unit_case(*shape, 6, human_share, seed, T)
    st_ = grid.structure(data, -np.inf, -np.inf)
    np.testing.assert_array_equal(grid.count_batch(st_, W, tm, data.n_units, fused=True),
                                  grid.count_batch(st_, W, tm, data.n_units, fused=False))


def test_strike_words_hold_63_cells() -> None:
    """A 7 x 9 component (63 cells, the most the argmax rounds take: one bit of a strike word per cell, the sign bit
    for the human flag) next to an 8 x 8 one (64 cells: the sorted greedy); both agree with the numpy passes."""
    for n_gt, n_pred in [(7, 9), (8, 8)]:
        for seed in range(3):
            data, W, tm = _one_unit_case(n_gt, n_pred, 2, 0.3, seed, 11)
            st_ = grid.structure(data, -np.inf, -np.inf)
            assert any(bk.R * bk.C == n_gt * n_pred for bk in st_.buckets)
            np.testing.assert_array_equal(grid.count_batch(st_, W, tm, data.n_units, fused=True),
                                          grid.count_batch(st_, W, tm, data.n_units, fused=False))
    assert 7 * 9 <= kernel.SORT_ABOVE < 8 * 8


def test_long_thin_components_agree() -> None:
    """Components of more than 63 cells with one or two greedy rounds (1 x 70, 70 x 1, 2 x 40): more cells than a
    strike word has bits; the counts still equal the numpy passes'."""
    for shape in [(1, 70), (70, 1), (2, 40), (40, 2)]:
        for seed in range(2):
            data, W, tm = _one_unit_case(*shape, 2, 0.3, seed, 11)
            st_ = grid.structure(data, -np.inf, -np.inf)
            assert any(bk.R * bk.C > kernel.SORT_ABOVE for bk in st_.buckets)
            np.testing.assert_array_equal(grid.count_batch(st_, W, tm, data.n_units, fused=True),
                                          grid.count_batch(st_, W, tm, data.n_units, fused=False))


def test_every_cell_count_and_scores_on_the_cli_thresholds() -> None:
    """Components of 1 to 12 valid cells (a greedy round's last pass takes one to four cells, after zero to two
    full passes; cells are scored two per pass, an odd count leaves one) with the CLI's 11 match thresholds
    (i / 10) and one-hot weight rows of 1.0, so many scores equal a threshold exactly (a pick on a threshold is not
    above it); human matches mixed in. The kernel counts what the numpy passes count."""
    tm = np.array([i / 10 for i in range(11)])
    on_threshold = 0
    for n_gt, n_pred in [(1, 1), (1, 2), (1, 3), (2, 2), (1, 5), (2, 3), (1, 7), (2, 4), (3, 3), (2, 5), (1, 11),
                         (3, 4)]:
        for seed in range(2):
            data, W, _ = _one_unit_case(n_gt, n_pred, 5, 0.4, seed, 11)
            W = np.vstack([np.eye(len(COMPONENTS)), W])  # one-hot rows: score = the component's value
            st_ = grid.structure(data, -np.inf, -np.inf)
            assert any(bk.R * bk.C == n_gt * n_pred for bk in st_.buckets)
            on_threshold += int(np.isin(data.comps, tm).sum())
            np.testing.assert_array_equal(grid.count_batch(st_, W, tm, data.n_units, fused=True),
                                          grid.count_batch(st_, W, tm, data.n_units, fused=False))
    assert on_threshold > 100  # scores exactly on a threshold really occur
