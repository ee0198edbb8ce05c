"""Agreement between several annotators (issue #15): labelled items and marked spans.

`item_agreement` takes long-form labels (sample, item, annotator, category), e.g. a scheme's `label_items` per
annotator, and gives Cohen's kappa per annotator pair, Fleiss' kappa and Krippendorff's alpha overall, and a
per-annotator table. `span_agreement` takes each annotator's character spans per sample and gives pairwise
precision/recall/F1 under greedy one-to-one matching on character IoU, the micro F1 over pairs, and Krippendorff's
unitizing alpha. Every interval is a percentile bootstrap over samples (a sample's items travel together).

Libraries and where we wrote our own:
- point estimates: Cohen's kappa per pair by scikit-learn's formula on the pair's confusion counts (tested equal to
  `cohen_kappa_score`; importing sklearn.metrics would cost 1-2 s at start-up), the `krippendorff` package's `alpha`;
- Fleiss' kappa is a few numpy lines (statsmodels would be a large dependency for one formula), tested against
  Fleiss' (1971) worked example;
- bootstrap replicates are not library calls: every statistic here is a function of per-sample sums (confusion
  matrices, coincidence matrices, span counts, length histograms), so `agreement.resample_counts` (the project's one
  resampling draw) turns a thousand replicates into a few matrix products instead of a thousand full passes. The
  closed forms are tested to equal the libraries' values on the full data;
- unitizing alpha (calibration/annotator_spans.py with `span_agreement`, both re-exported here): no maintained
  Python package computes it, so it is written there after Krippendorff (1995, 2004) and tested on Krippendorff's (2004) worked example and against a plain loop transcription of the formulas.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal

import krippendorff
import numpy as np
import pandas as pd

from calibration.agreement import (
    draw_chunk,
    estimate_interval,
    nan_ratio,
    resample_counts,
    resample_index_chunks,
)
from calibration.annotator_spans import span_agreement, unitizing_alpha
from calibration.blas import one_blas_thread

__all__ = ["COLUMNS", "KAPPA_WEIGHTS", "CodedItems", "Level", "item_agreement", "span_agreement", "unitizing_alpha"]
Level = Literal["nominal", "ordinal", "interval"]
COLUMNS = ("sample", "item", "annotator", "category")
KAPPA_WEIGHTS: dict[str, str | None] = {"nominal": None, "ordinal": "linear", "interval": "quadratic"}


# -- bootstrap of per-sample sums -------------------------------------------------------------------------------------------------
def boot_sums(per_sample: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, D) column sums of `per_sample` (n_samples, D) over bootstrap resamples of the samples."""
    return boot_sums_shared([per_sample], n_boot, seed)[0]


def boot_sums_shared(mats: Sequence[np.ndarray], n_boot: int, seed: int) -> list[np.ndarray]:
    """`boot_sums` of several (n, D_i) matrices of the same n samples over one draw: the replicates of
    `resample_counts(n, n_boot, seed)`, drawn and counted once for all of them (a draw at 100k samples costs about
    as much as all the products; agreement bootstraps every kind and the pooled table).

    Integer-valued sums (counts: every statistic here) are exact: no rounding in any order, so the figures are the
    same bits whatever the BLAS thread count. Then only the non-zero columns are multiplied, and samples with equal
    rows are counted together (a replicate's sum depends only on how often each distinct row is drawn). Other values
    go through the plain float product of the draw counts."""
    n = mats[0].shape[0]
    if any(m.shape[0] != n for m in mats):
        raise ValueError("every matrix needs one row per sample")
    widths = np.cumsum([0, *(m.shape[1] for m in mats)])
    x = np.hstack(mats) if len(mats) > 1 else np.asarray(mats[0])
    out = np.zeros((n_boot, x.shape[1]))
    if n_boot <= 0 or n == 0 or x.shape[1] == 0:
        return [out[:, a:b] for a, b in pairwise(widths)]
    if not _exact_integers(x):
        lo = 0
        xf = x.astype(np.float64, copy=False)
        for w in resample_counts(n, n_boot, seed, draw_chunk(n)):
            out[lo:lo + len(w)] = w @ xf
            lo += len(w)
        return [out[:, a:b] for a, b in pairwise(widths)]
    used = np.flatnonzero((x != 0).any(axis=0))
    if used.size:
        out[:, used] = _counted_sums(x[:, used], n_boot, seed)
    return [out[:, a:b] for a, b in pairwise(widths)]


