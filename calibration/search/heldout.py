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
from calibration.search.problem import confusion

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
