"""calibration.guarantee: the bound's arithmetic against a hand-worked case, its agreement with Clopper-Pearson,
and a simulation that the guarantee holds over 200 random calibration splits."""
from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.guarantee import (binomial_p_value, clopper_pearson_upper, fixed_sequence,
                                   hoeffding_bentkus_p_value, min_decided, score_band)


def test_binomial_p_value_by_hand() -> None:
    # no disagreement among n decided: P(Bin(n, 0.1) <= 0) = 0.9^n
    assert binomial_p_value(0, 20, 0.1) == pytest.approx(0.9**20)  # 0.1216: not below 0.05
    assert binomial_p_value(0, 29, 0.1) == pytest.approx(0.9**29)  # 0.0471: below 0.05
    # one disagreement among 40: 0.9^40 + 40 * 0.1 * 0.9^39 = 0.0805
    assert binomial_p_value(1, 40, 0.1) == pytest.approx(0.9**40 + 40 * 0.1 * 0.9**39)
    assert min_decided(0.9, 0.05) == 29  # the smallest n with 0.9^n <= 0.05
    assert binomial_p_value(0, 0, 0.1) == 1.0


def test_hoeffding_bentkus_by_hand_and_never_below_the_exact_p_value() -> None:
    # 2 disagreements in 100 at alpha 0.1: Hoeffding exp(-100 h(0.02, 0.1)), Bentkus e P(Bin <= 2)
    h = 0.02 * math.log(0.02 / 0.1) + 0.98 * math.log(0.98 / 0.9)
    exact = 0.9**100 + 100 * 0.1 * 0.9**99 + 4950 * 0.01 * 0.9**98
    want = min(math.exp(-100 * h), math.e * exact)
    assert hoeffding_bentkus_p_value(2, 100, 0.1) == pytest.approx(want)
    e, n = np.arange(0, 30), np.full(30, 200)
    assert np.all(hoeffding_bentkus_p_value(e, n, 0.1) >= binomial_p_value(e, n, 0.1) * (1 - 1e-9))  # = at e 0


def test_p_value_below_delta_iff_clopper_pearson_bound_below_alpha() -> None:
    e = np.arange(0, 40)
    for n in (30, 100, 400):
        ok_p = binomial_p_value(e[e <= n], n, 0.1) <= 0.05
        ok_cp = clopper_pearson_upper(e[e <= n], n, 0.05) <= 0.1
        assert np.array_equal(ok_p, ok_cp)


def test_fixed_sequence_hand_worked_case() -> None:
    """40 units: the 30 most confident all agree, then 10 that all disagree. At target 0.9, delta 0.05 the first
    candidate (n >= 29) is n = 29 (p 0.047, pass), n = 30 passes (0.042), n = 31 has one disagreement
    (p = 0.9^31 + 31 0.1 0.9^30 = 0.18): stop. The band decides the 30."""
    conf = np.arange(40, 0, -1, dtype=float)
    agree = np.r_[np.ones(30, bool), np.zeros(10, bool)]
    band = fixed_sequence(conf, agree, target=0.9, delta=0.05)
    assert band.n_decided == 30 and band.errors == 0 and band.lam == 11.0
    assert band.p_value == pytest.approx(0.9**30) and band.coverage == pytest.approx(0.75)
    assert band.upper == pytest.approx(1 - 0.05 ** (1 / 30))  # Clopper-Pearson with no error: 1 - delta^(1/n)
    assert band.curve[30]["p_value"] == pytest.approx(0.9**31 + 31 * 0.1 * 0.9**30)
    assert "75% of units at >= 90% agreement (95% guarantee)" in band.sentence()
    # too few units to certify anything: the machine decides none
    none = fixed_sequence(conf[:20], agree[:20], target=0.9, delta=0.05)
    assert not none.certified and none.coverage == 0 and math.isinf(none.lam)


def plain_fixed_sequence(conf: list[float], agree: list[bool], target: float, delta: float) -> int:
    """The decided count Learn-then-Test picks, one candidate at a time with scipy's binomial."""
    from scipy.stats import binom

    chosen = 0
    for lam in sorted(set(conf), reverse=True):
        decided = [a for c, a in zip(conf, agree) if c >= lam]
        if len(decided) < min_decided(target, delta):
            continue
        if binom.cdf(decided.count(False), len(decided), 1 - target) > delta:
            break
        chosen = len(decided)
    return chosen


