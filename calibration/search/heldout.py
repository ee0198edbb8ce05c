"""Held-out figures of a few fixed decision sets (each fold's choice, the baselines), with bootstrap intervals.

After the grid is scored, only a handful of configs matter: the config chosen on each fold's training part and
the scheme's baselines. Their item decisions come from `problem.decide` (exact by construction). The held-out
score pools out-of-fold decisions: every unit is decided by the config its fold's training part chose. The
interval resamples CV groups (samples) with `calibration.agreement.resample_counts`, the project's one bootstrap:
confusion objectives sum per-group counts (one matrix product per chunk of replicates); item objectives repeat
the drawn groups' items.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.agreement import percentile_interval, resample_counts
from calibration.search.evaluate import Layout
from calibration.search.objectives import Objective, score_confusion
from calibration.search.problem import confusion, options

BOOT_CHUNK = 64


@dataclass(frozen=True)
class DecisionSets:
    """Item decisions of a few configs and what they sum to per unit."""

    decisions: np.ndarray  # (n_sets, n_items)
    unit_cm: np.ndarray | None  # (n_sets, n_units, k, k) for confusion / strata objectives


def decide_sets(problem: Any, configs: dict[str, np.ndarray], layout: Layout, objective: Objective) -> DecisionSets:
    d = np.asarray(problem.decide(configs))
    if objective.kind == "items":
        return DecisionSets(d, None)
    return DecisionSets(d, confusion(d, problem.human, layout.item_unit, layout.fold.size, int(problem.n_classes)))


def score_units(objective: Objective, unit_cm: np.ndarray, layout: Layout, units: np.ndarray | None = None) -> float:
    """Objective over the selected units' counts (n_units, k, k) (all when `units` is None)."""
    sel = np.ones(layout.fold.size, dtype=bool) if units is None else units
    if objective.kind == "strata":
        K = layout.n_strata
        cm = np.zeros((K, *unit_cm.shape[1:]), dtype=unit_cm.dtype)
        np.add.at(cm, layout.stratum[sel], unit_cm[sel])
        w = np.bincount(layout.stratum[sel], weights=layout.rank_weight[sel], minlength=K)
        return float(score_confusion(objective, cm, w))
    return float(objective.fn(unit_cm[sel].sum(axis=0)))


def score_items(objective: Objective, d: np.ndarray, human: np.ndarray, mask: np.ndarray | None = None) -> float:
    if mask is not None:
        d, human = d[mask], human[mask]
    return float(objective.fn(d[None, :], human)[0])


def interval(problem: Any, objective: Objective, layout: Layout, sets: DecisionSets, which: np.ndarray,
             n_boot: int, seed: int) -> tuple[float, float]:
    """95% percentile interval over resampled CV groups of the decision set `which[u]` for each unit u."""
    return intervals(problem, objective, layout, sets, [which], n_boot, seed)[0]


def intervals(problem: Any, objective: Objective, layout: Layout, sets: DecisionSets, whiches: list[np.ndarray],
              n_boot: int, seed: int) -> list[tuple[float, float]]:
    """`interval` of several unit -> decision-set assignments (held-out choice, each baseline) at once: the
    percentile intervals of `replicates`."""
    if n_boot == 0:
        return [(math.nan, math.nan)] * len(whiches)
    return [percentile_interval(v) for v in replicates(problem, objective, layout, sets, whiches, n_boot, seed)]


def replicates(problem: Any, objective: Objective, layout: Layout, sets: DecisionSets, whiches: list[np.ndarray],
               n_boot: int, seed: int) -> list[np.ndarray]:
    """(n_boot,) objective values per assignment `whiches[i]` (unit -> decision set), over the same resampled CV
    groups: replicate r of every assignment is computed on the same draw, so differences are paired (the gain).

    The draws are made once and, for confusion / strata objectives, applied to all assignments' per-group counts in
    one matrix product per chunk (issue #18; the counts are whole numbers, so the sums are exact in any order);
    item objectives score every assignment's decisions on each replicate's items at once."""
    if n_boot == 0:
        return [np.empty(0) for _ in whiches]
    S = layout.n_groups
    if objective.kind == "items":
        return _items_replicates(problem, objective, layout, sets, whiches, n_boot, seed)
    k = sets.unit_cm.shape[-1]
    strata = objective.kind == "strata"
    cols = layout.n_strata if strata else 1
    width = k * k + 1
    slot = layout.group * cols + (layout.stratum if strata else 0)
    aggs = []
    for which in whiches:
        unit_cm = sets.unit_cm[which, np.arange(layout.fold.size)].reshape(-1, k * k)  # (n_units, k*k)
        per_unit = np.column_stack([unit_cm, layout.rank_weight]).astype(np.float64)
        agg = np.stack([np.bincount(slot, weights=per_unit[:, j], minlength=S * cols) for j in range(width)], axis=1)
        aggs.append(agg.reshape(S, cols * width))
    whole = np.concatenate(aggs, axis=1)  # (S, n_sets * cols * width)
    exact = bool(np.all(whole == np.round(whole))) and float(np.abs(whole).sum()) * max(1, S) < 2.0**52
    vals: list[list[np.ndarray]] = [[] for _ in whiches]
    for w in resample_counts(S, n_boot, seed, BOOT_CHUNK):
        if exact:
            tot_all = (w @ whole).reshape(w.shape[0], len(whiches), cols, width)
        for i in range(len(whiches)):  # fractional rank weights: the historical per-set sum order, bit for bit
            tot = tot_all[:, i] if exact else np.einsum("bs,sck->bck", w, aggs[i].reshape(S, cols, width))
            cm = tot[..., : k * k].reshape(w.shape[0], cols, k, k)
            vals[i].append(score_confusion(objective, cm, tot[..., -1]) if strata else objective.fn(cm[:, 0]))
    return [np.concatenate(v).astype(np.float64) for v in vals]


