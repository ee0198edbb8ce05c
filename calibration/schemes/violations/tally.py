"""What violations `evaluate` keeps of each window of samples (issue #28 item 5): the figures of the whole project
from windows evaluated one at a time, so memory stays one window's pair table, not the project's (5.8 GB at 1M).

Every figure is a function of few things, kept per window and merged exactly:
- each sample's counts (per config: TP/FP/FN per checker, and per checker and category): the bootstrap draws over
  samples only see which samples have equal counts (agreement.resample_sums_blocks draws class sizes), so a sample
  is kept as its class number, and each class's counts once (by columns registered as windows meet them, keyed by
  config, checker and category names, since a window knows only its own checkers and categories); classes are
  numbered in order of first appearance, as the hash of the whole matrix numbers them;
- which checkers ran on each sample (per window, by name);
- per unit, for the review list's machine scores: its sample id, checker, n_gt, n_pred and each config's TP.
At the end the classes' counts are laid out as the whole project's matrix would have them (checkers and categories
sorted), and the same functions as before draw the bootstrap and compute the figures (metrics.checker_figures):
integer sums are the same in any order, and every float is computed from the same arrays as before.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.violations.metrics import (
    BOOT_CHUNK,
    Counts,
    checker_figures,
    prf,
)
from calibration.unit_scores import UnitScores


class Tally:
    """Counts of `n_configs` configs over windows of samples (`add` each window's, in sample order), then the
    figures (`figures`) and per-unit scores (`unit_scores`) of every sample at once."""

    def __init__(self, n_configs: int, keep_units: bool = False) -> None:
        self.n_configs = n_configs
        self.keep_units = keep_units
        self._columns: dict[tuple[Any, ...], int] = {}  # (config, checker, category or None, j) -> registry id
        self._classes: dict[bytes, int] = {}  # a class's counts by registry id (see `add`) -> its number
        self._sample_class: list[np.ndarray] = []
        self._runs: list[tuple[list[str], np.ndarray]] = []  # per window: its checkers, (S_w, C_w) ran on
        self._checkers: set[str] = set()
        self._categories: set[str] = set()
        self._units: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]] = []
        self._unit_names: dict[Any, int] = {}  # the units' checkers (object: as the table holds them), coded

    def add(self, counts: Sequence[Counts]) -> None:
        """One window's counts, one per config (of tables built from the window's columns: the same units)."""
        first = counts[0]
        checkers, categories = list(first.checkers), list(first.categories)
        self._checkers.update(checkers)
        self._categories.update(categories)
        if self.keep_units:  # narrow: 25 bytes a unit for two configs (4M units at 1M samples)
            u = first.units
            codes, names = pd.factorize(u["checker"].to_numpy(dtype=object))
            at = np.array([self._unit_names.setdefault(c, len(self._unit_names)) for c in names], dtype=np.int32)
            self._units.append((u["sample_id"].to_numpy(dtype=object), at[codes] if codes.size else codes.astype(np.int32),
                                *(_narrow(u[f].to_numpy(dtype=np.int64)) for f in ("n_gt", "n_pred")),
                                [_narrow(c.units["tp"].to_numpy(dtype=np.int64)) for c in counts]))
        S, C, K = len(first.samples), len(checkers), len(categories)
        if S == 0:
            return
        self._runs.append((checkers, first.run_on.copy()))
        # the window's samples x every config's counts, and each column's registry id
        blocks, ids = [], []
        for i, c in enumerate(counts):
            blocks += [c.by_sample.reshape(S, C * 3), c.by_sample_cat.reshape(S, C * K * 3)]
            ids += [self._column((i, name, None, j)) for name in checkers for j in range(3)]
            ids += [self._column((i, name, cat, j)) for name in checkers for cat in categories for j in range(3)]
        reg = np.array(ids, dtype=np.int64)
        # the blocks' distinct rows hashed side by side, never joined into one matrix (agreement's own hashing)
        from calibration.agreement import distinct_rows, hashed_block_rows

        hashed = hashed_block_rows(blocks)
        if hashed is not None:
            rows, inverse = np.hstack(hashed[0]), hashed[1]
        else:  # a collision, never seen: column by column
            rows, inverse = distinct_rows(np.hstack(blocks))
        # each class's counts at its columns' registry ids: its key is that row's bytes, trailing zero bytes dropped
        # (numpy's bytes type drops them), so a class has one key whatever columns later windows register
        wide = np.zeros((len(rows), len(self._columns)), dtype=np.int64)
        wide[:, reg] = rows
        keys = wide.view(np.dtype((np.bytes_, wide.shape[1] * 8))).ravel().tolist()
        classes = self._classes
        numbers = np.array([classes.setdefault(key, len(classes)) for key in keys], dtype=np.int64)
        self._sample_class.append(numbers[inverse])

    def _column(self, key: tuple[Any, ...]) -> int:
        return self._columns.setdefault(key, len(self._columns))

    def layout(self) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
        """(checkers, categories sorted; each sample's class; each class's row of the whole matrix (configs side by
        side, each C*3 per-checker then C*K*3 per-category counts, as metrics._flat lays them out)), int64."""
        checkers, categories = sorted(self._checkers), sorted(self._categories)
        C, K = len(checkers), len(categories)
        width = C * 3 + C * K * 3
        c_at, k_at = {c: i for i, c in enumerate(checkers)}, {k: i for i, k in enumerate(categories)}
        column = np.empty(len(self._columns), dtype=np.int64)
        for (i, name, cat, j), r in self._columns.items():
            c = c_at[name]
            column[r] = i * width + (c * 3 + j if cat is None else C * 3 + (c * K + k_at[cat]) * 3 + j)
        wide = np.zeros((len(self._classes), len(self._columns)), dtype=np.int64)
        for key, k in self._classes.items():
            values = np.frombuffer(key + b"\0" * (-len(key) % 8), dtype=np.int64)
            wide[k, : values.size] = values
        rows = np.zeros((len(self._classes), self.n_configs * width), dtype=np.int64)
        rows[:, column] = wide
        sample_class = np.concatenate(self._sample_class) if self._sample_class else np.zeros(0, dtype=np.int64)
        return checkers, categories, sample_class, rows

    def figures(self, n_boot: int, seed: int, ci: float = 0.95) -> list[dict[str, Any]]:
        """Each config's `metrics.evaluate_counts` of the whole project, as `evaluate_many` gives it."""
        checkers, categories, sample_class, rows = self.layout()
        C, K = len(checkers), len(categories)
        if C == 0:
            return [{} for _ in range(self.n_configs)]
        width = C * 3 + C * K * 3
        boots = _bootstrap(sample_class, rows, n_boot, seed) if n_boot > 0 else np.zeros((0, rows.shape[1]))
        ran = self._ran(checkers, sample_class.size)
        sizes = np.bincount(sample_class, minlength=len(rows))
        out = []
        for i in range(self.n_configs):
            mine = rows[:, i * width : (i + 1) * width]
            sums = sizes @ mine  # integers: the same sums as over every sample
            main = mine[:, : C * 3].reshape(-1, C, 3)
            _, _, uf = prf(main[..., 0], main[..., 1], main[..., 2])  # per class: its samples' F1 per checker
            per_sample = [uf[sample_class[ran[:, c]], c] for c in range(C)]
            out.append(checker_figures(checkers, categories, sums[: C * 3].reshape(C, 3),
                                       sums[C * 3 :].reshape(C, K, 3), per_sample, boots[:, i * width : (i + 1) * width],
                                       ci))
        return out

    def _ran(self, checkers: list[str], n: int) -> np.ndarray:
        """(samples, C) bool: the checker has a unit for the sample (Counts.run_on of the whole project)."""
        at = {c: i for i, c in enumerate(checkers)}
        out = np.zeros((n, len(checkers)), dtype=bool)
        start = 0
        for names, run in self._runs:
            out[start : start + run.shape[0], [at[c] for c in names]] = run
            start += run.shape[0]
        return out

    def unit_scores(self, i: int) -> UnitScores:
        """Config i's per-unit (sample_id, checker, tp, fp, fn, f1) of every window, as `evaluation.unit_scores`
        of the whole table gives them."""
        parts = self._units

        def joined(pick: Any, dtype: Any) -> np.ndarray:
            return np.concatenate([pick(p) for p in parts]) if parts else np.empty(0, dtype=dtype)

        from calibration.schemes.violations.columns import object_array, str_array

        sid = str_array(joined(lambda p: p[0], object))
        unit = str_array(object_array(list(self._unit_names))[joined(lambda p: p[1], np.int32)])
        n_gt, n_pred = (joined(lambda p, k=k: p[k], np.int64).astype(np.int64) for k in (2, 3))
        tp = joined(lambda p: p[4][i], np.int64).astype(np.int64)
        fp, fn = n_pred - tp, n_gt - tp
        _, _, f1 = prf(tp, fp, fn)
        return UnitScores(sid, unit, tp, fp, fn, f1)


def _narrow(values: np.ndarray) -> np.ndarray:
    """int32 when every value fits (counts per unit always do in practice), else as they are."""
    return values.astype(np.int32) if values.size == 0 or int(np.abs(values).max()) < 2**31 else values


def _bootstrap(sample_class: np.ndarray, rows: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """agreement.resample_sums_blocks of the whole matrix (`rows[sample_class]`), from its classes: class sizes
    drawn when classes are few (its branch, on the same classes in the same order), else the matrix itself."""
    from calibration.agreement import (  # here: agreement brings scikit-learn
        MULTINOMIAL_SHARE,
        resample_sums,
    )

    n, k = sample_class.size, len(rows)
    if n and k * MULTINOMIAL_SHARE <= n:
        sizes = np.bincount(sample_class, minlength=k)
        counts = np.random.default_rng(seed).multinomial(n, sizes / n, size=n_boot)
        return counts.astype(np.float64) @ np.ascontiguousarray(rows, dtype=np.float64)
    return resample_sums(rows[sample_class].astype(np.float64), n_boot, seed, BOOT_CHUNK)
