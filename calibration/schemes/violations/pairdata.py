"""Human judgement as data: the candidate pairs of labeled units, each a human "match" or "not a match".

These are the items of the violations search problem (calibration.schemes.violations.search). Validation lives
here so the evaluator and the calibrator can trust their arrays; messages name the bad item.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np
import pandas as pd

from calibration.schemes.violations.config import COMPONENTS

PAIR_COLUMNS: tuple[str, ...] = ("group", "gt", "pred", *COMPONENTS)
GROUP_COLUMNS: tuple[str, ...] = ("sample_id", "checker", "n_gt", "n_pred")


class PairTableLike(Protocol):
    """The contract of calibration.schemes.violations.pairs.PairTable that the search relies on."""

    groups: pd.DataFrame
    pairs: pd.DataFrame


def check_table(table: Any) -> None:
    """Raise ValueError naming the missing part when `table` does not honour the PairTable contract."""
    for attr, cols in (("groups", GROUP_COLUMNS), ("pairs", PAIR_COLUMNS)):
        df = getattr(table, attr, None)
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"pair_table.{attr}: expected a pandas DataFrame, got {type(df).__name__}")
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise ValueError(f"pair_table.{attr}: missing column(s) {missing}")
    n_groups = len(table.groups)
    if n_groups and not np.array_equal(table.groups.index.to_numpy(), np.arange(n_groups)):
        raise ValueError("pair_table.groups: index must be 0..G-1")
    g = table.pairs["group"].to_numpy()
    if len(g) and (g.min() < 0 or g.max() >= n_groups):
        raise ValueError(f"pair_table.pairs.group: values must be group ids 0..{n_groups - 1}")


def labeled_array(table: PairTableLike, labeled_groups: Iterable[int]) -> np.ndarray:
    """Sorted unique labeled group ids, validated against the table."""
    try:
        ids = np.array(sorted({int(g) for g in labeled_groups}), dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"labeled_groups: expected group ids (ints): {exc}") from None
    if ids.size == 0:
        raise ValueError("labeled_groups: no labeled (sample, checker) unit; label some before calibrating")
    bad = ids[(ids < 0) | (ids >= len(table.groups))]
    if bad.size:
        raise ValueError(f"labeled_groups: unknown group id(s) {bad[:5].tolist()} (table has {len(table.groups)})")
    return ids


def _triples(human_matches: Iterable[tuple[int, int, int]] | np.ndarray) -> np.ndarray:
    """(n, 3) int64 array of (group, gt, pred); the error names the first bad item."""
    if isinstance(human_matches, np.ndarray) and human_matches.ndim == 2 and human_matches.shape[1] == 3:
        return human_matches.astype(np.int64, copy=False)
    items = list(human_matches)
    if not items:
        return np.zeros((0, 3), dtype=np.int64)
    try:  # one C-level conversion for the usual list / set of int triples (fromiter: half np.array's time)
        return np.fromiter(items, dtype=np.dtype((np.int64, 3)), count=len(items))
    except (TypeError, ValueError, OverflowError):
        pass
    out = np.empty((len(items), 3), dtype=np.int64)
    for n, item in enumerate(items):
        try:
            g, a, b = (int(x) for x in item)
        except (TypeError, ValueError):
            raise ValueError(f"human_matches: expected (group, gt, pred) triples of ints, got {item!r}") from None
        out[n] = (g, a, b)
    return out


def human_rows(table: PairTableLike, human_matches: Iterable[tuple[int, int, int]] | np.ndarray,
               labeled: np.ndarray) -> np.ndarray:
    """Bool mask over `table.pairs`: the rows the humans matched, validated (each a candidate pair of a labeled unit).

    Issue #18: one int64 code per (group, gt, pred), looked up with `searchsorted` in the table's sorted pair
    codes -- no Python set of tuples, no repeated `np.isin`. Computed once per problem and shared (PairData.build
    takes the mask)."""
    hk = _triples(human_matches)
    p = table.pairs
    mask = np.zeros(len(p), dtype=bool)
    if hk.shape[0] == 0:
        return mask
    lab = np.zeros(len(table.groups), dtype=bool)
    lab[labeled] = True
    g_ok = (hk[:, 0] >= 0) & (hk[:, 0] < lab.size)
    outside = ~g_ok.copy()
    outside[g_ok] = ~lab[hk[g_ok, 0]]
    if outside.any():
        g, a, b = _first_sorted(hk[outside])
        raise ValueError(f"human_matches: ({g}, {a}, {b}) is in group {g}, which is not in labeled_groups")
    codes, hcodes = _pair_codes(p["group"].to_numpy(dtype=np.int64), p["gt"].to_numpy(dtype=np.int64),
                                p["pred"].to_numpy(dtype=np.int64), hk)
    order = None
    if codes.size > 1 and not bool(np.all(codes[1:] > codes[:-1])):  # pair tables are built sorted; others too
        order = np.argsort(codes, kind="stable")
        codes = codes[order]
    pos = np.minimum(np.searchsorted(codes, hcodes), max(0, codes.size - 1))
    found = (hk[:, 1:] >= 0).all(axis=1) & (codes.size > 0) & (codes[pos] == hcodes if codes.size else False)
    if not found.all():
        missing = np.unique(hk[~found], axis=0)
        raise ValueError(f"human_matches: {[tuple(m) for m in missing[:3].tolist()]} not candidate pair(s) of the "
                         f"pair table ({len(missing)} in all)")
    mask[pos if order is None else order[pos]] = True
    return mask


def _first_sorted(keys: np.ndarray) -> list[int]:
    return keys[np.lexsort(keys.T[::-1])][0].tolist()


def _pair_codes(group: np.ndarray, gt: np.ndarray, pred: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One int64 code per (group, gt, pred), for the table's pairs and for `keys` (n, 3) alike."""
    ma = int(max(gt.max(initial=0), keys[:, 1].max(initial=0))) + 1
    mb = int(max(pred.max(initial=0), keys[:, 2].max(initial=0))) + 1
    return (group * ma + gt) * mb + pred, (keys[:, 0] * ma + keys[:, 1]) * mb + keys[:, 2]