def _items_replicates(problem: Any, objective: Objective, layout: Layout, sets: DecisionSets,
                      whiches: list[np.ndarray], n_boot: int, seed: int) -> list[np.ndarray]:
    """Item objectives: each replicate repeats the drawn groups' items, and every assignment is scored on them."""
    items = np.arange(layout.item_unit.size)
    d = np.stack([sets.decisions[w[layout.item_unit], items] for w in whiches])  # (n_sets, n_items)
    h = np.asarray(problem.human)
    g_item = layout.group[layout.item_unit]
    vals: list[np.ndarray] = []
    for w in resample_counts(layout.n_groups, n_boot, seed, BOOT_CHUNK):
        for row in w:
            rep = np.repeat(items, row[g_item].astype(np.int64))
            vals.append(np.asarray(objective.fn(d[:, rep], h[rep]), dtype=np.float64))
    return list(np.stack(vals, axis=1))


SHORTLIST = 16  # configs per fold the re-run selection chooses among (the fold's best on its training part)


def shortlist(train: np.ndarray, chosen: np.ndarray, sign: float, size: int = SHORTLIST) -> np.ndarray:
    """Sorted config ids the gain's replicates re-select among: each fold's `size` best on its training part
    (train: (n_folds, n_configs) scores) and the configs the folds chose."""
    s = np.where(np.isfinite(train), sign * train, -np.inf)
    k = min(size, s.shape[1])
    top = np.argpartition(-s, k - 1, axis=1)[:, :k] if k < s.shape[1] else np.tile(np.arange(s.shape[1]), (s.shape[0], 1))
    return np.unique(np.concatenate([top.ravel(), np.asarray(chosen).ravel()]))


