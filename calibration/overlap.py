"""Adaptive overlap (issue #29): every unit gets one annotator; a second (and third) only where the unit is uncertain.

A fixed overlap of 2 spends a second label on every unit, also where one human and the machine already agree far
from the metric's decision boundary. Here a unit's *confidence* is the posterior mean share of annotators who would
agree with its present majority label: a Beta(1, 1) prior, the humans' labels as votes, and the machine as one more
vote when it has a label and its score is not near the decision boundary (a machine on the boundary says nothing):

    confidence = (1 + humans with the majority + [machine far and agrees]) / (2 + humans + [machine far])

One human alone: 2/3; with the machine agreeing far from the boundary: 3/4; with it disagreeing: 1/2; two humans
who agree: 3/4 (4/5 with the machine, 3/5 against it); two who disagree: 1/2. A unit below `target` (default 3/4)
whose assigned annotators have all decided gets one more annotator, most uncertain first (ties in a seeded random
order), while it has fewer than `max_overlap` and the `budget` of further assignments lasts.

Agreement from an adaptive design: units were given a second label *because* they looked uncertain, so the plain
agreement over the units with two labels is biased low. `stratified_kappa` undoes this: the second-label decision
depends only on the signals above, so within a stratum of equal signals the units that got a second label are a
random subset (the seeded tie order), and the pair agreement is estimated per stratum and weighted by the stratum's
share of all units (post-stratification). `audit` gives a random share of the confident units a second label too,
so every stratum is observed. Only a unit's first two labels enter it: a third label is given *after* a
disagreement, so counting it would bias the estimate again. Pure: no I/O.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from calibration.agreement import estimate_interval, resample_sums

TARGET = 0.75
MAX_OVERLAP = 3


@dataclass(frozen=True, slots=True)
class Evidence:
    """What is known of one unit: the humans' labels so far (one hashable per annotator who decided), how many
    assigned annotators have not decided yet, the machine's label (None: none) and whether its score is near the
    metric's decision boundary."""

    labels: tuple[Hashable, ...] = ()
    pending: int = 0
    machine: Hashable | None = None
    near_boundary: bool = False

    @property
    def majority(self) -> Hashable | None:
        """The most frequent human label (ties: the first given); None without labels."""
        if not self.labels:
            return None
        counts = Counter(self.labels)
        top = max(counts.values())
        return next(x for x in self.labels if counts[x] == top)


def confidence(e: Evidence) -> float:
    """The posterior mean share of annotators who would agree with the majority (module docstring); NaN without
    any human label (the unit needs its first annotator, not a confidence)."""
    if not e.labels:
        return math.nan
    majority = e.majority
    agree = sum(1 for x in e.labels if x == majority)
    machine_counts = e.machine is not None and not e.near_boundary
    return (1 + agree + int(machine_counts and e.machine == majority)) / (2 + len(e.labels) + int(machine_counts))


def reasons(e: Evidence) -> list[str]:
    """Why a unit is uncertain, in words (empty when nothing speaks against its majority)."""
    out = []
    if len(set(e.labels)) > 1:
        out.append("annotators disagree")
    if e.machine is not None and e.labels and e.machine != e.majority:
        out.append("the machine disagrees")
    if e.near_boundary:
        out.append("near the decision boundary")
    return out


def stratum(e: Evidence) -> tuple[object, ...]:
    """The signals a second-label decision rests on: the first label, the machine's relation to it, the boundary."""
    first = e.labels[0] if e.labels else None
    return (first, None if e.machine is None else e.machine == first, e.near_boundary)