def _exact_integers(x: np.ndarray) -> bool:
    """Whether every sum of n draws of `x`'s rows is an integer float64 holds exactly (|sum| < 2**53)."""
    if np.issubdtype(x.dtype, np.integer):
        big = int(np.abs(x).max(initial=0))
    elif np.issubdtype(x.dtype, np.floating):
        if not np.isfinite(x).all() or not np.array_equal(x, np.rint(x)):
            return False
        big = float(np.abs(x).max(initial=0))
    else:
        return False
    return big * max(x.shape[0], 1) < 2 ** 53


def _counted_sums(x: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """(n_boot, D) replicate sums of the integer-valued rows `x` (n, D): per replicate, the draws of each distinct
    row times that row (float64 products of integers: exact in any order)."""
    n = x.shape[0]
    rows, codes = _distinct_int_rows(x)
    k = rows.shape[0]
    by_row = 2 * k <= n  # few distinct rows: draws counted per distinct row; else per sample (no gather)
    right = rows.astype(np.float64) if by_row else x.astype(np.float64)
    width = k if by_row else n
    out = np.empty((n_boot, x.shape[1]))
    lo = 0
    chunk = draw_chunk(n)  # fewer replicates per chunk above 125k samples: the same replicates, bounded memory
    with one_blas_thread(n_boot * width * x.shape[1]):
        for idx in resample_index_chunks(n, n_boot, seed, chunk):
            w = np.empty((idx.shape[0], width))
            for r in range(idx.shape[0]):
                w[r] = np.bincount(codes[idx[r]] if by_row else idx[r], minlength=width)
            out[lo:lo + len(w)] = w @ right
            lo += len(w)
    return out


def _distinct_int_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows of the integer-valued `x`, each row's index among them): rows hashed by a fixed random
    integer combination (wrapping int64 arithmetic), then checked equal to their class's row (a collision, never
    seen, falls back to the column-by-column `distinct_rows`)."""
    ints = x.astype(np.int64, copy=False)
    mix = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=x.shape[1], dtype=np.int64) | 1
    h = ints @ mix  # integer matmul wraps silently: a hash, not a number
    codes, uniques = pd.factorize(h)
    first = np.empty(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    rows = x[first]
    if np.array_equal(rows[codes], x):
        return rows, codes
    from calibration.agreement import distinct_rows

    return distinct_rows(x)


# -- items ----------------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CodedItems:
    """A label table as integer codes, one entry per (sample, item, annotator) label: what a caller with millions of
    item labels passes instead of rows (no tuple and no string per item). An item is (sample code, item code);
    `annotator` and `category` index `annotators` and `categories` (a negative category: no label, left out as a
    missing category is). As with rows, samples and items count in order of first appearance, and annotators and
    categories in the order of their names, so the figures are those of the rows the codes stand for, bit for bit.
    `samples`/`items`: names for a message (else the codes are named); `seconds`: time per unit, NaN for none."""

    sample: np.ndarray
    item: np.ndarray
    annotator: np.ndarray
    category: np.ndarray
    annotators: Sequence[str]
    categories: Sequence[Any]
    seconds: np.ndarray | None = None
    samples: Sequence[Any] | None = None
    items: Sequence[Any] | None = None

    def __len__(self) -> int:
        return len(self.sample)

    def take(self, which: Any) -> CodedItems:
        """The entries a boolean mask, index array or slice selects (the name lists kept whole)."""
        return CodedItems(self.sample[which], self.item[which], self.annotator[which], self.category[which],
                          self.annotators, self.categories,
                          None if self.seconds is None else self.seconds[which], self.samples, self.items)


@dataclass
class _Codes:
    """A table's labels as the figures use them: samples and units numbered in order of first appearance,
    annotators and categories in the order of their sorted names."""

    sample: np.ndarray
    n_samples: int
    unit: np.ndarray
    annotator: np.ndarray
    annotators: Any
    category: np.ndarray
    values: np.ndarray
    seconds: Any  # per label, or None
    describe: Callable[[int], tuple[Any, Any, Any]]  # label i -> its (annotator, item, sample), for a message


def _table(table: pd.DataFrame | Iterable[Any]) -> pd.DataFrame:
    if isinstance(table, pd.DataFrame):
        df = table
    else:
        rows = list(table)
        if rows and isinstance(rows[0], Mapping):
            df = pd.DataFrame(rows)
        else:
            width = len(rows[0]) if rows else 4
            df = pd.DataFrame.from_records(rows, columns=[*COLUMNS, "seconds"][:width])
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise ValueError(f"the label table lacks column(s) {', '.join(missing)}")
    return df[df["category"].notna()]


def sorted_label_values(raw_values: Any) -> np.ndarray:
    """The distinct categories in order (by type, then text, when they do not compare)."""
    try:
        return np.array(sorted(raw_values))
    except TypeError:
        return np.array(sorted(raw_values, key=lambda v: (str(type(v)), str(v))), dtype=object)


def _codes(table: CodedItems | pd.DataFrame | Iterable[Any]) -> _Codes:
    """The codes of a table of rows (or a DataFrame), or of a CodedItems renumbered the same way."""
    if isinstance(table, CodedItems):
        return _codes_of_coded(table)
    df = _table(table)
    if df.empty:
        raise ValueError("no labels to compare")
    sample_code, samples = pd.factorize(df["sample"], sort=False)
    unit_code = df.groupby(["sample", "item"], sort=False).ngroup().to_numpy()
    annot_code, annotators = pd.factorize(df["annotator"], sort=True)
    values = sorted_label_values(pd.unique(df["category"]))
    cat_code = pd.Index(values).get_indexer(df["category"])
    seconds = df["seconds"].to_numpy() if "seconds" in df.columns else None

    def describe(i: int) -> tuple[Any, Any, Any]:
        r = df.iloc[i]
        return r["annotator"], r["item"], r["sample"]

    return _Codes(sample_code, len(samples), unit_code, annot_code, annotators, cat_code, values, seconds, describe)


def _codes_of_coded(t: CodedItems) -> _Codes:
    """`_codes` of integer codes: numbered as `_codes` numbers the rows they stand for (first appearance; sorted
    names, equal names one code), on the distinct codes only: no string per label."""
    category = np.asarray(t.category)
    keep = category >= 0
    if not keep.any():
        raise ValueError("no labels to compare")
    every = bool(keep.all())

    def kept(codes: Any) -> np.ndarray:  # the kept entries as int64, masked before widening (one copy, not two)
        codes = np.asarray(codes)
        return codes.astype(np.int64) if every else codes[keep].astype(np.int64)

    item = kept(t.item)
    sample_code, in_order = _first_appearance(kept(t.sample))
    low = int(item.min())
    item -= low
    item += sample_code * (int(item.max()) + 1)  # (sample, item) -> one integer, in place
    unit_code = _units(item, sample_code, in_order)
    del item
    annot_code, annotators = _renumber(kept(t.annotator), t.annotators)
    category = kept(category)
    used = pd.unique(category)  # in order of first appearance, as pd.unique of the rows' categories
    raw = object_values([t.categories[c] for c in used])
    values = sorted_label_values(pd.unique(raw))
    remap = np.full(len(t.categories), -1, dtype=np.int64)
    remap[used] = pd.Index(values).get_indexer(raw)
    seconds = None if t.seconds is None else np.asarray(t.seconds)[keep]

    def describe(i: int) -> tuple[Any, Any, Any]:
        j = int(np.flatnonzero(keep)[i])  # found when a message needs it: no index per label kept
        s, it = int(t.sample[j]), int(t.item[j])
        return (t.annotators[int(t.annotator[j])], t.items[it] if t.items is not None else it,
                t.samples[s] if t.samples is not None else s)

    # int32 codes (fewer than 2**31 labels): the four are kept through every figure
    return _Codes(sample_code.astype(np.int32), int(sample_code.max()) + 1, unit_code.astype(np.int32),
                  annot_code.astype(np.int32), annotators, remap[category].astype(np.int32), values, seconds, describe)


def _first_appearance(codes: np.ndarray) -> tuple[np.ndarray, bool]:
    """(pd.factorize(codes)[0], whether the codes come grouped in ascending order): numbered in order of first
    appearance; without a hash table when they are grouped (agreement's tables: samples in order), each new one
    one more."""
    if len(codes) and (codes[1:] >= codes[:-1]).all():
        new = np.empty(len(codes), dtype=bool)
        new[0] = True
        np.not_equal(codes[1:], codes[:-1], out=new[1:])
        return np.cumsum(new) - 1, True
    return pd.factorize(codes, sort=False)[0], False


def _units(key: np.ndarray, sample: np.ndarray, in_order: bool, step: int = 1 << 20) -> np.ndarray:
    """pd.factorize(key)[0] of (sample, item) keys; with the samples grouped in order (`in_order`), a sample's keys
    never meet another's, so they are numbered about `step` labels at a time, cut between samples (a hash table of
    a million keys at most, not of every label: 1.2 GB at 17M labels)."""
    if not in_order or len(key) <= step:
        return pd.factorize(key, sort=False)[0]
    out = np.empty(len(key), dtype=np.int64)
    lo = base = 0
    while lo < len(key):
        hi = min(lo + step, len(key))
        if hi < len(key):  # on to the end of the sample the cut falls in
            hi = int(np.searchsorted(sample, sample[hi - 1], side="right"))
        codes, distinct = pd.factorize(key[lo:hi], sort=False)
        out[lo:hi] = codes + base
        base += len(distinct)
        lo = hi
    return out


def _renumber(codes: np.ndarray, names: Sequence[Any]) -> tuple[np.ndarray, Any]:
    """(codes of the sorted names the entries use, those names): pd.factorize(names of the entries, sort=True),
    made on the distinct codes only."""
    used = pd.unique(codes)
    new, uniques = pd.factorize(object_values([names[c] for c in used]), sort=True)
    remap = np.full(len(names), -1, dtype=np.int64)
    remap[used] = new
    return remap[codes], uniques


def object_values(values: list[Any]) -> np.ndarray:
    """A 1-d object array of `values` (np.array would make a 2-d one of tuples, or strings of fixed width)."""
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _no_twice(codes: _Codes) -> None:
    """Each annotator labels an item once: checked on the integer codes already made (hashing the three string
    columns again took a second at 1.2M rows)."""
    key = codes.unit.astype(np.int64) * len(codes.annotators) + codes.annotator
    if not (np.bincount(key) > 1).any():  # counted per (item, annotator): no hash table of every label
        return
    dup = pd.Series(key).duplicated().to_numpy()
    if dup.any():
        annotator, item, sample = codes.describe(int(np.argmax(dup)))
        raise ValueError(f"annotator {annotator!r} labels item {item!r} of sample {sample!r} twice")


def kappa_from_confusion(conf: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of (..., K, K) confusion counts: 1 - sum(w O) / sum(w E), as scikit-learn defines it."""
    n = conf.sum(axis=(-2, -1), keepdims=True)
    expected = conf.sum(-1, keepdims=True) * conf.sum(-2, keepdims=True) / np.where(n > 0, n, 1)
    return 1.0 - nan_ratio((conf * weights).sum((-2, -1)), (expected * weights).sum((-2, -1)))


