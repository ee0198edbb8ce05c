"""Guaranteed agreement: where must the machine defer to a human so that, on the units it decides itself, it
agrees with the humans at least `target` of the time, with probability at least 1 - delta?

The method is Learn-then-Test (Angelopoulos et al. 2021) as "Trust or Escalate" (Jung et al. 2024, arXiv
2407.18370) uses it for LLM judges. Each unit of a labeled calibration split has a confidence c (here: how far the
judge's score lies from its threshold, |score - threshold|) and agrees or not with the human. For a cut-off lam the
machine decides the units with c >= lam and defers the others (the band threshold +- lam of scores). The
hypothesis "the disagreement rate among decided units exceeds alpha = 1 - target" is tested for each lam with a
binomial p-value on the n decided calibration units with e disagreements:

    p(lam) = P(Binomial(n, alpha) <= e)              (exact; method "binomial", i.e. Clopper-Pearson)
    p(lam) = min(exp(-n h(e/n, alpha)), e * P(Binomial(n, alpha) <= ceil(e)))   (method "hoeffding_bentkus")

with h(a, b) = a log(a/b) + (1-a) log((1-a)/(1-b)) for a < b (else 0). Fixed-sequence testing goes from the
largest lam (fewest decided) down, rejecting while p <= delta, and stops at the first failure; the smallest rejected
lam is the band. The candidates are the calibration units' own confidences, in decreasing order, starting where at
least `min_decided` units are decided (the smallest n for which zero disagreements could pass: (1 - alpha)^n <=
delta). That order uses the scores only, never the labels, so the family-wise error stays at delta and, with
probability >= 1 - delta over the calibration split, the chosen band's disagreement rate on new units decided is at
most alpha. Exactness: p <= delta iff the one-sided Clopper-Pearson upper bound of the disagreement rate at level
1 - delta is <= alpha (`clopper_pearson_upper`). Coverage is the share of calibration units decided.

`score_band(..., sides=("both", "positive", "negative"))` also tries bands that let the machine make only its
positive (or only its negative) calls, each tested at delta / 3 (Bonferroni), keeping the one that decides most.

`decision_band` is the same for any machine decision with a confidence; `problem_band` applies it to a calibration
search problem that decides by a threshold on one score per item (calibration.search.problem.ScoredProblem), around
a config's threshold: what `concord calibrate --guarantee` certifies on its held-out calibration split
(app/services/guarantee.py), and `decided` is how the labeling queue's "deferred" order reads a stored band.

Pure numpy/scipy; no labels are used to choose the candidates, only to test them.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
from scipy.stats import beta, binom

METHODS: tuple[str, ...] = ("binomial", "hoeffding_bentkus")


def binomial_p_value(errors: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """P(Binomial(n, alpha) <= errors): the exact p-value of "disagreement rate > alpha" (1 where n = 0)."""
    e, n = np.asarray(errors, dtype=np.float64), np.asarray(n, dtype=np.float64)
    return np.where(n > 0, binom.cdf(e, np.maximum(n, 1), alpha), 1.0)


def hoeffding_bentkus_p_value(errors: np.ndarray | int, n: np.ndarray | int, alpha: float) -> np.ndarray:
    """Learn-then-Test's Hoeffding-Bentkus p-value of "risk > alpha" for a 0/1 loss (1 where n = 0)."""
    e, n = np.asarray(errors, dtype=np.float64), np.asarray(n, dtype=np.float64)
    nn = np.maximum(n, 1)
    r = e / nn
    with np.errstate(divide="ignore", invalid="ignore"):
        h = np.where(r > 0, r * np.log(r / alpha), 0.0) + np.where(r < 1, (1 - r) * np.log((1 - r) / (1 - alpha)), 0.0)
    hoeffding = np.exp(-nn * np.where(r < alpha, h, 0.0))
    bentkus = math.e * binom.cdf(np.ceil(e), nn, alpha)
    return np.where(n > 0, np.minimum(np.minimum(hoeffding, bentkus), 1.0), 1.0)