@dataclass(frozen=True)
class PairData:
    """Arrays of the pairs under evaluation (labeled units only), each tagged with its unit and human label.

    A unit is any partition of labeled groups the caller wants counts for (fold x checker, sample, group).
    """

    comps: np.ndarray  # (P, 5) float64 in COMPONENTS order, NaN = absent on either side
    group: np.ndarray  # (P,) int64
    gt: np.ndarray  # (P,) int64
    pred: np.ndarray  # (P,) int64
    human: np.ndarray  # (P,) bool
    unit: np.ndarray  # (P,) int64 in 0..n_units-1
    row: np.ndarray  # (P,) int64 position in pair_table.pairs
    n_units: int
    unit_pairs: np.ndarray  # (U,) candidate pairs per unit
    unit_positives: np.ndarray  # (U,) human matches per unit
    unit_gt: np.ndarray  # (U,) ground-truth violations per unit (for per-checker F1)
    unit_pred: np.ndarray  # (U,) predicted violations per unit
    group_n_gt: np.ndarray  # (G,) n_gt of every group of the table (indexed by global group id)
    group_n_pred: np.ndarray  # (G,) n_pred of every group

    def __len__(self) -> int:
        return len(self.group)

    def with_units(self, unit: np.ndarray, n_units: int) -> "PairData":
        """The same pairs counted into other units (e.g. the engine's fold x checker cells), same pair order."""
        unit = np.asarray(unit, dtype=np.int64)
        return replace(self, unit=unit, n_units=n_units, unit_pairs=np.bincount(unit, minlength=n_units),
                       unit_positives=np.bincount(unit, weights=self.human, minlength=n_units).astype(np.int64))

    @classmethod
    def build(
        cls, table: PairTableLike, human: set[tuple[int, int, int]] | np.ndarray, unit_of_group: np.ndarray,
        n_units: int,
    ) -> "PairData":
        """`unit_of_group[g]` is the unit of group g, or -1 to leave the group out. `human`: a bool mask over
        `table.pairs` (`human_rows`, the fast path) or a set of (group, gt, pred)."""
        unit_of_group = np.asarray(unit_of_group, dtype=np.int64)
        p = table.pairs
        g_all = p["group"].to_numpy(dtype=np.int64)
        keep = np.flatnonzero(unit_of_group[g_all] >= 0)
        every = keep.size == len(p)  # all groups kept (a fit on every labeled unit): plain copies, not gathers

        def take(a: np.ndarray) -> np.ndarray:  # a copy either way: the table's columns are never shared
            return a.copy() if every else a[keep]

        group = take(g_all)
        gt = take(p["gt"].to_numpy(dtype=np.int64))
        pred = take(p["pred"].to_numpy(dtype=np.int64))
        comps = p[list(COMPONENTS)].to_numpy(dtype=np.float64)  # a new array (a new frame's values)
        comps = np.ascontiguousarray(comps if every else comps[keep])
        if isinstance(human, np.ndarray) and human.dtype == bool and human.shape == (len(p),):
            hum = take(human)
        elif human:
            codes, hcodes = _pair_codes(group, gt, pred, np.array(sorted(human), dtype=np.int64))
            hum = np.isin(codes, hcodes)
        else:
            hum = np.zeros(len(group), dtype=bool)
        unit = unit_of_group[group]
        gdf = table.groups
        in_unit = np.flatnonzero(unit_of_group >= 0)
        ug = unit_of_group[in_unit]
        return cls(
            comps=comps, group=group, gt=gt, pred=pred, human=hum, unit=unit, row=keep, n_units=n_units,
            unit_pairs=np.bincount(unit, minlength=n_units),
            unit_positives=np.bincount(unit, weights=hum, minlength=n_units).astype(np.int64),
            unit_gt=np.bincount(ug, weights=gdf["n_gt"].to_numpy(dtype=np.float64)[in_unit], minlength=n_units).astype(np.int64),
            unit_pred=np.bincount(ug, weights=gdf["n_pred"].to_numpy(dtype=np.float64)[in_unit], minlength=n_units).astype(np.int64),
            group_n_gt=gdf["n_gt"].to_numpy(dtype=np.int64), group_n_pred=gdf["n_pred"].to_numpy(dtype=np.int64),
        )
