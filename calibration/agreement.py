"""Agreement statistics between raters (human vs human, human vs LLM) and bootstrap intervals.

Chance-corrected agreement is built in rather than left to spreadsheets: kappa and alpha say whether a metric's
labels are trustworthy before we calibrate anything against them.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np


def _same_length(a: Sequence[Any], b: Sequence[Any]) -> None:
    if len(a) != len(b):
        raise ValueError(f"rater sequences differ in length: {len(a)} != {len(b)}")
    if not len(a):
        raise ValueError("need at least one rated item")


def cohen_kappa(
    a: Sequence[Hashable], b: Sequence[Hashable], labels: Sequence[Hashable] | None = None,
    weights: Literal["linear", "quadratic"] | None = None,
) -> float:
    """Cohen's kappa of two raters (scikit-learn). NaN when undefined, i.e. both raters used one single label."""
    _same_length(a, b)
    if len(set(a) | set(b)) < 2:
        return math.nan  # expected agreement is 1: kappa is 0/0, report it as undefined instead of warning
    from sklearn.metrics import (
        cohen_kappa_score,  # lazy: scikit-learn costs ~1-2 s at start-up
    )
    return float(cohen_kappa_score(list(a), list(b), labels=None if labels is None else list(labels), weights=weights))


def mcc(y_true: Sequence[Hashable], y_pred: Sequence[Hashable]) -> float:
    """Matthews correlation coefficient (scikit-learn); 0.0 when a side is constant, as sklearn defines it."""
    _same_length(y_true, y_pred)
    from sklearn.metrics import matthews_corrcoef  # lazy: see cohen_kappa
    return float(matthews_corrcoef(list(y_true), list(y_pred)))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho (scipy); NaN when a side is constant."""
    _same_length(x, y)
    if len(x) < 2 or np.ptp(np.asarray(x, dtype=float)) == 0 or np.ptp(np.asarray(y, dtype=float)) == 0:
        return math.nan
    from scipy import stats  # lazy: scipy.stats is only needed by these statistics
    return float(stats.spearmanr(x, y).statistic)


def kendall(x: Sequence[float], y: Sequence[float]) -> float:
    """Kendall's tau-b (scipy); NaN when a side is constant."""
    _same_length(x, y)
    if len(x) < 2 or np.ptp(np.asarray(x, dtype=float)) == 0 or np.ptp(np.asarray(y, dtype=float)) == 0:
        return math.nan
    from scipy import stats  # lazy: scipy.stats is only needed by these statistics
    return float(stats.kendalltau(x, y).statistic)


def _is_missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Any]] | np.ndarray,
    level: Literal["nominal", "interval"] = "nominal",
) -> float:
    """Krippendorff's alpha over a raters x units matrix; None/NaN marks a missing rating.

    Built from the coincidence matrix: units with fewer than two ratings are not pairable and are dropped.
    NaN when undefined (fewer than two pairable values, or no variation at all).
    """
    rows = [list(r) for r in reliability_data]
    if not rows:
        raise ValueError("need at least one rater")
    n_units = len(rows[0])
    if any(len(r) != n_units for r in rows):
        raise ValueError("every rater row must have one entry per unit")
    values = sorted({v for r in rows for v in r if not _is_missing(v)}, key=lambda v: (str(type(v)), v))
    if level not in ("nominal", "interval"):
        raise ValueError(f"level must be 'nominal' or 'interval', got {level!r}")
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    # counts[u, c]: how many raters gave unit u value c
    counts = np.zeros((n_units, k), dtype=float)
    for r in rows:
        for u, v in enumerate(r):
            if not _is_missing(v):
                counts[u, index[v]] += 1
    m_u = counts.sum(axis=1)
    counts = counts[m_u >= 2]
    m_u = m_u[m_u >= 2]
    if counts.size == 0:
        return math.nan
    # o[c, k] = sum_u (n_uc * n_uk - [c == k] n_uc) / (m_u - 1)
    weighted = counts / (m_u - 1)[:, None]
    o = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(k)
    else:
        numeric = np.asarray(values, dtype=float)
        delta = (numeric[:, None] - numeric[None, :]) ** 2
    d_o = float((o * delta).sum())
    d_e = float((np.outer(n_c, n_c) * delta).sum()) / (n - 1)
    if d_e == 0:
        return math.nan
    return 1.0 - d_o / d_e


@dataclass(frozen=True, slots=True)
class BootstrapCI:
    estimate: float  # the statistic on the full data
    low: float
    high: float
    n_boot: int
    n_valid: int  # resamples whose statistic was finite (the interval uses only these)


