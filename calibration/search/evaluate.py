"""Chunked evaluation of a whole space: per-config train / test / whole-data scores, with bounded memory.

The grid is read in chunks of configs (`Space.chunks`). For each chunk the problem gives per-cell sufficient
statistics -- confusion counts summed over the items of each cell, a cell being (fold, stratum) -- either from
its fast `stats` or by counting its `decide` output; "items" objectives get the chunk's decisions instead. The
chunk is reduced to scores at once, so memory is O(chunk x cells) or O(chunk x items), never O(grid x items).
`score_chunk` is the unit of work: a distributed engine (issue #17) maps it over chunks and concatenates.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from calibration.search.objectives import Objective, score_confusion
from calibration.search.problem import confusion, options
from calibration.search.progress import ProgressLike, check, is_cancelled, report
from calibration.search.space import Columns

ITEM_BUDGET = 4_000_000  # decisions per chunk when the problem has no fast `stats` (int64: 32 MB)
CELL_BUDGET = 1 << 21  # per-cell counts per chunk with a fast `stats` (int64: 16 MB per array of the chunk)


@dataclass(frozen=True)
class Layout:
    """Where every unit and item sits: fold, stratum, cell = fold * n_strata + stratum."""

    fold: np.ndarray  # (n_units,) fold of each unit
    stratum: np.ndarray  # (n_units,) stratum index of each unit (0 when the problem has none)
    group: np.ndarray  # (n_units,) CV group index of each unit
    n_folds: int
    n_strata: int
    n_groups: int
    item_unit: np.ndarray  # (n_items,)
    rank_weight: np.ndarray  # (n_units,) weight of each unit for the strata objectives

    @property
    def n_cells(self) -> int:
        return self.n_folds * self.n_strata

    @property
    def cell_of_unit(self) -> np.ndarray:
        return self.fold * self.n_strata + self.stratum

    @property
    def cell_of_item(self) -> np.ndarray:
        return self.cell_of_unit[self.item_unit]

    @property
    def item_fold(self) -> np.ndarray:
        return self.fold[self.item_unit]

    def cell_weight(self) -> np.ndarray:
        """(n_folds, n_strata) summed rank weights."""
        w = np.bincount(self.cell_of_unit, weights=self.rank_weight, minlength=self.n_cells)
        return w.reshape(self.n_folds, self.n_strata)


@dataclass(frozen=True)
class Scores:
    train: np.ndarray  # (n_folds, n_configs): score on the other folds
    test: np.ndarray  # (n_folds, n_configs): score on the fold
    whole: np.ndarray  # (n_configs,): score on all labeled data


def cell_stats(problem: Any, configs: Columns, layout: Layout, tick: Callable[[float], None] | None) -> np.ndarray:
    """(n_configs, n_cells, k, k) confusion counts: the problem's fast `stats` when it has one."""
    stats = options(problem).stats
    if stats is not None:
        return stats(configs, layout.cell_of_item, layout.n_cells, tick)
    out = confusion(problem.decide(configs), problem.human, layout.cell_of_item, layout.n_cells, int(problem.n_classes))
    if tick is not None:
        tick(1.0)
    return out


def score_chunk(problem: Any, objective: Objective, configs: Columns, layout: Layout,
                tick: Callable[[float], None] | None = None) -> Scores:
    """Scores of one chunk of configs on every fold split."""
    F, K = layout.n_folds, layout.n_strata
    if objective.kind == "items":
        d = np.asarray(problem.decide(configs))
        if tick is not None:
            tick(1.0)
        h, fold = np.asarray(problem.human), layout.item_fold
        train = np.stack([objective.fn(d[:, fold != f], h[fold != f]) for f in range(F)])
        test = np.stack([objective.fn(d[:, fold == f], h[fold == f]) for f in range(F)])
        return Scores(train, test, objective.fn(d, h))
    x = cell_stats(problem, configs, layout, tick)
    c, k = x.shape[0], x.shape[-1]
    x = x.reshape(c, F, K, k, k)
    if objective.kind == "confusion":
        per_fold = x.sum(axis=2)
        whole = per_fold.sum(axis=1)
        train = np.stack([objective.fn(whole - per_fold[:, f]) for f in range(F)])
        test = np.stack([objective.fn(per_fold[:, f]) for f in range(F)])
        return Scores(train, test, objective.fn(whole))
    w = layout.cell_weight()
    whole, w_all = x.sum(axis=1), w.sum(axis=0)
    train = np.stack([score_confusion(objective, whole - x[:, f], w_all - w[f]) for f in range(F)])
    test = np.stack([score_confusion(objective, x[:, f], w[f]) for f in range(F)])
    return Scores(train, test, score_confusion(objective, whole, w_all))


def chunk_size(problem: Any, objective: Objective, n_items: int, size: int, n_cells: int = 1) -> int:
    """Configs per chunk: `size`, fewer when per-item decisions would be materialised or when the chunk's
    per-cell counts (configs x cells x k x k) would exceed CELL_BUDGET."""
    if objective.kind != "items" and options(problem).stats is not None:
        k = max(2, int(problem.n_classes))
        return max(1, min(size, CELL_BUDGET // max(1, n_cells * k * k)))
    return max(1, min(size, ITEM_BUDGET // max(1, n_items)))


@dataclass(frozen=True)
class Work:
    """What every chunk needs, sent to an engine's workers once (Dask: scattered to every worker)."""

    problem: Any
    objective: Objective
    layout: Layout


def run_chunk(work: Work, chunk: tuple[int, int], tick: Callable[[float], None] | None = None) -> Scores:
    """Scores of configs lo..hi-1: the function an engine maps over chunk descriptors (module level: picklable)."""
    lo, hi = chunk
    cols = work.problem.space.take(np.arange(lo, hi, dtype=np.int64))
    return score_chunk(work.problem, work.objective, cols, work.layout, tick)


def evaluate(problem: Any, objective: Objective, layout: Layout, size: int,
             progress: ProgressLike | None = None, cancel: Any = None, engine: Any = None) -> Scores:
    """Every config of `problem.space`, chunk by chunk on `engine` (default: a LocalEngine on this machine's
    cores); progress in configs, cancellable. Chunk results are written into preallocated per-config arrays as
    they arrive in chunk order, so memory is the (folds x configs) scores plus a few chunks in flight, and every
    engine gives the same numbers."""
    from calibration.search.engines import LocalEngine

    space = problem.space
    n, F = space.n_configs, layout.n_folds
    step = space.chunk_size(chunk_size(problem, objective, layout.item_unit.size, size, layout.n_cells))
    chunks = [(lo, min(n, lo + step)) for lo in range(0, n, step)]
    train, test, whole = np.empty((F, n)), np.empty((F, n)), np.empty(n)
    report(progress, 0, n, "evaluating configs")
    check(progress, cancel)
    eng = engine if engine is not None else LocalEngine()
    results = eng.map_chunks(run_chunk, chunks, Work(problem, objective, layout), weights=[hi - lo for lo, hi in chunks],
                             progress=lambda done: report(progress, int(done), n, "evaluating configs"),
                             cancelled=lambda: is_cancelled(progress, cancel))
    for i, part in enumerate(results):
        lo, hi = chunks[i]
        train[:, lo:hi], test[:, lo:hi], whole[lo:hi] = part.train, part.test, part.whole
    report(progress, n, n, "evaluating configs")
    return Scores(train, test, whole)