def test_score_band_defers_around_the_threshold_for_both_orientations() -> None:
    s = np.linspace(0, 1, 201)
    human = (s >= 0.5).astype(int)
    human[(s > 0.4) & (s < 0.6)] = 1 - human[(s > 0.4) & (s < 0.6)]  # the judge is wrong near its threshold
    band = score_band(s, human, threshold=0.5, target=0.95, delta=0.05)
    lo, hi = band.band
    assert 0.38 <= lo < 0.5 < hi <= 0.62 and band.agreement >= 0.95 and band.upper <= 0.05
    conf = np.abs(s - 0.5)
    assert band.n_decided == plain_fixed_sequence(conf.tolist(), ((s >= 0.5) == (human == 1)).tolist(), 0.95, 0.05)
    # the same judge as a consistency score (high = negative): 1 - s, same humans, same band up to the tie at 0.5
    flipped = score_band(1 - s, human, threshold=0.5, high_means_positive=False, target=0.95, delta=0.05)
    assert abs(flipped.n_decided - band.n_decided) <= 1
    with pytest.raises(ValueError, match="target"):
        fixed_sequence(s, human == 1, target=1.5)


def test_guarantee_holds_over_random_calibration_splits() -> None:
    """A population whose judge errs more often near its threshold; 200 calibration splits of 400 units. The
    chosen band's true agreement on the population units it decides falls below the target in at most delta of
    the splits (plus binomial slack: sd of 200 Bernoulli(0.05) shares is 0.015)."""
    rng = np.random.default_rng(0)
    N, target, delta = 20_000, 0.9, 0.05
    s = rng.uniform(0, 1, N)
    p_err = 0.45 * np.exp(-((s - 0.5) / 0.15) ** 2)  # 45% wrong at the threshold, ~0 far away
    agree = rng.uniform(size=N) >= p_err
    conf = np.abs(s - 0.5)
    order = np.argsort(-conf)
    cum_ok = np.cumsum(agree[order])
    sorted_conf = conf[order]
    violations, coverages = 0, []
    for _ in range(200):
        idx = rng.choice(N, 400, replace=False)
        band = fixed_sequence(conf[idx], agree[idx], target=target, delta=delta, curve=False)
        if not band.certified:
            continue
        k = int(np.searchsorted(-sorted_conf, -band.lam, side="right"))  # population units with conf >= lam
        violations += (cum_ok[k - 1] / k) < target
        coverages.append(k / N)
    assert violations / 200 <= delta + 0.03
    assert np.mean(coverages) > 0.3  # and it is not vacuous


def test_one_sided_band_when_only_one_kind_of_call_is_reliable() -> None:
    """A judge whose positive calls (score >= 0.5) are always right and whose negative calls are right half the
    time: no two-sided band reaches 0.9, the positive side does, tested at delta / 3."""
    rng = np.random.default_rng(3)
    s = rng.uniform(0, 1, 600)
    human = np.where(s >= 0.5, 1, rng.integers(0, 2, 600))
    both = score_band(s, human, threshold=0.5, target=0.9, delta=0.05)
    one = score_band(s, human, threshold=0.5, target=0.9, delta=0.05, sides=("both", "positive", "negative"))
    assert one.side == "positive" and one.n_decided > both.n_decided and one.agreement == 1.0
    lo, hi = one.band
    assert lo == -math.inf and 0.5 <= hi < 0.6
    assert np.array_equal(one.decides_scores(s), s >= hi)
    assert one.n_decided == plain_fixed_sequence(np.abs(s - 0.5)[s >= 0.5].tolist(), [True] * int((s >= 0.5).sum()),
                                                 0.9, 0.05 / 3)
    assert "its positive calls only" in one.sentence() and one.coverage == pytest.approx(one.n_decided / 600)
    # the same judge read as a consistency score: its "positive" calls are the low scores
    flip = score_band(1 - s, human, threshold=0.5, high_means_positive=False, target=0.9, delta=0.05,
                      sides=("positive",))
    assert flip.band[1] == math.inf and np.array_equal(flip.decides_scores(1 - s), (1 - s) <= flip.band[0])
    with pytest.raises(ValueError, match="sides"):
        score_band(s, human, threshold=0.5, sides=("left",))
