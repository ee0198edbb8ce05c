"""What to label next (issue #16): pure scores per unit -> an order of the unlabeled units.

The orders:
- `disagreement`: query-by-committee. The committee is a handful of the best configs of the last calibration run
  (`committee`); a unit scores the sum over its items of how much the committee's decisions on the item disagree
  (`item_disagreement`: 1 - the majority's vote share for classes, the spread for continuous decisions). Summing
  favours units with many disputed decisions: each is a count in the objective's confusion table. Ties (e.g. every
  committee member agrees everywhere) are broken by `boundary`.
- `boundary`: items nearest the chosen config's thresholds, measured without knowing what a threshold is: the share
  of the chosen config's nearest neighbours in the search space (`neighbours`: `Space.distance`, one grid step away
  first) that decide the item differently. An item a small parameter change flips sits on the decision boundary.
- `metric-vs-llm`: the machine label (e.g. an LLM judge's, read as if a human had given it) and the calibrated
  metric's decision differ (`mismatch`).
- `annotators`: how much a unit's annotators disagree (the caller counts it from the store).
- `deferred`: the units the guaranteed-agreement band of the last `calibrate --guarantee` run defers to a human
  (calibration/guarantee.py), nearest the threshold first; the other units are not listed.
- `random`: a seeded permutation (for honest estimates: labels drawn at random give unbiased figures).
- `stratified`: round robin over strata (checker, category, scheme), least-labeled stratum first, seeded shuffle
  inside each.
Every order lists unlabeled units only, is deterministic for a seed, and breaks remaining ties with a seeded
random key (never by position, which would favour one corner of the list).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

ORDERS: tuple[str, ...] = ("list", "disagreement", "boundary", "metric-vs-llm", "annotators", "deferred", "random",
                           "stratified")
COMMITTEE = 16
NEIGHBOURS = 24
SCORE_COLUMNS_PREFIXES = ("score", "mean_", "std_", "split", "rank")


def committee(cv_results: pd.DataFrame, size: int = COMMITTEE, top_share: float = 0.0) -> pd.DataFrame:
    """Config rows of the committee: `size` rows spread evenly over the best-ranked configs (all configs tied at the
    best score, else the best `size`; with `top_share`, the best share of the grid when that is larger), so a wide
    plateau of equally good configs is sampled across, not at its lowest ids."""
    if cv_results.empty:
        return cv_results
    cv = cv_results.sort_values("rank", kind="stable") if "rank" in cv_results.columns else cv_results
    best = cv["rank"].min() if "rank" in cv.columns else None
    n_top = int((cv["rank"] == best).sum()) if best is not None else 0
    pool = max(n_top, size, int(top_share * len(cv)))
    pool = min(pool, len(cv))
    idx = np.unique(np.linspace(0, pool - 1, min(size, pool)).round().astype(np.int64))
    return cv.iloc[idx]


def config_columns(rows: pd.DataFrame, names: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """cv_results rows as the column arrays `SearchProblem.decide` takes (score columns dropped)."""
    cols = names or [c for c in rows.columns if not str(c).startswith(SCORE_COLUMNS_PREFIXES)]
    return {c: rows[c].to_numpy() for c in cols}


def item_disagreement(decisions: np.ndarray, n_classes: int) -> np.ndarray:
    """(n_items,) disagreement of a committee's decisions (n_members, n_items): 1 - the largest class's vote share
    (0 = unanimous), or the standard deviation for continuous decisions."""
    d = np.asarray(decisions)
    if d.ndim != 2 or d.shape[0] == 0:
        return np.zeros(d.shape[-1] if d.ndim else 0)
    if n_classes == 0:
        return np.nanstd(d.astype(np.float64), axis=0)
    votes = np.stack([(d == c).sum(axis=0) for c in range(n_classes)])
    return 1.0 - votes.max(axis=0) / d.shape[0]


def item_flips(chosen: np.ndarray, others: np.ndarray, n_classes: int) -> np.ndarray:
    """(n_items,) share of `others` (n_configs, n_items) deciding differently from `chosen` (continuous: the mean
    absolute difference)."""
    o = np.asarray(others)
    if o.ndim != 2 or o.shape[0] == 0:
        return np.zeros(np.asarray(chosen).shape[0])
    if n_classes == 0:
        return np.nanmean(np.abs(o.astype(np.float64) - np.asarray(chosen, dtype=np.float64)), axis=0)
    return (o != np.asarray(chosen)[None, :]).mean(axis=0)


def mismatch(machine: np.ndarray, metric: np.ndarray, n_classes: int) -> np.ndarray:
    """(n_items,) 1 where the machine label's decision and the metric's differ (continuous: |difference|)."""
    a, b = np.asarray(machine, dtype=np.float64), np.asarray(metric, dtype=np.float64)
    if n_classes == 0:
        return np.nan_to_num(np.abs(a - b))
    return (a != b).astype(np.float64)


def per_unit(values: np.ndarray, item_unit: np.ndarray, n_units: int) -> np.ndarray:
    """Sum of item values per unit."""
    return np.bincount(np.asarray(item_unit, dtype=np.int64), weights=np.nan_to_num(np.asarray(values, dtype=np.float64)),
                       minlength=n_units)


def neighbours(space: Any, point: dict[str, Any], n: int = NEIGHBOURS, chunk: int = 1 << 16) -> np.ndarray:
    """Ids of the `n` configs of `space` nearest `point` (Space.distance), the point itself excluded, nearest first
    (ties: lowest id)."""
    dist = np.empty(space.n_configs)
    for start, stop, cols in space.chunks(chunk):
        dist[start:stop] = space.distance(cols, point)
    order = np.lexsort((np.arange(dist.size), dist))
    return order[dist[order] > 1e-12][:n]


def tiebreak(n: int, seed: int) -> np.ndarray:
    """A seeded random key per unit (the last sort key of every order)."""
    return np.random.default_rng(seed).random(n)


def rank(eligible: np.ndarray, seed: int, *keys: np.ndarray) -> np.ndarray:
    """Indices of the eligible units, by each key descending in turn, then by a seeded random key."""
    eligible = np.asarray(eligible, dtype=bool)
    n = eligible.size
    cols = [tiebreak(n, seed)] + [-np.nan_to_num(np.asarray(k, dtype=np.float64), nan=-np.inf) for k in reversed(keys)]
    order = np.lexsort(tuple(cols))  # the last key is the primary one
    return order[eligible[order]]


def random_order(eligible: np.ndarray, seed: int) -> np.ndarray:
    """The eligible units in a seeded random order."""
    return rank(eligible, seed)


def stratified_order(strata: Sequence[Any], eligible: np.ndarray, seed: int,
                     labeled: np.ndarray | None = None) -> np.ndarray:
    """Round robin over strata: each round takes one unit of every stratum that still has one, the strata with the
    fewest labeled units first (then a seeded order); inside a stratum a seeded random order."""
    strata = np.asarray([str(s) for s in strata], dtype=object)
    eligible = np.asarray(eligible, dtype=bool)
    lab = np.zeros(strata.size, dtype=bool) if labeled is None else np.asarray(labeled, dtype=bool)
    key = tiebreak(strata.size, seed)
    names = sorted(set(strata.tolist()))
    rng = np.random.default_rng(seed + 1)
    skey = dict(zip(names, rng.random(len(names))))
    queues = {s: [int(i) for i in sorted(np.flatnonzero((strata == s) & eligible), key=lambda i: key[i])] for s in names}
    done = {s: int(((strata == s) & lab).sum()) for s in names}
    out: list[int] = []
    while any(queues.values()):
        for s in sorted((s for s in names if queues[s]), key=lambda s: (done[s], skey[s])):
            out.append(queues[s].pop(0))
            done[s] += 1
    return np.asarray(out, dtype=np.int64)


def order_by(scores: np.ndarray, eligible: np.ndarray, seed: int, secondary: np.ndarray | None = None) -> np.ndarray:
    """The eligible units by score (descending), then `secondary`, then a seeded random key."""
    keys = [scores] if secondary is None else [scores, secondary]
    return rank(eligible, seed, *keys)


def _decide(problem: Any, rows: pd.DataFrame) -> np.ndarray:
    return np.asarray(problem.decide(config_columns(rows, list(problem.space.columns))))


def model_scores(problem: Any, cv_results: pd.DataFrame, best: dict[str, Any], order: str,
                 machine: Any = None, committee_size: int = COMMITTEE,
                 n_neighbours: int = NEIGHBOURS) -> tuple[np.ndarray, np.ndarray]:
    """(primary, secondary) score per unit of `problem` (built over unlabeled units too) for a model-based order:
    disagreement (committee disagreement; secondary: boundary), boundary (mean share of flipping neighbours per
    item), metric-vs-llm (`machine`: the same problem built with the machine's labels as the humans'; its units
    must be `problem`'s, and its `units["labeled"]` marks the units the machine labeled)."""
    k, n_units = int(problem.n_classes), len(problem.units)
    best_row = pd.DataFrame({c: [best[c]] for c in problem.space.columns})
    if order == "metric-vs-llm":
        if machine is None:
            raise ValueError("metric-vs-llm needs the problem built from the machine labels")
        metric = _decide(machine, best_row)[0]
        has = machine.units["labeled"].to_numpy(dtype=bool)[np.asarray(machine.item_unit)]
        diff = mismatch(machine.human, metric, k) * has
        return per_unit(diff, machine.item_unit, len(machine.units)), np.zeros(len(machine.units))
    chosen = _decide(problem, best_row)[0]
    near = problem.space.take(neighbours(problem.space, best, n_neighbours))
    flips = item_flips(chosen, np.asarray(problem.decide(near)), k)
    boundary = per_unit(flips, problem.item_unit, n_units) / np.maximum(
        np.bincount(np.asarray(problem.item_unit), minlength=n_units), 1)
    if order == "boundary":
        return boundary, np.zeros(n_units)
    if order == "disagreement":
        votes = _decide(problem, committee(cv_results, committee_size))
        return per_unit(item_disagreement(votes, k), problem.item_unit, n_units), boundary
    raise ValueError(f"order {order!r}: not a model-based order (disagreement, boundary, metric-vs-llm)")