def next_round(units: Sequence[Evidence], *, target: float = TARGET, max_overlap: int = MAX_OVERLAP,
               budget: int | None = None, audit: float = 0.0, seed: int = 0) -> list[int]:
    """Indices of the units that get one more annotator now: an `audit` share of the confident single-label units
    drawn at random (first, so that agreement stays estimable in every stratum whatever the budget), then the
    uncertain ones (confidence below `target`, every assigned annotator decided, fewer than `max_overlap` labels)
    from the least confident; at most `budget` in all (None: no limit)."""
    if not 0.5 < target <= 1:
        raise ValueError(f"target must be in (0.5, 1], got {target}")
    if max_overlap < 1:
        raise ValueError(f"max_overlap must be at least 1, got {max_overlap}")
    if not 0 <= audit <= 1:
        raise ValueError(f"audit must be in [0, 1], got {audit}")
    if budget is not None and budget < 0:
        raise ValueError(f"budget must not be negative, got {budget}")
    rng = np.random.default_rng(seed)
    tie = rng.random(len(units))
    ready = [i for i, e in enumerate(units) if e.labels and not e.pending and len(e.labels) < max_overlap]
    conf = {i: confidence(units[i]) for i in ready}
    uncertain = sorted((i for i in ready if conf[i] < target), key=lambda i: (conf[i], tie[i]))
    audited = [i for i in ready if conf[i] >= target and len(units[i].labels) == 1 and tie[i] < audit]
    chosen = sorted(audited, key=lambda i: tie[i]) + uncertain
    return chosen if budget is None else chosen[:budget]


def stratified_kappa(first: Sequence[Hashable], second: Sequence[Hashable | None], strata: Sequence[Hashable],
                     *, n_boot: int = 1000, seed: int = 0, ci: float = 0.95) -> dict[str, float | int]:
    """Cohen's kappa between a unit's first and second annotator, post-stratified (module docstring).

    `first[u]`: every unit's first label; `second[u]`: its second label or None; `strata[u]`: the signals its
    second-label decision rested on. P_o = sum_h W_h (agreements / pairs in h) over the strata with a pair (the
    weights renormalised over them), P_e = sum_c p_c^2 with p_c the share of c among the first labels (a random
    annotator's label on every unit). With every unit paired and one stratum this is the kappa of a fixed overlap
    of 2 with P_e from the first labels. The interval: percentile bootstrap over units (strata and weights drawn
    again in each replicate). Returns {estimate, low, high, n_valid, pairs, strata_unobserved}."""
    n = len(first)
    if not (len(second) == len(strata) == n) or n == 0:
        raise ValueError("first, second and strata need one entry per unit, and at least one unit")
    cats = {c: k for k, c in enumerate(dict.fromkeys(first))}
    hs = {h: k for k, h in enumerate(dict.fromkeys(strata))}
    n_h, n_c = len(hs), len(cats)
    per_unit = np.zeros((n, 3 * n_h + n_c))
    for u in range(n):
        h = hs[strata[u]]
        per_unit[u, h] = 1.0
        if second[u] is not None:
            per_unit[u, n_h + h] = 1.0
            per_unit[u, 2 * n_h + h] = float(second[u] == first[u])
        per_unit[u, 3 * n_h + cats[first[u]]] = 1.0

    def kappa(sums: np.ndarray) -> np.ndarray:
        units, pairs, agree = sums[..., :n_h], sums[..., n_h:2 * n_h], sums[..., 2 * n_h:3 * n_h]
        seen = pairs > 0
        weight = np.where(seen, units, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            p_o = (weight * np.where(seen, agree / np.where(seen, pairs, 1), 0)).sum(-1) / weight.sum(-1)
            shares = sums[..., 3 * n_h:] / sums[..., 3 * n_h:].sum(-1, keepdims=True)
            p_e = (shares ** 2).sum(-1)
            return np.where(p_e < 1, (p_o - p_e) / (1 - p_e), np.nan)

    total = per_unit.sum(0)
    estimate = float(kappa(total))
    reps = kappa(resample_sums(per_unit, n_boot, seed)) if n_boot > 0 else None
    out = estimate_interval(estimate, reps, ci)
    out["pairs"] = int(total[n_h:2 * n_h].sum())
    out["strata_unobserved"] = int(((total[:n_h] > 0) & (total[n_h:2 * n_h] == 0)).sum())
    return out