def fleiss_from_sums(p_sum: np.ndarray, q_sum: np.ndarray, n_units: np.ndarray) -> np.ndarray:
    p_bar = nan_ratio(p_sum, n_units)
    p_e = (nan_ratio(q_sum, n_units[..., None]) ** 2).sum(-1)
    return nan_ratio(p_bar - p_e, 1.0 - p_e)


def alpha_from_coincidence(o: np.ndarray, level: Level, values: np.ndarray) -> np.ndarray:
    """Krippendorff's alpha from (..., K, K) coincidence matrices: 1 - (n - 1) sum(o d) / sum(n_c n_k d)."""
    n_c = o.sum(-1)
    n = n_c.sum(-1)
    k = o.shape[-1]
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(k), o.shape)
    elif level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]) ** 2, o.shape)
    else:  # ordinal: (sum of n_g from c to k - (n_c + n_k) / 2)^2, with the marginals of these very data
        cum = np.cumsum(n_c, -1)
        lo = np.minimum.outer(np.arange(k), np.arange(k))
        hi = np.maximum.outer(np.arange(k), np.arange(k))
        between = cum[..., hi] - cum[..., lo] + n_c[..., lo]
        delta = (between - (n_c[..., :, None] + n_c[..., None, :]) / 2) ** 2
    d_o = (o * delta).sum((-2, -1))
    d_e = (n_c[..., :, None] * n_c[..., None, :] * delta).sum((-2, -1))
    return 1.0 - nan_ratio((n - 1) * d_o, d_e)


