"""Agreement statistics, checked against hand-computed values."""
from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.agreement import (
    bootstrap_ci,
    cohen_kappa,
    kendall,
    krippendorff_alpha,
    mcc,
    spearman,
)
from calibration.schemes.rubric.agreement import align_excerpts, rubric_agreement
from calibration.schemes.rubric import MetricTrait

TRAIT = MetricTrait(name="cov", metrics=["precision", "recall", "f1"], tp_instructions=["x", "y"])


def test_cohen_kappa_hand_computed() -> None:
    # po = 3/4, pe = (2*1 + 1*2 + 1*1)/16 = 5/16 -> kappa = (12-5)/(16-5) = 7/11
    a = ["tp", "tp", "fp", "fn"]
    b = ["tp", "fp", "fp", "fn"]
    assert cohen_kappa(a, b) == pytest.approx(7 / 11)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa(["tp", "tp"], ["tp", "tp"]))
    with pytest.raises(ValueError):
        cohen_kappa(a, b[:3])


def test_mcc_and_correlations_hand_computed() -> None:
    # tp=1 fn=1 tn=2 fp=0: (1*2 - 0*1) / sqrt(1*2*2*3)
    assert mcc([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(2 / math.sqrt(12))
    # d^2 sum = 2 -> rho = 1 - 6*2/(4*15) = 0.8; 5 concordant, 1 discordant of 6 pairs -> tau = 4/6
    assert spearman([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert kendall([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall([1, 2, 3], [5, 5, 5]))


def test_krippendorff_alpha_small_hand_computed_with_missing() -> None:
    # coincidences o = [[2,1],[1,2]], n_c = (3,3), n = 6: alpha = 1 - 5 * 2 / 18 = 4/9.
    # The fourth unit has a single rating, so it is not pairable and must not change the result.
    data = [[1, 1, 2, 1], [1, 2, 2, None]]
    assert krippendorff_alpha(data) == pytest.approx(4 / 9)
    assert krippendorff_alpha([["a", "b"], ["a", "b"]]) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([["a", "a"], ["a", "a"]]))


def test_krippendorff_alpha_reference_example() -> None:
    # Krippendorff (2011), "Computing Krippendorff's alpha-reliability": 4 observers, 12 units, missing values.
    nan = np.nan
    data = np.array([
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ])
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.849, abs=5e-4)
    with pytest.raises(ValueError):
        krippendorff_alpha([[1, 2], [1]])


def test_bootstrap_ci_is_seeded_and_resamples_units() -> None:
    rng = np.random.default_rng(1)
    values = (rng.random(400) < 0.3).astype(float)
    ci = bootstrap_ci(values, np.mean, n_boot=2000, seed=3)
    assert ci.estimate == pytest.approx(values.mean())
    half = 1.96 * math.sqrt(values.mean() * (1 - values.mean()) / len(values))  # normal approximation
    assert ci.low == pytest.approx(ci.estimate - half, abs=0.01)
    assert ci.high == pytest.approx(ci.estimate + half, abs=0.01)
    assert bootstrap_ci(values, np.mean, n_boot=2000, seed=3) == ci
    assert bootstrap_ci(values, np.mean, n_boot=2000, seed=4) != ci
    # groups: a sample's items travel together; constant groups give a degenerate interval
    groups = [[1.0, 1.0], [1.0, 1.0, 1.0]]
    flat = bootstrap_ci(groups, lambda gs: float(np.mean([x for g in gs for x in g])), n_boot=50)
    assert (flat.low, flat.high, flat.n_valid) == (1.0, 1.0, 50)
    # pairs: kappa per resample; NaN resamples (single label) are left out of the interval
    pairs = [("a", "a"), ("b", "b"), ("a", "b"), ("b", "b")]
    k = bootstrap_ci(pairs, lambda ps: cohen_kappa([p[0] for p in ps], [p[1] for p in ps]), n_boot=300)
    assert k.estimate == pytest.approx(0.5)
    assert -1.0 <= k.low <= k.estimate <= k.high <= 1.0 and 0 < k.n_valid < 300
    with pytest.raises(ValueError):
        bootstrap_ci([], np.mean)


def test_align_excerpts_by_casefolded_text() -> None:
    llm = {"tp": ["BCL2 gene", "bcl2 GENE", "Z"], "fp": ["Z"]}
    human = {"tp": ["bcl2 gene"], "fp": ["Z", "new"]}
    aligned = align_excerpts(TRAIT, llm, human)
    assert aligned == [("BCL2 gene", "tp", "tp"), ("Z", "fp", "fp"), ("Z", "tp", "absent"), ("new", "absent", "fp")]
    no_dedupe = MetricTrait(name="cov", metrics=["recall"], tp_instructions=["x"], repeated_extraction=False)
    assert ("bcl2 GENE", "tp", "absent") not in align_excerpts(no_dedupe, llm, human)
    assert ("BCL2 gene", "tp", "absent") in align_excerpts(no_dedupe, llm, human)


def test_rubric_agreement_hand_computed() -> None:
    llm1 = {"tp": ["A", "B", "C"], "fn": ["X"], "fp": ["D"], "tn": []}
    human1 = {"tp": ["a", "B", "E"], "fn": ["X"], "fp": ["C", "D"], "tn": []}  # C moved tp->fp, E added
    same = {"tp": ["Q"], "fn": [], "fp": [], "tn": []}
    other = MetricTrait(name="other", metrics=["recall"], tp_instructions=["x"])
    out = rubric_agreement([(llm1, human1, TRAIT), (same, same, TRAIT), ({"tp": ["k"]}, {"fn": ["k"]}, other)])
    cov = out["cov"]
    assert cov["n_samples"] == 2 and cov["n_items"] == 7 and cov["n_llm_items"] == 6
    assert cov["kept_share"] == pytest.approx(5 / 6)
    # labels llm [tp tp tp fn fp absent tp] vs human [tp tp fp fn fp tp tp]: po = 5/7, pe = 19/49 -> 8/15
    assert cov["kappa"] == pytest.approx(8 / 15)
    # sample 1: llm P=R=F1=.75; human P=.6 R=.75 F1=2/3. Sample 2: identical. Deltas averaged over both.
    assert cov["metric_deltas"] == pytest.approx({"precision": 0.075, "recall": 0.0, "f1": (0.75 - 2 / 3) / 2})
    assert cov["metrics_human"]["precision"] == pytest.approx(0.8)
    assert out["other"]["kept_share"] == 0.0
    assert out["other"]["metric_deltas"] == {"recall": 1.0}


@pytest.mark.parametrize("n, distinct", [(0, 1), (1, 1), (500, 40), (500, 500)])
def test_resample_sums_equal_the_counts_product(n: int, distinct: int) -> None:
    """Unless classes of equal rows are few, resample_sums gives exactly the sums of resample_counts' draws times
    the per-unit counts (units of equal rows counted together, or every unit when most differ)."""
    from calibration.agreement import resample_counts, resample_sums

    rng = np.random.default_rng(3)
    per_unit = rng.integers(0, 5, size=(distinct, 6)).astype(float)[rng.integers(0, distinct, size=n)]
    expected = np.concatenate([w @ per_unit for w in resample_counts(n, 45, seed=9, chunk=10)]) if n else np.zeros((45, 6))
    assert np.array_equal(resample_sums(per_unit, 45, seed=9, chunk=10), expected)


def test_resample_indices_are_the_int64_draws() -> None:
    """Drawn as int32 (half the memory) with the values numpy's int64 draw gives: intervals do not move."""
    from calibration.agreement import resample_indices

    for n in (1, 2, 7, 1000, 100_003):
        idx = resample_indices(n, 4, np.random.default_rng(11))
        assert idx.dtype == np.int32
        assert np.array_equal(idx, np.random.default_rng(11).integers(0, n, size=(4, n), dtype=np.int64))


def test_resample_chunks_drawn_ahead_on_a_thread_are_the_same_stream() -> None:
    """Large chunks are drawn one ahead on a thread (numpy draws without the GIL); they must be the replicates the
    one generator gives in order, as small chunks drawn inline are."""
    from calibration.agreement import _PREFETCH_FROM, resample_index_chunks

    n = _PREFETCH_FROM // 16 + 1  # chunk 16: over the threshold
    drawn = list(resample_index_chunks(n, 50, seed=3, chunk=16))
    rng = np.random.default_rng(3)
    expected = [rng.integers(0, n, size=(size, n), dtype=np.int32) for size in (16, 16, 16, 2)]
    assert [d.shape for d in drawn] == [e.shape for e in expected]
    assert all(np.array_equal(d, e) for d, e in zip(drawn, expected))
    small = list(resample_index_chunks(1000, 50, seed=3, chunk=16))  # inline path, same stream
    rng = np.random.default_rng(3)
    assert all(np.array_equal(d, rng.integers(0, 1000, size=d.shape, dtype=np.int32)) for d in small)


def test_resample_sums_of_few_classes_draw_the_bootstrap_distribution() -> None:
    """Few classes of equal rows: class counts are drawn as a multinomial. Its replicates must follow the plain
    bootstrap's distribution (every unit drawn with replacement): same mean and spread of every column sum and
    the same shape (two-sample Kolmogorov-Smirnov), against a plain loop over drawn units; seeded, so exact."""
    from scipy.stats import ks_2samp

    from calibration.agreement import MULTINOMIAL_SHARE, resample_sums

    rng = np.random.default_rng(5)
    classes = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [2, 1, 3], [5, 0, 2]], dtype=float)
    n = 1200
    per_unit = classes[rng.choice(5, size=n, p=[0.5, 0.2, 0.15, 0.1, 0.05])]
    assert 5 * MULTINOMIAL_SHARE <= n  # the multinomial path
    reps = 3000
    drawn = resample_sums(per_unit, reps, seed=1)
    assert np.array_equal(drawn, resample_sums(per_unit, reps, seed=1))
    assert not np.array_equal(drawn, resample_sums(per_unit, reps, seed=2))
    plain = np.stack([per_unit[idx].sum(axis=0) for idx in np.random.default_rng(9).integers(0, n, size=(reps, n))])
    theory_sd = np.sqrt(n) * per_unit.std(axis=0)  # the sd of a sum of n draws
    assert np.all(np.abs(drawn.mean(axis=0) - per_unit.sum(axis=0)) < 4 * theory_sd / np.sqrt(reps))
    assert np.allclose(drawn.std(axis=0), theory_sd, rtol=0.06)
    assert np.allclose(plain.std(axis=0), theory_sd, rtol=0.06)
    for j in range(3):
        assert ks_2samp(drawn[:, j], plain[:, j]).pvalue > 1e-3
    assert np.array_equal(drawn.sum(axis=1) % 1, np.zeros(reps))  # integer counts times integer rows