def resample_indices(n: int, reps: int, rng: np.random.Generator) -> np.ndarray:
    """(reps, n) unit indices drawn with replacement: the one resampling draw every interval in Concord uses.
    int32 when n allows: numpy draws a bound below 2**32 the same way for int32 and int64 (same values), and half
    the memory is 40 MB less per chunk of 100 replicates at 100k units."""
    return rng.integers(0, n, size=(reps, n), dtype=np.int32 if n <= np.iinfo(np.int32).max else np.int64)


_PREFETCH_FROM = 1_000_000  # draws per chunk from which drawing the next chunk on a thread pays for the thread


def resample_index_chunks(n: int, n_boot: int, seed: int = 0, chunk: int = 64) -> Iterator[np.ndarray]:
    """The units each replicate draws, in chunks of (<= chunk, n) indices: the one stream `resample_counts` counts
    and `resample_sums` sums over (same seed and chunk, same replicates)."""
    rng = np.random.default_rng(seed)
    sizes = [min(chunk, n_boot - lo) for lo in range(0, n_boot, chunk)]
    if n * chunk < _PREFETCH_FROM or len(sizes) < 2:
        for size in sizes:
            yield resample_indices(n, size, rng)
        return
    # numpy draws without the GIL: one thread draws the next chunk (in order, from the one generator: the same
    # stream) while the caller counts this one, so the two costs overlap on a second core (each was about half of
    # evaluate's bootstrap at 100k samples)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="resample") as pool:
        ahead = pool.submit(resample_indices, n, sizes[0], rng)
        for size in sizes[1:]:
            drawn = ahead.result()
            ahead = pool.submit(resample_indices, n, size, rng)
            yield drawn
        yield ahead.result()


_DRAWS_PER_CHUNK = 64 * 125_000  # 32 MB of int32 indices (a second chunk is drawn meanwhile on a thread)


