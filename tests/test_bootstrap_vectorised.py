"""The vectorised bootstraps equal the plain per-replicate computations they replace, replicate by replicate, on
the same draws (issue #28): Spearman from counts vs rankdata of each resample, trace's shared draws vs one draw per
statistic."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from calibration.agreement import resample_counts, resampled_spearman


def _plain_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The loop trace's evaluation ran before: build each resample, rank it with scipy, correlate the ranks."""
    out = np.full(w.shape[0], np.nan)
    for r in range(w.shape[0]):
        idx = np.repeat(np.arange(x.size), w[r].astype(np.int64))
        xs, ys = x[idx], y[idx]
        if xs.size > 1 and np.ptp(xs) > 0 and np.ptp(ys) > 0:
            out[r] = np.corrcoef(rankdata(xs), rankdata(ys))[0, 1]
    return out


@pytest.mark.parametrize("n, levels", [(2, 2), (3, 2), (7, 3), (25, 4), (60, 60), (200, 5)])
def test_resampled_spearman_equals_ranking_each_resample(n: int, levels: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.integers(0, levels, n).astype(float)  # few levels: ties in the data and, by the draw, in every resample
    y = np.round(0.5 * x + rng.normal(size=n), 1) if levels > 3 else rng.integers(0, 2, n).astype(float)
    w = np.concatenate(list(resample_counts(n, 400, seed=3)))
    got, want = resampled_spearman(x, y, w), _plain_spearman(x, y, w)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_resampled_spearman_on_unit_weights_is_scipys() -> None:
    from scipy.stats import spearmanr

    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 5, 50).astype(float), rng.normal(size=50).round(1)
    assert resampled_spearman(x, y, np.ones((1, 50)))[0] == pytest.approx(spearmanr(x, y).statistic, abs=1e-14)
    assert np.isnan(resampled_spearman(np.ones(5), np.arange(5.0), np.ones((1, 5)))[0])  # a constant side


def test_trace_intervals_share_draws_with_the_same_replicates() -> None:
    """All statistics over n samples take one pass over the draws (those of column sums one matrix product): each
    gets the interval it got from a draw of its own (same seed, same n), computed the plain way per statistic."""
    from calibration.agreement import percentile_interval
    from calibration.schemes.trace.evaluation import _Intervals, _kappa_f1, _rmse_sums

    rng = np.random.default_rng(1)
    a, h = rng.random(40).round(2), rng.random(40).round(2)
    conf = rng.integers(0, 3, size=(40, 4)).astype(float)
    e = (a - h) ** 2
    plain = [lambda w: resampled_spearman(a, h, w), lambda w: np.sqrt((w @ e) / w.sum(axis=1)),
             lambda w: _kappa_f1(w @ conf)[0], lambda w: _kappa_f1(w @ conf)[1]]
    batch = _Intervals(300, 7, 0.05)
    slots = [batch.add(plain[0], 40), batch.add(_rmse_sums, 40, np.column_stack([e, np.ones(40)])),
             batch.add(lambda s: _kappa_f1(s)[0], 40, conf), batch.add(lambda s: _kappa_f1(s)[1], 40, conf)]
    batch.run()
    for stat, slot in zip(plain, slots):
        reps = np.concatenate([stat(w) for w in resample_counts(40, 300, 7)])
        want = [float(stat(np.ones((1, 40)))[0]), *percentile_interval(reps, 0.05)]
        np.testing.assert_allclose(slot, want, rtol=1e-13, atol=0)  # float sums: equal to rounding


@pytest.mark.parametrize("base", ["detected", "all"])
def test_rgb_figures_replicates_equal_bootstrap_ci(base: str) -> None:
    """RGB's intervals from draw-count sums are bootstrap_ci's over `_figure` called per resample, bit for bit."""
    import pandas as pd

    from calibration.agreement import bootstrap_ci
    from calibration.schemes.rgb.features import LABELS
    from calibration.schemes.rgb.metrics import FIGURES, _figure, evaluate

    rng = np.random.default_rng(5)
    n = 37
    table = pd.DataFrame({"model": ["m"] * n, "task": ["t"] * n,
                          **{k: rng.random(n) < p for k, p in zip(LABELS, (0.6, 0.2, 0.1, 0.5))}})
    got = evaluate(table, correction_base=base, n_boot=500, seed=4)  # type: ignore[arg-type]
    x = table[list(LABELS)].to_numpy(dtype=bool).astype(np.int8)
    for f in FIGURES:
        want = bootstrap_ci(x, lambda s, f=f: _figure(s, f, base), n_boot=500, seed=4)  # type: ignore[arg-type]
        row = got[got["figure"] == f].iloc[0]
        assert (row["value"], row["low"], row["high"]) == (want.estimate, want.low, want.high)