def item_agreement(
    table: CodedItems | pd.DataFrame | Iterable[Any], *, level: Level = "nominal", n_boot: int = 1000, seed: int = 0,
    ci: float = 0.95,
) -> dict[str, Any]:
    """Agreement of several annotators on categorical (or ordinal/interval) labels of items.

    `table`: long form, one row per (sample, item, annotator) with its `category` (a DataFrame with those columns,
    or rows as tuples/mappings; an optional `seconds` column gives time per unit), or the same as integer codes
    (`CodedItems`: the same figures, bit for bit). An item is (sample, item).
    - pairs: Cohen's kappa per annotator pair on the items both labelled (weights: none for nominal, linear for
      ordinal, quadratic for interval), with raw agreement;
    - overall.kappa: Fleiss' kappa over items with >= 2 ratings. With unequal numbers of raters per item it is the
      usual generalisation (each item's agreement n_c(n_c-1) / (m(m-1)) and category shares n_c / m averaged over
      items), which is Fleiss' own formula when every item has the same number of raters. Always nominal;
    - overall.alpha: Krippendorff's alpha at `level` (units with a single rating are not pairable and drop out);
    - annotators: labels, samples, mean kappa with the others, mean seconds per unit when given.
    Each statistic comes with a percentile bootstrap interval over samples (`n_boot=0`: no interval).
    """
    return item_agreements([table], level=level, n_boot=n_boot, seed=seed, ci=ci)[0]


