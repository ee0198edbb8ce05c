"""How many more labels (issue #29): the sample size at which an interval's half-width reaches a target, and at
which the calibration gain's interval would exclude 0 if the present gain holds.

Method: the 1/sqrt(n) scaling of the bootstrap half-width, checked by subsampling. A percentile bootstrap at a
larger size m drawn from the labels so far (m units with replacement) resamples the same empirical distribution, so
for a smooth statistic its spread is the present one times sqrt(n / m): it would cost m-sized replicates and add
nothing the scaling does not already say. What can fail is the scaling itself (few units, a kappa near its bounds,
rare categories), and that the data can show: the half-width measured on subsamples of n/4, n/2 and n units
(without replacement) gives the exponent actually seen, h ~ n^-b, fitted on the log-log points. The plan uses
b = 1/2 and reports the fitted b; a fitted b below `SLOW` says the half-width shrinks slower than the plan assumes
(plan for more), one above `FAST` that the plan is on the safe side.

Annotators per unit are carried forward as they are: the plan is for more units labeled the way the present ones
were. Pure: numbers in, numbers out.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

EXPONENT = 0.5
SLOW = 0.4
FAST = 0.75
FRACTIONS = (0.25, 0.5, 1.0)


def scaled_halfwidth(halfwidth: float, n: int, m: int, exponent: float = EXPONENT) -> float:
    """The half-width expected at m units from `halfwidth` at n."""
    return halfwidth * (n / m) ** exponent


def units_for_halfwidth(halfwidth: float, n: int, target: float, exponent: float = EXPONENT) -> int | None:
    """The smallest m with scaled_halfwidth(halfwidth, n, m) <= target (n itself when already reached); None when
    the half-width is undefined."""
    if target <= 0:
        raise ValueError(f"target must be positive, got {target}")
    if n < 1 or not math.isfinite(halfwidth):
        return None
    if halfwidth <= target:
        return n
    return max(n, math.ceil(n * (halfwidth / target) ** (1 / exponent) - 1e-9))


def units_for_gain(estimate: float, low: float, n: int, exponent: float = EXPONENT) -> int | None:
    """The smallest m at which the gain's lower bound is above 0 if the gain stays `estimate` and the distance from
    the estimate to the lower bound shrinks as (n / m)^exponent; n when it already is; None when the present gain
    is not positive (no number of units shows a gain that is not there) or undefined."""
    if n < 1 or not (math.isfinite(estimate) and math.isfinite(low)) or estimate <= 0:
        return None
    if low > 0:
        return n
    below = estimate - low  # > 0: low <= 0 < estimate
    return max(n, math.floor(n * (below / estimate) ** (1 / exponent)) + 1)


def fit_exponent(sizes: Sequence[float], halfwidths: Sequence[float]) -> float:
    """b of h ~ n^-b, least squares on log h against log n over the finite positive points; NaN with fewer than two
    distinct sizes."""
    x, y = np.asarray(sizes, dtype=float), np.asarray(halfwidths, dtype=float)
    ok = np.isfinite(y) & (y > 0) & (x > 0)
    if np.unique(x[ok]).size < 2:
        return math.nan
    slope = np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0]
    return float(-slope)


def subsample_halfwidths(n: int, halfwidth_of: Callable[[np.ndarray], float], *, fractions: Sequence[float] = FRACTIONS,
                         repeats: int = 2, seed: int = 0, min_units: int = 10) -> list[tuple[int, float]]:
    """(size, mean half-width) at each fraction of the n units: `halfwidth_of(indices)` on `repeats` random subsets
    drawn without replacement (one at the full size); sizes below `min_units` are skipped."""
    rng = np.random.default_rng(seed)
    out = []
    for f in fractions:
        m = round(f * n)
        if m < min_units:
            continue
        draws = 1 if m >= n else repeats
        values = [halfwidth_of(np.sort(rng.choice(n, size=m, replace=False))) for _ in range(draws)]
        finite = [v for v in values if math.isfinite(v)]
        out.append((m, float(np.mean(finite)) if finite else math.nan))
    return out