def gain_replicates(problem: Any, objective: Objective, layout: Layout, configs: dict[str, np.ndarray], n_fixed: int,
                    fallback: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap replicates of the whole held-out procedure, for the gain's paired interval.

    `configs`: the baselines (the first `n_fixed`) then the shortlist's configs. On each replicate (the same draws
    as `replicates`: resampled CV groups, each keeping its fold) every fold's config is chosen again among the
    shortlist on the replicate's training part (the first best in shortlist order, which the engine gives in its
    tie-break's order, engine.tie_order; `fallback[f]`, a shortlist position, when no score is defined), and the pooled out-of-fold score computed; the baselines are scored on
    the same replicate. Returns (calibrated (n_boot,), baselines (n_fixed, n_boot)).

    Why not the fixed fold choices of `replicates`: the chosen configs depend on the data too, and holding them
    fixed leaves that variation out -- under shuffled labels the fixed-choice interval of the gain was about 0.73
    of the gain's real spread and said "better" in 7-8% of runs (benchmarks/bench_gain_verdict.py)."""
    if n_boot == 0:
        return np.empty(0), np.empty((n_fixed, 0))
    if objective.kind == "items":
        return _items_gain_replicates(problem, objective, layout, configs, n_fixed, fallback, n_boot, seed)
    S, F, K = layout.n_groups, layout.n_folds, layout.n_strata
    strata = objective.kind == "strata"
    group_fold = np.zeros(S, dtype=np.int64)
    group_fold[layout.group] = layout.fold
    by_group = bool(np.all(group_fold[layout.group] == layout.fold))  # grouped k-fold: a group sits in one fold
    cols = 1 if by_group and not strata else K
    cell_of_unit = layout.group * cols + (layout.stratum if cols > 1 else 0)
    n_cells = S * cols
    stats = options(problem).stats
    if stats is not None:
        cm = np.asarray(stats(configs, cell_of_unit[layout.item_unit], n_cells, None))
    else:
        cm = confusion(problem.decide(configs), problem.human, cell_of_unit[layout.item_unit], n_cells,
                       int(problem.n_classes))
    # shortlisted configs with the same counts in every cell are the same candidate: keep the first (tie order)
    _, first, inverse = np.unique(cm[n_fixed:].reshape(cm.shape[0] - n_fixed, -1), axis=0, return_index=True,
                                  return_inverse=True)
    keep = np.sort(first)
    fallback = np.searchsorted(keep, first[np.asarray(inverse).ravel()[np.asarray(fallback)]])
    cm = np.concatenate([cm[:n_fixed], cm[n_fixed + keep]])
    C, k = cm.shape[0], cm.shape[-1]
    width = k * k + (1 if strata else 0)  # strata objectives also sum each cell's rank weight
    x = np.empty((n_cells, C, width), dtype=np.float64)
    x[..., : k * k] = cm.reshape(C, n_cells, k * k).transpose(1, 0, 2)
    if strata:
        x[..., -1] = np.bincount(cell_of_unit, weights=layout.rank_weight, minlength=n_cells)[:, None]
    cell_fold = np.full(n_cells, -1, dtype=np.int64)
    cell_fold[cell_of_unit] = layout.fold
    x = x.reshape(n_cells, C * width)
    # the cells of each (fold, column) and their groups: a replicate's test counts of fold f, column j are the drawn
    # counts of those groups times their cells' rows (disjoint rows: one pass over the cells per chunk)
    cells = [[np.flatnonzero((cell_fold == f) & (np.arange(n_cells) % cols == j)) for j in range(cols)] for f in range(F)]
    parts = [[(rows // cols, np.ascontiguousarray(x[rows])) for rows in per_col] for per_col in cells]
    del x
    pool = np.arange(n_fixed, C)
    cal: list[np.ndarray] = []
    fixed: list[np.ndarray] = []

    def score(tot: np.ndarray) -> np.ndarray:  # (..., cols, width) -> objective (...)
        cmat = tot[..., : k * k].reshape(*tot.shape[:-1], k, k)
        return score_confusion(objective, cmat, tot[..., -1]) if strata else objective.fn(cmat.sum(axis=-3))

    for w in resample_counts(S, n_boot, seed, BOOT_CHUNK):
        b = w.shape[0]
        tests = [np.stack([w[:, g] @ xs for g, xs in parts[f]], axis=1).reshape(b, cols, C, width) for f in range(F)]
        whole = sum(tests)
        oof = np.zeros((b, cols, width))
        for f in range(F):
            train = (whole - tests[f])[:, :, pool].transpose(0, 2, 1, 3)  # (b, shortlist, cols, width)
            s = objective.sign * score(train)
            s = np.where(np.isfinite(s), s, -np.inf)
            pick = np.where(np.isfinite(s.max(axis=1)), s.argmax(axis=1), fallback[f])
            oof += tests[f][np.arange(b), :, n_fixed + pick]
        cal.append(np.asarray(score(oof), dtype=np.float64))
        fixed.append(np.asarray(score(whole[:, :, :n_fixed].transpose(0, 2, 1, 3)), dtype=np.float64).T)
    return np.concatenate(cal), np.concatenate(fixed, axis=1) if fixed else np.empty((n_fixed, 0))


def _items_gain_replicates(problem: Any, objective: Objective, layout: Layout, configs: dict[str, np.ndarray],
                           n_fixed: int, fallback: np.ndarray, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """`gain_replicates` for item objectives: each replicate repeats the drawn groups' items, every fold's config is
    chosen again on the repeated training items, and the out-of-fold decisions are scored."""
    d = np.asarray(problem.decide(configs))
    h = np.asarray(problem.human)
    items = np.arange(layout.item_unit.size)
    g_item, f_item = layout.group[layout.item_unit], layout.item_fold
    pool = d[n_fixed:]
    cal: list[float] = []
    fixed: list[np.ndarray] = []
    for w in resample_counts(layout.n_groups, n_boot, seed, BOOT_CHUNK):
        for row in w:
            rep = np.repeat(items, row[g_item].astype(np.int64))
            oof = np.empty(rep.size, dtype=d.dtype)
            for f in range(layout.n_folds):
                test = f_item[rep] == f
                s = objective.sign * np.asarray(objective.fn(pool[:, rep[~test]], h[rep[~test]]), dtype=np.float64)
                s = np.where(np.isfinite(s), s, -np.inf)
                pick = int(s.argmax()) if np.isfinite(s.max()) else int(fallback[f])
                oof[test] = pool[pick, rep[test]]
            cal.append(float(objective.fn(oof[None, :], h[rep])[0]))
            fixed.append(np.asarray(objective.fn(d[:n_fixed][:, rep], h[rep]), dtype=np.float64))
    return np.array(cal), np.stack(fixed, axis=1)
