"""`item_agreements` of integer-coded tables in bounded memory (issue #28 item 5: `concord agreement` at 1M units).

calibration.annotators' `_prepare_items` builds per-label and per-item arrays of the whole table at once (int64
codes, a ratings matrix, per-unit counts: about 1.5-2 kB per sample, 1.5-2.5 GB at 1M samples). Every figure it gives
is a function of per-sample integer counts, plus Krippendorff's coincidences summed unit after unit, so here a table
whose samples come grouped in ascending order (what agreement's column reader makes) is taken a window of whole
samples at a time: each window's counts are made over every possible cell and reduced to a code per sample (which
distinct row of counts it has), the coincidences continue the package's running sum, and the bootstrap counts each
replicate's draws per distinct row (`_counted_sums`' way). Integer sums are exact in any order, so the figures are
those of `item_agreements`, bit for bit (tests/test_item_chunks.py); tables it cannot take (samples not grouped, a
time column, an item labelled twice by one annotator: the original's message) go through `item_agreements` itself.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from calibration.agreement import draw_chunk, resample_index_chunks
from calibration.annotators import (
    KAPPA_WEIGHTS,
    CodedItems,
    Level,
    item_agreements,
    item_report,
    item_stats,
    kappa_from_confusion,
    object_values,
    sorted_label_values,
)
from calibration.blas import one_blas_thread

WINDOW_CELLS = 1 << 22  # a window's dense counts: samples x every possible cell, 32 MB of int64 at most
WINDOW_LABELS = 1 << 20  # labels per window (their per-item temporaries stay a few tens of MB)


def item_agreements_bounded(tables: Sequence[CodedItems], *, level: Level = "nominal", n_boot: int = 1000,
                            seed: int = 0, ci: float = 0.95) -> list[dict[str, Any]]:
    """`item_agreements(tables, ...)`, the same figures, in memory bounded by the tables themselves plus a few bytes
    per sample (tables it cannot take go through `item_agreements`)."""
    if level not in KAPPA_WEIGHTS:
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    prepared = [_Prepared.of(t, level) for t in tables]
    if any(p is None for p in prepared):
        return item_agreements(tables, level=level, n_boot=n_boot, seed=seed, ci=ci)
    sums: list[np.ndarray | None] = [None] * len(prepared)
    if n_boot > 0:
        by_n: dict[int, list[int]] = {}
        for i, p in enumerate(prepared):
            by_n.setdefault(p.n_s, []).append(i)  # type: ignore[union-attr]
        for n, group in by_n.items():
            for i, got in zip(group, _replicate_sums([prepared[i] for i in group], n, n_boot, seed)):  # type: ignore[misc]
                sums[i] = got
    return [p.finish(s, n_boot, ci) for p, s in zip(prepared, sums)]  # type: ignore[union-attr]


@dataclass(frozen=True)
class KindCodedItems(CodedItems):
    """A pool of several tables' entries (agreement's `overall` over every kind): `kind` says each entry's table.
    Its samples need not come grouped: the entries are taken in order of their sample's first appearance, and
    Krippendorff's running sum is kept per table (each table's categories its own, so every other table's units
    add exact zeros to its cells: the same bits)."""

    kind: np.ndarray | None = None


def _grouped(t: CodedItems) -> bool:
    """Whether the entries' sample codes come grouped in ascending order (agreement's column tables: by sample)."""
    sample = np.asarray(t.sample)
    return bool(len(sample)) and bool((sample[1:] >= sample[:-1]).all())


def _windows(sample: np.ndarray, per_window: int) -> list[tuple[int, int]]:
    """[lo, hi) ranges of about `per_window` entries, cut between samples (`sample` ascending)."""
    out, lo, n = [], 0, len(sample)
    while lo < n:
        hi = min(lo + per_window, n)
        if hi < n:
            hi = int(np.searchsorted(sample, sample[hi - 1], side="right"))
        out.append((lo, hi))
        lo = hi
    return out


@dataclass
class _Prepared:
    """A table's counts: per sample the code of its distinct row of counts over every cell (`rows`), and the
    figures but the intervals (`finish_with` adds them from the replicate sums)."""

    n_s: int
    codes: np.ndarray  # (n_s,) int32: each sample's distinct row
    rows: np.ndarray  # (distinct, D) int32 counts over every cell
    finish_with: Callable[[np.ndarray | None, int, float], dict[str, Any]]

    def finish(self, sums: np.ndarray | None, n_boot: int, ci: float) -> dict[str, Any]:
        return self.finish_with(sums, n_boot, ci)

    @classmethod
    def of(cls, t: CodedItems, level: Level) -> _Prepared | None:
        if not isinstance(t, CodedItems) or t.seconds is not None:
            return None
        kind = getattr(t, "kind", None)
        if _grouped(t):
            return _prepare(t, level, kind)
        if kind is None:
            return None
        table, kinds = _by_first_sample(t, kind)
        return _prepare(table, level, kind=kinds, reordered=True)


def _by_first_sample(t: CodedItems, column: np.ndarray) -> tuple[CodedItems, np.ndarray]:
    """The kept entries (category >= 0) in order of their sample's first appearance (stable), samples numbered so,
    and `column` in the same order (the order found once)."""
    keep = np.asarray(t.category) >= 0
    number = pd.factorize(np.asarray(t.sample)[keep], sort=False)[0]
    order = np.argsort(number, kind="stable")
    return (CodedItems(number[order], np.asarray(t.item)[keep][order], np.asarray(t.annotator)[keep][order],
                       np.asarray(t.category)[keep][order], t.annotators, t.categories),
            np.asarray(column)[keep][order])


def _first_order(parts: list[np.ndarray]) -> np.ndarray:
    """pd.unique of the parts one after the other (first appearance over all of them)."""
    return pd.unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.int64)


def _prepare(t: CodedItems, level: Level, kind: np.ndarray | None = None, reordered: bool = False
             ) -> _Prepared | None:
    """`_prepare_items` of a table grouped by sample, a window of samples at a time (None: what it leaves to
    `item_agreements`: an item labelled twice (its message), non-numeric interval categories, counts too large to
    sum exactly, a pool whose tables share a category). `kind`: each entry's table in a pool; `reordered`: its
    entries were put in order of their samples, so a table's units may come in another order than its own, which
    leaves Krippendorff's sums the same bits only when every term is exact (a unit's m - 1 ratings a power of two:
    up to three annotators; else `item_agreements`)."""
    sample, item, annot, category = (np.asarray(x) for x in (t.sample, t.item, t.annotator, t.category))
    kind = np.zeros(len(sample), dtype=np.int8) if kind is None else np.asarray(kind)
    n_kinds = int(kind.max(initial=0)) + 1
    spans = _windows(sample, WINDOW_LABELS)
    # annotators and categories numbered as `_codes_of_coded` numbers them (first appearance, then sorted names)
    used_a, used_c, used_ck = [], [], []
    for lo, hi in spans:
        keep = category[lo:hi] >= 0
        used_a.append(pd.unique(annot[lo:hi][keep]))
        used_c.append(pd.unique(category[lo:hi][keep]))
        used_ck.append(pd.unique(category[lo:hi][keep].astype(np.int64) * n_kinds + kind[lo:hi][keep]))
    used_a_all, used_c_all = _first_order(used_a), _first_order(used_c)
    cat_kind = np.unique(_first_order(used_ck))
    if not len(used_c_all):
        return None  # no labels to compare: `item_agreements` says so
    new_a, annotators = pd.factorize(object_values([t.annotators[c] for c in used_a_all]), sort=True)
    a_remap = np.full(len(t.annotators), -1, dtype=np.int64)
    a_remap[used_a_all] = new_a
    raw = object_values([t.categories[c] for c in used_c_all])
    values = sorted_label_values(pd.unique(raw))
    c_remap = np.full(len(t.categories), -1, dtype=np.int64)
    c_remap[used_c_all] = pd.Index(values).get_indexer(raw)
    if level == "interval":
        try:
            numeric = values.astype(float)
        except (TypeError, ValueError):
            return None
    else:
        numeric = np.arange(len(values), dtype=float)
    n_a, k = len(annotators), len(values)
    # each category's table (a pool's tables have categories of their own, else `item_agreements`)
    kind_of = np.full(k, -1, dtype=np.int64)
    for c_raw, kd in zip((cat_kind // n_kinds).tolist(), (cat_kind % n_kinds).tolist()):
        c = int(c_remap[c_raw])
        if kind_of[c] not in (-1, kd):
            return None
        kind_of[c] = kd
    blocks = [np.flatnonzero(kind_of == j) for j in range(n_kinds)]
    # the cells a label pair can fall in: (c, c') of one table's categories, numbered table by table
    cell_of = np.full((k, k), -1, dtype=np.int64)
    kk = 0
    for cats in blocks:
        cell_of[np.ix_(cats, cats)] = (kk + np.arange(len(cats) ** 2)).reshape(len(cats), len(cats))
        kk += len(cats) ** 2
    all_pairs = [(a, b) for a in range(n_a) for b in range(a + 1, n_a)]
    ordered_all = [(i, j) for i in range(n_a) for j in range(n_a) if i != j]
    # every possible cell: per pair its confusion cells, per rating count m (0..n_a) the pairable units, per m the
    # coincidence cells
    off_groups = len(all_pairs) * kk
    off_coinc = off_groups + n_a + 1
    width = off_coinc + (n_a + 1) * kk
    per_window = max(1, min(WINDOW_LABELS, WINDOW_CELLS // width))
    code_parts: list[np.ndarray] = []
    distinct: dict[bytes, int] = {}  # a distinct row of counts (int32 bytes) -> its code
    totals = np.zeros(width, dtype=np.int64)
    n_labels_a = np.zeros(n_a, dtype=np.int64)
    n_samples_a = np.zeros(n_a, dtype=np.int64)
    pairable_cats = np.zeros(k, dtype=np.int64)
    alpha = [_RunningCoincidences(len(cats)) for cats in blocks]
    n_s = n_u = n_pairable = n_labels = 0
    for lo, hi in _windows(sample, per_window):
        keep = category[lo:hi] >= 0
        if not keep.any():
            continue
        s_raw = sample[lo:hi][keep]
        first = np.empty(len(s_raw), dtype=bool)
        first[:1] = True
        np.not_equal(s_raw[1:], s_raw[:-1], out=first[1:])
        s = np.cumsum(first) - 1  # the window's samples 0..n_w-1
        n_w = int(s[-1]) + 1
        del first, s_raw
        it = item[lo:hi][keep].astype(np.int64)
        it -= int(it.min())
        unit, distinct_units = pd.factorize(s * (int(it.max()) + 1) + it, sort=False)
        n_wu = len(distinct_units)
        del it, distinct_units
        a = a_remap[annot[lo:hi][keep]]
        c = c_remap[category[lo:hi][keep]]
        unit_kind = np.zeros(n_wu, dtype=np.int64)
        unit_kind[unit] = kind[lo:hi][keep]
        if (np.bincount(unit * n_a + a, minlength=n_wu * n_a) > 1).any():
            return None  # an item labelled twice by one annotator: `item_agreements` says which
        unit_sample = np.zeros(n_wu, dtype=np.int64)
        unit_sample[unit] = s
        ratings = np.full((n_a, n_wu), -1, dtype=np.int64)
        ratings[a, unit] = c
        rated = ratings >= 0
        m_u = np.bincount(unit, minlength=n_wu)
        pairable = m_u >= 2
        if reordered and (((m_u[pairable] - 1) & (m_u[pairable] - 2)) != 0).any():
            return None  # a term divided by 3, 5, ...: its sum depends on the order of the units
        cells: list[np.ndarray] = []
        for p, (x, y) in enumerate(all_pairs):
            both = rated[x] & rated[y]
            cells.append(unit_sample[both] * width + (p * kk + cell_of[ratings[x][both], ratings[y][both]]))
        cells.append(unit_sample[pairable] * width + (off_groups + m_u[pairable]))
        for x, y in ordered_all:
            both = rated[x] & rated[y]
            cells.append(unit_sample[both] * width + (off_coinc + m_u[both] * kk
                                                      + cell_of[ratings[x][both], ratings[y][both]]))
        block = np.bincount(np.concatenate(cells), minlength=n_w * width).reshape(n_w, width)
        del cells, ratings, rated
        totals += block.sum(0)
        found, inverse = distinct_rows(block)
        if found.max(initial=0) >= 2 ** 31:
            return None  # counts past int32 (never seen): `item_agreements`
        # each distinct row kept once, as the int32 bytes that key it (the dict's order is the codes' order)
        local = np.fromiter((distinct.setdefault(row.tobytes(), len(distinct))
                             for row in found.astype(np.int32)), dtype=np.int64, count=len(found))
        code_parts.append(local[inverse].astype(np.int32))
        del block, found, inverse
        counts = np.bincount(unit * k + c, minlength=n_wu * k).reshape(n_wu, k).astype(float)
        for j, cats in enumerate(blocks):  # each table's units in its order, on its own categories
            mine = counts[pairable & (unit_kind == j)][:, cats]
            alpha[j].add(mine)
            pairable_cats[cats] += mine.sum(0).astype(np.int64)
        del counts
        n_labels_a += np.bincount(a, minlength=n_a)
        n_samples_a += np.bincount(pd.unique(s * n_a + a) % n_a, minlength=n_a)
        n_s += n_w
        n_u += n_wu
        n_pairable += int(pairable.sum())
        n_labels += len(c)
    table = np.frombuffer(b"".join(distinct), dtype=np.int32).reshape(len(distinct), width)
    del distinct
    if int(np.abs(table).max(initial=0)) * max(n_s, 1) >= 2 ** 53:
        return None  # replicate sums past float64's exact integers: `item_agreements`' float product
    ms = np.flatnonzero(totals[off_groups:off_coinc])  # the rating counts a pairable unit has, ascending
    ms = ms[ms >= 2]
    n_g = len(ms)
    shared = {(x, y): int(totals[p * kk:(p + 1) * kk].sum()) for p, (x, y) in enumerate(all_pairs)}
    pairs = [(p, x, y) for p, (x, y) in enumerate(all_pairs) if shared[(x, y)] > 0]
    # the cells `_prepare_items`' stats read, in its order (kept pairs' k x k confusions, the groups, their k x k
    # coincidences), and where each is among ours (cells of two tables' categories: none, 0)
    cells_kk = np.flatnonzero(cell_of.ravel() >= 0)
    ours = cell_of.ravel()[cells_kk]
    n_g_cells = len(pairs) * k * k
    canon = np.concatenate([q * k * k + cells_kk for q in range(len(pairs))]
                           + [n_g_cells + np.arange(n_g)]
                           + [n_g_cells + n_g + g * k * k + cells_kk for g in range(n_g)]).astype(np.int64)
    take = np.concatenate([p * kk + ours for p, _, _ in pairs]
                          + [off_groups + ms]
                          + [off_coinc + m * kk + ours for m in ms]).astype(np.int64)
    n_canon = n_g_cells + n_g + n_g * k * k
    idx = np.arange(k)
    weights = {None: 1.0 - np.eye(k), "linear": np.abs(idx[:, None] - idx[None, :]).astype(float),
               "quadratic": ((idx[:, None] - idx[None, :]) ** 2).astype(float)}[KAPPA_WEIGHTS[level]]
    m_f = ms.astype(float)

    def stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return item_stats(sums, len(pairs), k, m_f, weights, level, numeric)

    def full(raw_sums: np.ndarray) -> np.ndarray:
        out = np.zeros((*raw_sums.shape[:-1], n_canon))
        out[..., canon] = raw_sums[..., take]
        return out

    pair_rows: list[dict[str, Any]] = []
    for p, x, y in pairs:
        conf = np.zeros(k * k)
        conf[cells_kk] = totals[p * kk + ours]
        conf = conf.reshape(k, k)
        n_items = shared[(x, y)]
        pair_rows.append({"a": annotators[x], "b": annotators[y], "n_items": n_items,
                          "observed_agreement": float(np.float64(np.trace(conf)) / n_items),
                          "kappa": float(kappa_from_confusion(conf, weights))})
    _, fleiss_est, _ = stats(full(totals))
    alpha_est = math.nan
    if n_pairable and (pairable_cats > 0).sum() > 1:
        o = np.zeros((k, k))
        for cats, run in zip(blocks, alpha):
            if run.o is not None:
                o[np.ix_(cats, cats)] = run.o
        alpha_est = _coincidence_alpha(o, numeric, level)
    people = []
    for x, name in enumerate(annotators):
        mine = [r["kappa"] for r in pair_rows if name in (r["a"], r["b"])]
        finite = [v for v in mine if math.isfinite(v)]
        people.append({"annotator": name, "n_labels": int(n_labels_a[x]), "n_samples": int(n_samples_a[x]),
                       "mean_kappa": float(np.mean(finite)) if finite else math.nan})
    categories = values.tolist()

    def finish(sums: np.ndarray | None, n_boot: int, ci: float) -> dict[str, Any]:
        return item_report(stats(full(sums)) if sums is not None else None, pair_rows, fleiss_est, alpha_est, ci,
                           head={"level": level, "n_samples": n_s, "n_items": n_u, "n_labels": n_labels,
                                 "n_boot": n_boot, "categories": categories},
                           n_pairable=n_pairable, people=people)

    return _Prepared(n_s, np.concatenate(code_parts), table, finish)


def distinct_rows(block: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows of an integer matrix, each row's number among them): rows hashed by a fixed random integer
    combination (wrapping int64 arithmetic), then checked equal to their class's first row; a collision (never
    seen) falls back to np.unique's sort of whole rows (five times slower: most of a window's time)."""
    mix = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=block.shape[1], dtype=np.int64) | 1
    codes, uniques = pd.factorize(block.astype(np.int64, copy=False) @ mix, sort=False)
    first = np.empty(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    rows = block[first]
    if np.array_equal(rows[codes], block):
        return rows, codes
    found, inverse = np.unique(block, axis=0, return_inverse=True)
    return found, np.asarray(inverse).ravel()


class _RunningCoincidences:
    """calibration.annotators.krippendorff_alpha's coincidences over units given a window at a time: each unit's
    added to the running sum in unit order, as the package's sum over units adds them (one after the other)."""

    def __init__(self, k: int) -> None:
        self.o: np.ndarray | None = None
        self.eye = np.eye(k)[np.newaxis, ...]
        self.chunk = max(1, (1 << 22) // max(k * k, 1))  # units at a time: a few tens of MB of terms

    def add(self, part: np.ndarray) -> None:
        dtype = np.dtype(np.float64)
        for lo in range(0, len(part), self.chunk):
            p = part[lo:lo + self.chunk]
            pairable = np.maximum(p.sum(axis=1), 2)
            unnormalized = p[..., np.newaxis] * p[:, np.newaxis, :] - p[:, np.newaxis, :] * self.eye
            terms = np.divide(unnormalized, (pairable - 1).reshape((-1, 1, 1)), dtype=dtype)
            self.o = (terms if self.o is None else np.concatenate([self.o[np.newaxis], terms])).cumsum(axis=0)[-1]


def _coincidence_alpha(o: np.ndarray, value_domain: np.ndarray, level: Level) -> float:
    """The package's alpha from summed coincidences: its expected coincidences and distances, its formula."""
    from krippendorff.krippendorff import (
        _distance_metric,
        _distances,
        _random_coincidences,
    )

    dtype = np.dtype(np.float64)
    n_v = o.sum(axis=0)
    e = _random_coincidences(n_v, dtype=dtype)
    d = _distances(np.asarray(value_domain), _distance_metric(level), n_v, dtype=dtype)
    return float(1 - (o * d).sum() / (e * d).sum())


def _replicate_sums(prepared: Sequence[_Prepared], n: int, n_boot: int, seed: int) -> list[np.ndarray]:
    """(n_boot, D) replicate sums of each table's per-sample counts over the one draw of `n` samples
    (`resample_index_chunks` with `draw_chunk(n)`, as `boot_sums_shared`): per replicate, the draws of each distinct
    row times that row (integers: exact in any order, so the same bits as the per-sample product). The tables'
    row codes are joined into one code per sample (which distinct combination of rows it has: a few hundred at
    100k TRACe samples), so a replicate's draws are gathered and counted once for every table, each table's
    counts then summed from the joined ones (`_joint_codes`)."""
    outs = [np.empty((n_boot, p.rows.shape[1])) for p in prepared]
    used = [np.flatnonzero((p.rows != 0).any(axis=0)) for p in prepared]
    rights = [p.rows[:, u].astype(np.float64) for p, u in zip(prepared, used)]
    joint, maps = _joint_codes([p.codes for p in prepared], [p.rows.shape[0] for p in prepared])
    n_joint = int(joint.max(initial=-1)) + 1
    work = n_boot * sum(r.size for r in rights)
    lo = 0
    with one_blas_thread(work):
        for idx in resample_index_chunks(n, n_boot, seed, draw_chunk(n)):
            wj = np.empty((idx.shape[0], n_joint))
            for r in range(idx.shape[0]):
                wj[r] = np.bincount(joint[idx[r]], minlength=n_joint)
            for m, u, right, out in zip(maps, used, rights, outs):
                if m is None:  # one table: its own codes
                    w = wj
                else:  # each table's row drawn as often as the joined codes it is part of (whole numbers: exact)
                    w = np.empty((idx.shape[0], right.shape[0]))
                    for r in range(idx.shape[0]):
                        w[r] = np.bincount(m, weights=wj[r], minlength=right.shape[0])
                out[lo:lo + len(w), :] = 0.0
                out[lo:lo + len(w), u] = w @ right
            lo += idx.shape[0]
    return outs


def _joint_codes(codes: Sequence[np.ndarray], n_rows: Sequence[int]) -> tuple[np.ndarray, list[np.ndarray | None]]:
    """(each sample's joined code over the tables, in the narrowest integer type; per table the row code of each
    joined code, None for a single table, whose codes are the joined ones)."""
    if len(codes) == 1:
        joint = np.asarray(codes[0])
        maps: list[np.ndarray | None] = [None]
    else:
        joint = np.zeros(len(codes[0]), dtype=np.int64)
        for c, rows in zip(codes, n_rows):
            joint = pd.factorize(joint * rows + np.asarray(c, dtype=np.int64), sort=False)[0].astype(np.int64)
        first = np.empty(int(joint.max(initial=-1)) + 1, dtype=np.int64)
        first[joint[::-1]] = np.arange(len(joint) - 1, -1, -1)
        maps = [np.asarray(c, dtype=np.int64)[first] for c in codes]
    n_joint = int(joint.max(initial=-1)) + 1
    # the narrowest type: the draws gather it at random, 1 MB at 1M samples, not 4
    return joint.astype(next(t for t in (np.int8, np.int16, np.int32, np.int64) if n_joint <= np.iinfo(t).max)), maps