def clopper_pearson_upper(errors: np.ndarray | int, n: np.ndarray | int, delta: float) -> np.ndarray:
    """One-sided (1 - delta) Clopper-Pearson upper bound of a rate from `errors` out of `n` (1 where n = 0)."""
    e, n = np.asarray(errors, dtype=np.float64), np.asarray(n, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        ub = np.where(e >= n, 1.0, beta.ppf(1 - delta, e + 1, np.maximum(n - e, 1)))
    return np.where(n > 0, ub, 1.0)


def min_decided(target: float, delta: float) -> int:
    """The fewest decided units with which a band can pass at all: (1 - alpha)^n <= delta with no disagreement."""
    alpha = 1.0 - target
    return max(1, math.ceil(math.log(delta) / math.log(1.0 - alpha))) if 0 < alpha < 1 else 1


@dataclass(frozen=True)
class Band:
    """The certified cut-off: the machine decides units with confidence >= `lam` (inf: none)."""

    lam: float
    target: float
    delta: float
    method: str
    n: int  # calibration units
    n_decided: int
    errors: int  # disagreements among the decided calibration units
    p_value: float
    upper: float  # Clopper-Pearson upper bound of the disagreement rate among decided units, level 1 - delta
    threshold: float | None = None  # for score bands: the judge's threshold; the band is (t - lam, t + lam)
    high_means_positive: bool = True
    side: str = "both"  # score bands: which of the judge's calls it may decide ("both", "positive", "negative")
    curve: list[dict[str, float]] = field(default_factory=list)  # per candidate: lam, coverage, agreement, p_value

    @property
    def certified(self) -> bool:
        return self.n_decided > 0

    @property
    def coverage(self) -> float:
        return self.n_decided / self.n if self.n else 0.0

    @property
    def agreement(self) -> float | None:
        return 1.0 - self.errors / self.n_decided if self.n_decided else None

    @property
    def band(self) -> tuple[float, float] | None:
        """Scores the machine defers on, an open interval: (threshold - lam, threshold + lam) for both sides; for
        one side, everything short of threshold +- lam on that side (the other side's calls always deferred)."""
        if self.threshold is None:
            return None
        if not math.isfinite(self.lam):
            return (-math.inf, math.inf)
        lo, hi = self.threshold - self.lam, self.threshold + self.lam
        if self.side == "both":
            return (lo, hi)
        upper = (self.side == "positive") == self.high_means_positive  # the decided calls lie above the threshold
        return (-math.inf, hi) if upper else (lo, math.inf)

    def decides(self, confidence: np.ndarray) -> np.ndarray:
        """Which units (by confidence) the machine decides; for a one-sided score band use `decides_scores`."""
        return np.asarray(confidence, dtype=np.float64) >= self.lam

    def decides_scores(self, scores: np.ndarray) -> np.ndarray:
        """Which units (by score) a score band lets the machine decide: those outside the deferral interval."""
        band = self.band
        if band is None:
            raise ValueError("not a score band: use decides(confidence)")
        s = np.asarray(scores, dtype=np.float64)
        return ~((s > band[0]) & (s < band[1]))

    def sentence(self) -> str:
        guarantee = f"{round(100 * (1 - self.delta))}% guarantee"
        if not self.certified:
            return f"the machine may decide no unit at >= {self.target:.0%} agreement ({guarantee})"
        only = "" if self.side == "both" else f", its {self.side} calls only"
        return (f"the machine may decide {self.coverage:.0%} of units at >= {self.target:.0%} agreement "
                f"({guarantee}{only})")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d.update(lam=None if not math.isfinite(self.lam) else self.lam, coverage=self.coverage,
                 agreement=self.agreement, band=None if self.band is None else list(self.band),
                 certified=self.certified, sentence=self.sentence())
        return d


def fixed_sequence(confidence: np.ndarray, agree: np.ndarray, *, target: float = 0.9, delta: float = 0.05,
                   method: str = "binomial", curve: bool = True) -> Band:
    """The Learn-then-Test band for units with `confidence` (higher: more sure) and `agree` (0/1: the machine's
    decision equals the human's) on a calibration split. See the module docstring."""
    if not 0 < target < 1:
        raise ValueError(f"target: expected a share in (0, 1), got {target!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta: expected a probability in (0, 1), got {delta!r}")
    if method not in METHODS:
        raise ValueError(f"method: expected one of {', '.join(METHODS)}, got {method!r}")
    c = np.asarray(confidence, dtype=np.float64)
    a = np.asarray(agree, dtype=bool)
    if c.shape != a.shape or c.ndim != 1:
        raise ValueError(f"confidence and agree: expected two 1-d arrays of equal length, got {c.shape} / {a.shape}")
    alpha = 1.0 - target
    n = c.size
    order = np.argsort(-c, kind="stable")
    cs, errs = c[order], np.cumsum(~a[order])
    last = np.r_[cs[1:] != cs[:-1], True] if n else np.zeros(0, dtype=bool)  # end of each run of equal confidences
    lams, n_dec, e_dec = cs[last], np.flatnonzero(last) + 1, errs[last]
    pv = (binomial_p_value if method == "binomial" else hoeffding_bentkus_p_value)(e_dec, n_dec, alpha)
    start = np.searchsorted(n_dec, min_decided(target, delta))  # label-free: the first candidate that could pass
    fails = np.flatnonzero(pv[start:] > delta)
    stop = start + (fails[0] if fails.size else lams.size - start)  # candidates start..stop-1 are rejected
    table = [{"lam": float(l), "coverage": float(k / n), "agreement": float(1 - e / k), "p_value": float(p)}
             for l, k, e, p in zip(lams, n_dec, e_dec, pv)] if curve else []
    if stop <= start:
        return Band(math.inf, target, delta, method, n, 0, 0, 1.0, 1.0, curve=table)
    i = stop - 1
    upper = float(clopper_pearson_upper(e_dec[i], n_dec[i], delta))
    return Band(float(lams[i]), target, delta, method, n, int(n_dec[i]), int(e_dec[i]), float(pv[i]), upper,
                curve=table)


SIDES: tuple[str, ...] = ("both", "positive", "negative")


def decision_band(confidence: np.ndarray, decision: np.ndarray, human: np.ndarray, *, target: float = 0.9,
                  delta: float = 0.05, method: str = "binomial", sides: tuple[str, ...] = ("both",)) -> Band:
    """The band for units whose machine `decision` (0/1) comes with a `confidence` (higher: further from the
    decision's boundary) against the 0/1 `human` reference: the Learn-then-Test band of `fixed_sequence`, for each
    of `sides` ("both", or only the machine's "positive" / "negative" calls) at delta / len(sides) (Bonferroni),
    keeping the one that decides the most units, so the guarantee holds for the choice."""
    bad = [x for x in sides if x not in SIDES]
    if not sides or bad:
        raise ValueError(f"sides: expected some of {', '.join(SIDES)}, got {list(sides)!r}")
    conf = np.asarray(confidence, dtype=np.float64)
    d = np.asarray(decision).astype(bool)
    agree = d == (np.asarray(human) == 1)
    best: Band | None = None
    for side in sides:
        keep = np.ones(conf.size, dtype=bool) if side == "both" else d if side == "positive" else ~d
        band = fixed_sequence(conf[keep], agree[keep], target=target, delta=delta / len(sides), method=method)
        share = keep.sum() / max(1, conf.size)  # the curve's coverage as a share of all units
        curve = [{**c, "coverage": c["coverage"] * share} for c in band.curve]
        band = replace(band, n=int(conf.size), delta=delta, side=side, curve=curve)
        if best is None or band.n_decided > best.n_decided:
            best = band
    assert best is not None
    return best


def decided(lam: float | None, side: str, confidence: np.ndarray, decision: np.ndarray) -> np.ndarray:
    """Which units a stored band (`lam`, None or inf: none; `side`) lets the machine decide, from their confidence
    and the machine's 0/1 decision; the others are deferred to a human (the labeling queue's "deferred" order)."""
    conf = np.asarray(confidence, dtype=np.float64)
    if lam is None or not math.isfinite(lam):
        return np.zeros(conf.shape, dtype=bool)
    d = np.asarray(decision).astype(bool)
    ok = conf >= lam
    return ok if side == "both" else ok & d if side == "positive" else ok & ~d


def score_band(scores: np.ndarray, human: np.ndarray, *, threshold: float, high_means_positive: bool = True,
               target: float = 0.9, delta: float = 0.05, method: str = "binomial",
               sides: tuple[str, ...] = ("both",)) -> Band:
    """The band of scores around `threshold` where a judge must defer: its decision is score >= threshold (or
    score < threshold when high means negative), its confidence |score - threshold|, `human` the 0/1 reference.

    `sides`: which calls the machine may make: "both", or only its "positive" / "negative" calls (a judge that is
    reliable when it flags but not when it clears). With several, each is tested at delta / len(sides)
    (Bonferroni) and the one deciding the most units is kept, so the guarantee holds for the choice."""
    s = np.asarray(scores, dtype=np.float64)
    d = s >= threshold if high_means_positive else s < threshold
    band = decision_band(np.abs(s - threshold), d, human, target=target, delta=delta, method=method, sides=sides)
    return replace(band, threshold=float(threshold), high_means_positive=high_means_positive)


# -- a search problem's band (calibration.search.problem.ScoredProblem) ---------------------------------------------
@dataclass(frozen=True)
class Margins:
    """Per item of a scored problem under one config: the machine's 0/1 decision, its confidence |score - t|,
    and whether the item has a score at all (items without one are always deferred)."""

    decision: np.ndarray
    confidence: np.ndarray
    scored: np.ndarray
    threshold: float
    high_means_positive: bool | None  # None: the items mix orientations (judges sharing one threshold)


def margins(problem: Any, config: Mapping[str, Any]) -> Margins:
    """The decisions and confidences of a ScoredProblem's items under `config` (a point of its space)."""
    cols = {c: np.asarray([config[c]]) for c in problem.space.columns}
    decision = np.asarray(problem.decide(cols))[0].astype(np.int8)
    scores, high = problem.item_scores()
    scores = np.asarray(scores, dtype=np.float64)
    t = float(config[problem.threshold_dim])
    high = np.asarray(high, dtype=bool)
    orient = bool(high[0]) if high.size and (high == high[0]).all() else None
    scored = ~np.isnan(scores)
    return Margins(decision, np.where(scored, np.abs(scores - t), -np.inf), scored, t, orient)


def problem_band(problem: Any, config: Mapping[str, Any], *, target: float = 0.9, delta: float = 0.05,
                 method: str = "binomial", sides: tuple[str, ...] = ("both",)) -> Band:
    """The band certified on a ScoredProblem built over a calibration split (labeled items only), around the
    threshold of `config`; items without a score are left out (the machine never decides them)."""
    m = margins(problem, config)
    ok = m.scored
    band = decision_band(m.confidence[ok], m.decision[ok], np.asarray(problem.human)[ok], target=target,
                         delta=delta, method=method, sides=sides)
    return replace(band, threshold=m.threshold, high_means_positive=True if m.high_means_positive is None
                   else m.high_means_positive)