def item_agreements(
    tables: Sequence[CodedItems | pd.DataFrame | Iterable[Any]], *, level: Level = "nominal", n_boot: int = 1000, seed: int = 0,
    ci: float = 0.95,
) -> list[dict[str, Any]]:
    """`item_agreement` of each table, the same figures; tables over the same number of samples share one bootstrap
    draw (`boot_sums_shared`: each gets the replicates its own call would draw, counted once)."""
    if level not in KAPPA_WEIGHTS:
        raise ValueError(f"level must be nominal, ordinal or interval, got {level!r}")
    prepared = [_prepare_items(t, level, ci) for t in tables]
    sums: list[np.ndarray | None] = [None] * len(prepared)
    if n_boot > 0:
        by_n: dict[int, list[int]] = {}
        for i, p in enumerate(prepared):
            by_n.setdefault(p[0].shape[0], []).append(i)
        for group in by_n.values():
            for i, got in zip(group, boot_sums_shared([prepared[i][0] for i in group], n_boot, seed)):
                sums[i] = got
    return [finish(reps, n_boot) for (_, finish), reps in zip(prepared, sums)]


def _prepare_items(table: CodedItems | pd.DataFrame | Iterable[Any], level: Level, ci: float) -> tuple[np.ndarray, Any]:
    """(per-sample integer sums (n_samples, D'), finish(their replicate sums or None, n_boot) -> the figures) of a
    table. Only the D' of D columns that are not zero for every sample are kept (int32: the memory is per sample).

    Every column is a count, so replicate sums are exact: per annotator pair its confusion counts; per number m of
    ratings on a unit, the pairable units and the coincidences (ordered pairs of different raters giving values c, k:
    n_c n_k - [c = k] n_c), which give Fleiss' sums (sum_c n_c (n_c - 1) and n_c are its diagonal and row sums) and
    Krippendorff's coincidence matrix once divided by m (m - 1) and m - 1."""
    codes = _codes(table)
    _no_twice(codes)
    sample_code, unit_code, annot_code, cat_code = codes.sample, codes.unit, codes.annotator, codes.category
    annotators, values = codes.annotators, codes.values
    if level == "interval":
        try:
            numeric = values.astype(float)
        except (TypeError, ValueError):
            raise ValueError("interval level needs numeric categories") from None
    else:
        numeric = np.arange(len(values), dtype=float)
    n_s, n_u, n_a, k = codes.n_samples, int(unit_code.max()) + 1, len(annotators), len(values)
    unit_sample = np.zeros(n_u, dtype=np.int64)
    unit_sample[unit_code] = sample_code
    ratings = np.full((n_a, n_u), -1, dtype=np.int64)
    ratings[annot_code, unit_code] = cat_code
    m_u = np.bincount(unit_code, minlength=n_u)
    pairable = m_u >= 2
    ms = np.unique(m_u[pairable])  # the numbers of ratings a pairable unit has
    n_g = len(ms)
    group = np.searchsorted(ms, m_u)  # of pairable units only

    idx = np.arange(k)
    weights = {None: 1.0 - np.eye(k), "linear": np.abs(idx[:, None] - idx[None, :]).astype(float),
               "quadratic": ((idx[:, None] - idx[None, :]) ** 2).astype(float)}[KAPPA_WEIGHTS[level]]
    pairs = [(a, b) for a in range(n_a) for b in range(a + 1, n_a)]
    rated = ratings >= 0
    shared = rated.astype(np.int64)
    shared = shared @ shared.T  # items each two annotators both labelled
    pairs = [(a, b) for a, b in pairs if shared[a, b] > 0]  # annotators who never met form no pair
    blocks: list[tuple[np.ndarray, np.ndarray, int]] = []  # (kept counts, their cells, the block's width)
    pair_rows: list[dict[str, Any]] = []
    for a, b in pairs:
        both = rated[a] & rated[b]
        ra, rb = ratings[a][both], ratings[b][both]
        blocks.append((*_counts_by(unit_sample[both], ra * k + rb, n_s, k * k), k * k))
        # the pair's confusion counts through sklearn's formula (tested equal to cohen_kappa_score): importing
        # sklearn.metrics costs 1-2 s, a large part of a first `concord calibrate` that shows the human ceiling
        conf = np.bincount(ra * k + rb, minlength=k * k).reshape(k, k).astype(float)
        kappa = float(kappa_from_confusion(conf, weights)) if both.any() else math.nan
        pair_rows.append({"a": annotators[a], "b": annotators[b], "n_items": int(both.sum()),
                          "observed_agreement": float((ra == rb).mean()) if both.any() else math.nan,
                          "kappa": kappa})
    blocks.append((*_counts_by(unit_sample[pairable], group[pairable], n_s, n_g), n_g))
    ordered = [(i, j) for i in range(n_a) for j in range(n_a) if i != j and shared[i, j] > 0]
    blocks.append((*_coincidence_counts(ratings, rated, ordered, group, unit_sample, n_s, n_g, k), n_g * k * k))
    del ratings, rated  # per unit and annotator: not kept through the estimates
    per_sample = np.hstack([b for b, _, _ in blocks])
    offsets = np.cumsum([0, *(width for _, _, width in blocks)])
    columns = np.concatenate([off + used for (_, used, _), off in zip(blocks, offsets)])
    m_f = ms.astype(float)

    def full(compact: np.ndarray) -> np.ndarray:
        """(..., D) sums from the (..., D') kept columns."""
        out = np.zeros((*compact.shape[:-1], int(offsets[-1])))
        out[..., columns] = compact
        return out

    def stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return item_stats(sums, len(pairs), k, m_f, weights, level, numeric)

    # everything but the intervals now, so that the table and the per-item arrays are not kept for them
    _, fleiss_est, _ = stats(full(per_sample.sum(0, dtype=np.int64)))
    counts = np.bincount(unit_code.astype(np.int64) * k + cat_code, minlength=n_u * k).reshape(n_u, k).astype(float)
    alpha_est = (krippendorff_alpha(counts[pairable], numeric, level)
                 if pairable.any() and (counts[pairable].sum(0) > 0).sum() > 1 else math.nan)
    people = []
    for a, name in enumerate(annotators):
        mine = [r["kappa"] for r in pair_rows if name in (r["a"], r["b"])]
        finite = [x for x in mine if math.isfinite(x)]
        rows = annot_code == a
        row = {"annotator": name, "n_labels": int(rows.sum()),
               "n_samples": int(np.unique(sample_code[rows]).size),
               "mean_kappa": float(np.mean(finite)) if finite else math.nan}
        if codes.seconds is not None:
            secs = pd.to_numeric(pd.Series(codes.seconds[rows]), errors="coerce").dropna()
            row["seconds_per_unit"] = float(secs.mean()) if len(secs) else math.nan
        people.append(row)
    n_pairable, n_labels, categories = int(pairable.sum()), len(cat_code), values.tolist()

    def finish(sums: np.ndarray | None, n_boot: int) -> dict[str, Any]:
        return item_report(stats(full(sums)) if sums is not None else None, pair_rows, fleiss_est, alpha_est, ci,
                           head={"level": level, "n_samples": n_s, "n_items": n_u, "n_labels": n_labels,
                                 "n_boot": n_boot, "categories": categories},
                           n_pairable=n_pairable, people=people)

    return per_sample, finish