def draw_chunk(n: int) -> int:
    """Replicates per chunk of draws over n units: 64, fewer above 125k units, so the draws and their counts stay
    within a few tens of MB at any n. The same replicates as chunks of 64: the generator hands out one stream of
    int32 draws however the calls split it (PCG64 keeps the spare half of a 64-bit draw in its state; tested)."""
    return max(1, min(64, _DRAWS_PER_CHUNK // max(n, 1)))


def weighted_auroc(pos: np.ndarray, score_code: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
    """(reps,) weighted Mann-Whitney AUROC per row of weights w (reps, m) (bootstrap draw counts, or ones): `pos`
    (m,) 0/1, scores given as codes 0..k-1 of their sorted distinct values (`np.unique(s, return_inverse=True)`), so
    one ranking serves every replicate. Ties count one half; equals roc_auc_score for unit weights; NaN where a
    class is absent. (The judge and TRACe schemes' AUROC intervals.)"""
    from scipy import sparse  # only when an AUROC is drawn

    onehot = sparse.csr_matrix((np.ones(score_code.size), (np.arange(score_code.size), score_code)),
                               shape=(score_code.size, k))
    p = np.asarray((onehot.T @ (w * pos).T).T)  # (reps, k) positive weight per distinct score
    q = np.asarray((onehot.T @ (w * (1.0 - pos)).T).T)
    return auroc_from_counts(p, q)


def auroc_from_counts(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """`weighted_auroc` from (reps, k) positive and negative weight per distinct score (sorted): what a caller that
    counts a replicate's draws per (score, class) itself passes (draw counts are integers: any way of counting
    them gives the same figures)."""
    below = np.cumsum(q, axis=1) - q
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p * (below + 0.5 * q)).sum(axis=1) / (p.sum(axis=1) * q.sum(axis=1))


def resample_counts(n: int, n_boot: int, seed: int = 0, chunk: int = 64) -> Iterator[np.ndarray]:
    """Times each of `n` units is drawn, per replicate, in chunks of (<= chunk, n) float64 arrays.

    For statistics that are functions of per-unit sums (confusion counts, TP/FP/FN): a replicate's sums are then
    one matrix product, so thousands of replicates cost a few BLAS calls. Seeded; the chunk size is part of the
    stream (same seed and chunk, same replicates).
    """
    for idx in resample_index_chunks(n, n_boot, seed, chunk):
        yield draw_counts(idx, n)


def draw_counts(idx: np.ndarray, n: int) -> np.ndarray:
    """(reps, n) float64: how often each of n units is drawn in each row of unit indices `idx` (reps, size)."""
    reps = idx.shape[0]
    # one bincount per replicate written straight into the float array: the same counts as one bincount of
    # offset indices, without the offset, flat and int64 copies (a quarter of the memory at n = 100k)
    w = np.empty((reps, n), dtype=np.float64)
    for r in range(reps):
        w[r] = np.bincount(idx[r], minlength=n)
    return w


def _distinct_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distinct rows of the 2-d `x`, each row's index among them), in order of first appearance. Whole rows hashed
    at once when their bits say which are equal (`_hashed_rows`), else column by column with pandas' hash
    factorize: np.unique(axis=0) sorts whole rows, 0.9 s for 100k x 36 against 0.05 s here."""
    import pandas as pd

    hashed = _hashed_rows(x)
    if hashed is not None:
        return hashed
    codes = np.zeros(x.shape[0], dtype=np.int64)
    for column in x.T:
        col_codes, distinct = pd.factorize(column)
        codes, _ = pd.factorize(codes * len(distinct) + col_codes)  # < n * n: no overflow
    rows = np.empty((int(codes.max(initial=-1)) + 1, x.shape[1]), dtype=x.dtype)
    rows[codes] = x
    return rows, codes


def _hashed_rows(x: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """`_distinct_rows` by one hash per row (`hashed_block_rows` of x alone); None: go column by column."""
    hashed = hashed_block_rows([x])
    return None if hashed is None else (hashed[0][0], hashed[1])


def hashed_block_rows(blocks: Sequence[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray] | None:
    """The distinct rows of the blocks side by side (each block's part of them) and each row's index among them, in
    order of first appearance, by one hash per row: each row's 64-bit values mixed (`_mixed`) and combined by a fixed
    random odd integer per column (wrapping int64 arithmetic), classes found by pandas' factorize of the hashes and
    checked equal to their class's first row. None (the caller goes column by column) when equal values may differ
    in bits (a NaN, a -0.0), for a dtype other than 64-bit numbers, or on a collision (never seen). The same classes,
    in the same order, as column by column: the evaluate bootstrap's 100k x 144 counts took 0.35 s that way, 0.05 s
    so."""
    import pandas as pd

    if not blocks or any(b.ndim != 2 or b.dtype not in (np.int64, np.float64) for b in blocks):
        return None
    n, widths = blocks[0].shape[0], [b.shape[1] for b in blocks]
    if not n or not sum(widths) or any(b.shape[0] != n for b in blocks):
        return None
    bits = [np.ascontiguousarray(b).view(np.int64) for b in blocks]
    mix = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=sum(widths), dtype=np.int64) | 1
    mixes = np.split(mix, np.cumsum(widths)[:-1])
    h = np.zeros(n, dtype=np.int64)
    step = max(1, _HASH_CHUNK // sum(widths))  # rows at a time: no temporary the size of the blocks
    for lo in range(0, n, step):
        for b, b_bits, b_mix in zip(blocks, bits, mixes):
            part = b[lo : lo + step]
            if b.dtype == np.float64 and (np.isnan(part).any() or (np.signbit(part) & (part == 0)).any()):
                return None
            h[lo : lo + step] += _mixed(b_bits[lo : lo + step]) @ b_mix  # integer arithmetic wraps: a hash
    codes, uniques = pd.factorize(h)
    first = np.empty(len(uniques), dtype=np.int64)
    first[codes[::-1]] = np.arange(len(codes) - 1, -1, -1)
    rows = [b[first] for b in blocks]
    for row_part, b_bits in zip(rows, bits):
        row_bits = np.ascontiguousarray(row_part).view(np.int64)
        for lo in range(0, n, step):
            if not np.array_equal(row_bits[codes[lo : lo + step]], b_bits[lo : lo + step]):
                return None
    return rows, codes.astype(np.int64)


_HASH_CHUNK = 1 << 21  # values per chunk of `_hashed_rows` (16 MB)


def _mixed(bits: np.ndarray) -> np.ndarray:
    """Each 64-bit value through splitmix64's finaliser (wrapping uint64 arithmetic), as int64: every input bit
    reaches the low bits, which a product keeps (a float's low mantissa bits are zeros for whole numbers)."""
    z = bits.view(np.uint64)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return (z ^ (z >> np.uint64(31))).view(np.int64)


distinct_rows = _distinct_rows  # public: the rgb figures count draws per pattern of decisions

def resample_sums(per_unit: np.ndarray, n_boot: int, seed: int = 0, chunk: int = 64) -> np.ndarray:
    """(n_boot, M) column sums of `per_unit` (n, M) over `n_boot` bootstrap replicates of its n units (drawn with
    replacement), seeded.

    Units with equal rows are interchangeable in a sum, so the sums depend only on how many draws land in each
    class of equal rows. When classes are few (per-sample TP/FP/FN counts take few distinct values), a replicate
    draws those numbers directly: n uniform draws put Multinomial(n, class sizes / n) draws in the classes, the
    same bootstrap distribution as drawing every unit, at O(classes) per replicate instead of O(n) (the draws were
    a fifth of `concord evaluate` at 100k samples: 0.9 s -> 2 ms). Otherwise the replicates are
    `resample_counts(n, n_boot, seed, chunk)`'s, the one stream the other intervals use: the rows of `w @ per_unit`
    (with units of equal rows counted together when at most half are distinct)."""
    per_unit = np.asarray(per_unit, dtype=np.float64)
    n, m = per_unit.shape
    out = np.zeros((n_boot, m), dtype=np.float64)
    if n == 0:
        return out
    rows, inverse = _distinct_rows(per_unit)
    k = rows.shape[0]
    if k * MULTINOMIAL_SHARE <= n:
        sizes = np.bincount(inverse, minlength=k)
        counts = np.random.default_rng(seed).multinomial(n, sizes / n, size=n_boot)
        return counts.astype(np.float64) @ rows
    start = 0
    if 2 * k > n:  # mostly distinct: counting them together saves nothing
        for w in resample_counts(n, n_boot, seed, chunk):
            out[start : start + w.shape[0]] = w @ per_unit
            start += w.shape[0]
        return out
    for idx in resample_index_chunks(n, n_boot, seed, chunk):
        counts = np.empty((idx.shape[0], k), dtype=np.float64)
        for r in range(idx.shape[0]):
            counts[r] = np.bincount(inverse[idx[r]], minlength=k)
        out[start : start + idx.shape[0]] = counts @ rows
        start += idx.shape[0]
    return out


def resample_sums_blocks(blocks: Sequence[np.ndarray], n_boot: int, seed: int = 0, chunk: int = 64) -> np.ndarray:
    """`resample_sums` of the (n, m_i) blocks side by side, as float64: the same sums, without that matrix when the
    rows take few distinct values (the usual case: per-sample counts), where only the distinct rows are gathered.
    Violations evaluate's two configs at 100k samples were a 115 MB matrix (1.15 GB at 1M) joined for this."""
    n = blocks[0].shape[0] if blocks else 0
    hashed = hashed_block_rows(blocks) if n else None
    if hashed is not None:
        parts, inverse = hashed
        k = len(parts[0])
        if k * MULTINOMIAL_SHARE <= n:  # resample_sums' own branch, on the same classes and rows
            rows = np.ascontiguousarray(np.hstack(parts), dtype=np.float64)
            sizes = np.bincount(inverse, minlength=k)
            counts = np.random.default_rng(seed).multinomial(n, sizes / n, size=n_boot)
            return counts.astype(np.float64) @ rows
    return resample_sums(np.hstack(blocks).astype(np.float64) if blocks else np.zeros((0, 0)), n_boot, seed, chunk)


# Class counts are drawn (multinomial) when the units are at least this many times the classes: numpy's multinomial
# costs about 75 ns per class and replicate, a drawn and counted unit about 7 ns (measured at n = 100k).
MULTINOMIAL_SHARE = 16


def _value_counts(codes: np.ndarray, k: int, w: np.ndarray) -> np.ndarray:
    """(reps, k): the draws of each replicate (rows of draw counts `w`, (reps, n)) landing on each of k codes."""
    from scipy import sparse

    onehot = sparse.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))), shape=(k, codes.size))
    return np.asarray((onehot @ w.T).T)


def _centred_midranks(counts: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Average rank, minus the mean rank (N + 1) / 2, of each distinct value (sorted) drawn `counts` times:
    the ranks scipy's rankdata gives the repeated values, from cumulative sums instead of a sort."""
    below = np.cumsum(counts, axis=1) - counts
    return below + (counts + 1) / 2 - (total[:, None] + 1) / 2


def resampled_spearman(x: np.ndarray, y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman's rho (average ranks for ties) of each bootstrap replicate of the pairs (x, y): `w` (reps, n)
    holds how often each pair is drawn (a row of `resample_counts`); NaN where a side of the resample is constant.

    Exactly the rho of the resample itself (the pairs repeated as drawn, ranked by scipy's rankdata), without
    building or sorting it: ranks are computed once, as codes of the distinct values, and a replicate's average
    rank of a value is the draws below it plus half the draws of it (plus one half), a cumulative sum of counts.
    The sums of rank products are of multiples of 1/4 and exact in float64 up to ~10^7 draws."""
    x, y, w = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64), np.asarray(w, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != x.size or y.size != x.size:
        raise ValueError(f"need x, y of n values and (reps, n) draw counts; got {x.shape}, {y.shape}, {w.shape}")
    codes = spearman_codes(x, y)
    return spearman_from_counts(_value_counts(codes.pair, codes.px.size, w), codes)  # (reps, pairs) draws


@dataclass(frozen=True)
class SpearmanCodes:
    """The ranking `resampled_spearman` does once: each unit's distinct (x, y) pair (`pair`, codes 0..pairs-1) and
    each pair's x and y codes among the sorted distinct values of x and of y."""
    pair: np.ndarray
    px: np.ndarray
    py: np.ndarray
    kx: int
    ky: int


def spearman_codes(x: np.ndarray, y: np.ndarray) -> SpearmanCodes:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    _, cx = np.unique(x, return_inverse=True)
    _, cy = np.unique(y, return_inverse=True)
    kx, ky = int(cx.max(initial=-1)) + 1, int(cy.max(initial=-1)) + 1
    # distinct (x, y) pairs: a replicate's cross sum only depends on how often each is drawn
    pair_codes, pair = np.unique(cx.astype(np.int64) * max(ky, 1) + cy, return_inverse=True)
    return SpearmanCodes(pair.ravel(), pair_codes // max(ky, 1), pair_codes % max(ky, 1), kx, ky)


def spearman_from_counts(per_pair: np.ndarray, codes: SpearmanCodes) -> np.ndarray:
    """Spearman's rho per replicate from (reps, pairs) draws of each distinct pair (integers: however they were
    counted, the same rho)."""
    px, py = codes.px, codes.py
    total = per_pair.sum(axis=1)
    count_x, count_y = _value_counts(px, codes.kx, per_pair), _value_counts(py, codes.ky, per_pair)
    dx, dy = _centred_midranks(count_x, total), _centred_midranks(count_y, total)
    sxy = (per_pair * dx[:, px] * dy[:, py]).sum(axis=1)
    sxx, syy = (count_x * dx * dx).sum(axis=1), (count_y * dy * dy).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((sxx > 0) & (syy > 0), sxy / np.sqrt(sxx * syy), np.nan)


def percentile_interval(values: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """Percentile interval of the finite replicate values; (NaN, NaN) when none is finite."""
    v = np.asarray(values, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return (math.nan, math.nan)
    low, high = np.percentile(v, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(low), float(high))



def estimate_interval(estimate: float, replicates: np.ndarray | None, ci: float) -> dict[str, float | int]:
    """{estimate, low, high, n_valid}: the percentile interval of the replicates; low/high NaN without replicates
    (n_boot=0)."""
    if replicates is None or replicates.size == 0:
        return {"estimate": estimate, "low": math.nan, "high": math.nan, "n_valid": 0}
    low, high = percentile_interval(replicates, 1 - ci)
    return {"estimate": estimate, "low": low, "high": high, "n_valid": int(np.isfinite(replicates).sum())}


def nan_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den elementwise, NaN where den is 0 (a statistic undefined on that replicate, not an error)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1), np.nan)

def bootstrap_ci(
    values_or_groups: Sequence[Any] | np.ndarray,
    statistic: Callable[[Any], float],
    n_boot: int = 1000,
    seed: int = 0,
    alpha: float = 0.05,
) -> BootstrapCI:
    """Percentile bootstrap: resample the units (values, pairs or whole groups) with replacement.

    Pass groups (e.g. one list per sample) to resample samples rather than items within them. The statistic
    receives a list of units (or an array with the same leading axis for numpy input). Seeded, so reproducible.
    For statistics of per-unit sums, `resample_counts` gives the same kind of replicates without a Python call each.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if n_boot < 1:
        raise ValueError(f"n_boot must be positive, got {n_boot}")
    is_array = isinstance(values_or_groups, np.ndarray)
    units = values_or_groups if is_array else list(values_or_groups)
    n = len(units)
    if n == 0:
        raise ValueError("need at least one unit to bootstrap")
    estimate = float(statistic(units))
    draws = resample_indices(n, n_boot, np.random.default_rng(seed))
    stats_ = np.empty(n_boot)
    for b, idx in enumerate(draws):
        sample = units[idx] if is_array else [units[i] for i in idx]
        stats_[b] = statistic(sample)
    low, high = percentile_interval(stats_, alpha)
    return BootstrapCI(estimate, low, high, n_boot, int(np.isfinite(stats_).sum()))