def item_report(reps: tuple[np.ndarray, np.ndarray, np.ndarray] | None, pair_rows: list[dict[str, Any]],
                fleiss_est: float, alpha_est: float, ci: float, *, head: dict[str, Any], n_pairable: int,
                people: list[dict[str, Any]]) -> dict[str, Any]:
    """The item figures' result: `head`'s keys, then overall, pairs (their kappas given intervals from `reps`,
    `item_stats` per replicate, or none) and annotators. Shared by `item_agreements` and its windowed form."""
    for p, row in enumerate(pair_rows):
        row["kappa"] = estimate_interval(row["kappa"], None if reps is None else reps[0][:, p], ci)
    overall = {"kappa": estimate_interval(float(fleiss_est), None if reps is None else reps[1], ci),
               "alpha": estimate_interval(alpha_est, None if reps is None else reps[2], ci),
               "n_items_pairable": n_pairable}
    return {**head, "overall": overall, "pairs": pair_rows, "annotators": people}


def item_stats(sums: np.ndarray, n_pairs: int, k: int, m_f: np.ndarray, weights: Any, level: Level,
               numeric: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pair kappas (..., P), fleiss (...), alpha (...)) from summed counts (..., D): P pairs' k x k confusions, then
    per group of m_f ratings its unit count and k x k coincidences. Shared by `item_agreements` and its windowed
    form (calibration/item_chunks.py)."""
    n_g = len(m_f)
    off = n_pairs * k * k
    conf = sums[..., :off].reshape(*sums.shape[:-1], n_pairs, k, k)
    units = sums[..., off:off + n_g]
    c = sums[..., off + n_g:].reshape(*sums.shape[:-1], n_g, k, k)
    pairs_of = m_f * (m_f - 1)  # ordered pairs of raters on a unit of m ratings
    p_sum = (np.trace(c, axis1=-2, axis2=-1) / pairs_of).sum(-1)
    q_sum = (c.sum(-1) / pairs_of[:, None]).sum(-2)
    o = (c / (m_f - 1)[:, None, None]).sum(-3)
    return kappa_from_confusion(conf, weights), fleiss_from_sums(p_sum, q_sum, units.sum(-1)), \
        alpha_from_coincidence(o, level, numeric)


def krippendorff_alpha(value_counts: np.ndarray, value_domain: np.ndarray, level: Level, chunk: int = 1 << 16) -> float:
    """`krippendorff.alpha(value_counts=..., value_domain=..., level_of_measurement=level)`, the same bits, without
    the package's (units, V, V) temporaries (four: 3.6 GB at 7M rubric units): each unit's coincidences made a chunk
    of units at a time and added in the order the package's sum over units adds them (one after the other: a
    cumulative sum continued across chunks), then the package's own expected coincidences and distances (tested equal
    to `krippendorff.alpha` on random counts)."""
    from krippendorff.krippendorff import (
        _distance_metric,
        _distances,
        _random_coincidences,
    )

    value_counts = np.asarray(value_counts)
    value_domain = np.asarray(value_domain)
    if len(value_domain) <= 1 or (value_counts.sum(axis=-1) <= 1).all():  # the package's refusals, its messages
        return float(krippendorff.alpha(value_counts=value_counts, value_domain=value_domain,
                                        level_of_measurement=level))
    dtype = np.dtype(np.float64)  # the package's default
    v = value_counts.shape[1]
    eye = np.eye(v)[np.newaxis, ...]
    o = None
    for lo in range(0, len(value_counts), chunk):
        part = value_counts[lo:lo + chunk]
        pairable = np.maximum(part.sum(axis=1), 2)
        unnormalized = part[..., np.newaxis] * part[:, np.newaxis, :] - part[:, np.newaxis, :] * eye
        terms = np.divide(unnormalized, (pairable - 1).reshape((-1, 1, 1)), dtype=dtype)
        o = (terms if o is None else np.concatenate([o[np.newaxis], terms])).cumsum(axis=0)[-1]
    n_v = o.sum(axis=0)
    e = _random_coincidences(n_v, dtype=dtype)
    d = _distances(value_domain, _distance_metric(level), n_v, dtype=dtype)
    return float(1 - (o * d).sum() / (e * d).sum())


def _counts_by(sample: np.ndarray, cell: np.ndarray, n_s: int, n_cells: int) -> tuple[np.ndarray, np.ndarray]:
    """((n_s, used) int32 counts of the entries in each (sample, cell), the used cells among n_cells): cells no
    entry falls in are left out (a pooled table's confusion is mostly such)."""
    used = np.flatnonzero(np.bincount(cell, minlength=n_cells))
    remap = np.zeros(n_cells, dtype=np.int64)
    remap[used] = np.arange(len(used))
    block = np.bincount(sample * len(used) + remap[cell], minlength=n_s * len(used))
    return block.astype(np.int32).reshape(n_s, len(used)), used


def _coincidence_counts(ratings: np.ndarray, rated: np.ndarray, ordered: Sequence[tuple[int, int]], group: np.ndarray,
                        unit_sample: np.ndarray, n_s: int, n_g: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """`_counts_by` of the coincidence cells of every ordered annotator pair, one pair at a time (the same counts:
    integers, summed in any order): no array of every pair's cells at once (six per unit with three annotators)."""
    n_cells = n_g * k * k
    present = np.zeros(n_cells, dtype=bool)
    for i, j in ordered:
        present[_coincidence_cells(ratings[i], ratings[j], group, k)] = True
    used = np.flatnonzero(present)
    remap = np.zeros(n_cells, dtype=np.int64)
    remap[used] = np.arange(len(used))
    block = np.zeros(n_s * len(used), dtype=np.int64)
    for i, j in ordered:
        cell = remap[_coincidence_cells(ratings[i], ratings[j], group, k)]
        block += np.bincount(unit_sample[rated[i] & rated[j]] * len(used) + cell, minlength=n_s * len(used))
    return block.astype(np.int32).reshape(n_s, len(used)), used


def _coincidence_cells(ri: np.ndarray, rj: np.ndarray, group: np.ndarray, k: int) -> np.ndarray:
    """The coincidence cell (group of the unit's rating count, value i, value j) of each unit both raters rated."""
    both = (ri >= 0) & (rj >= 0)
    return (group[both] * k + ri[both]) * k + rj[both]
