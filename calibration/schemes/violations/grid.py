"""Vectorised evaluation of many match configs at once: confusion counts against human labels.

Why it is fast and still exact:
- The overlap/rule thresholds do not depend on the weights, so for each (t_overlap, t_rule) the passing pairs
  are fixed. Greedy matching never lets a pair interact with a pair outside its connected component of the
  passing bipartite graph (gt and pred nodes), so each component is matched on its own. Most components are
  1x1 (always matched) or tiny.
- Components of one shape (R gts x C preds) are stacked into a dense (configs, components, R*C) score
  array. Sequential greedy is then `min(R, C)` rounds of argmax + "strike out the row and column": argmax
  returns the first maximum in row-major (gt, pred) order, which is exactly the spec's tie-break.
- Greedy picks in descending score, so with match threshold t the matched set is exactly the pairs this full
  pass (no match threshold) matches with score > t. One pass per weight vector gives every match threshold:
  each matched pair's score is binned against the sorted thresholds.
- Scores are computed with the same float operations, in the same order, as the scalar matcher, so equal
  scores tie and threshold comparisons agree bit for bit.
Weight vectors are processed in batches (one extra array axis), batches run on a small thread pool (numpy
releases the GIL in its kernels). With numba (kernel.py) each batch is one compiled pass that scores, matches
and counts component by component (issue #18: ~10x less CPU, identical counts); the numpy passes stay as the
fallback and as the reference of its property test. They also run a (t_overlap, t_rule) pass with little work
(below FUSED_MIN_WORK pair-weights): importing numba and loading the kernel from its cache costs ~0.6 s, more than
the numpy passes take on a small project (a first `concord calibrate` on the demo), so numba is imported on first
use.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from calibration.schemes.violations.config import COMPONENTS, MatchConfig, above
from calibration.schemes.violations.matching import match_arrays, weighted_score
from calibration.schemes.violations.optimal import optimal_counts
from calibration.schemes.violations.pairdata import PairData
from calibration.schemes.violations.space import SearchSpace
from calibration.search.progress import Cancelled, ProgressLike, check, report

Tick = Callable[[float], None]  # share (0..1) of the work done; may raise Cancelled

NC = len(COMPONENTS)
OVERLAP, RULE = COMPONENTS.index("overlap"), COMPONENTS.index("rule")  # the components with their own thresholds
PATTERN_BITS = 1 << np.arange(NC)
BATCH_BYTES = 48 << 20  # size of one batch's score array (numpy path); keeps temporaries inside a few hundred MB
FUSED_BATCH = 256  # weight vectors per fused-kernel call: its vector lanes (longer rows: less overhead per row)
LANES = 8  # the fused kernel's lanes padded to a multiple of this (8 doubles: an AVX-512 vector, two AVX2 ones): a
# batch of 251 weight vectors (1,001 split in 4) costs ~9% more per weight vector than one of 256, its loops ending
# in scalar iterations
HIST_BYTES = 32 << 20  # cap of one fused call's (weights, units x 2, thresholds) counts when there are many units
NO_SCORE = -np.finfo(np.float64).max
FUSED_MIN_WORK = 1 << 20  # pair-weights of one gate pair below which the numpy passes run (~0.03-0.05 s of them)


@functools.cache
def fused_available() -> bool:
    """Whether the compiled kernel can run (numba importable); imports it, so call it only when it would run."""
    from calibration.schemes.violations import kernel

    return kernel.AVAILABLE


def passing_mask(comps: np.ndarray, t_overlap: float, t_rule: float) -> np.ndarray:
    """Pairs that pass the strict component thresholds."""
    return above(comps[:, OVERLAP], t_overlap) & above(comps[:, RULE], t_rule)


def weight_sums(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(total weight per config, denominator per (config, presence pattern)), summed in COMPONENTS order."""
    W = np.asarray(W, dtype=np.float64)
    total = np.zeros(W.shape[0])
    den = np.zeros((W.shape[0], 1 << NC))
    bits = (np.arange(1 << NC)[:, None] & PATTERN_BITS[None, :]) > 0  # (32, 5)
    for i in range(NC):
        total = total + W[:, i]
        den = den + np.where(bits[None, :, i], W[:, i : i + 1], 0.0)
    return total, den


def combine(num: np.ndarray, den: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Weighted score = (W_total * sum(w*c present)) / sum(w present), as the matcher computes it.

    A pair with no weighted component present has no score (NaN in the matcher): it fails every finite match
    threshold and ranks after all scored pairs. Here it gets NO_SCORE, the lowest finite float, which orders
    and bins the same way (only t_match = -inf lets it match).
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.multiply(num, total, out=num)  # in place: num is a fresh (B, N) array
        np.divide(s, den, out=s)
    bad = den <= 0
    if bad.any():
        s[np.broadcast_to(bad, s.shape)] = NO_SCORE
    return s


@dataclass(frozen=True)
class _Bucket:
    """All components of one shape R x C, laid out densely: entry (k, r*C + c)."""

    R: int
    C: int
    n: int  # number of components
    comps_t: np.ndarray  # (5, n*R*C) components with NaN -> 0
    pattern: np.ndarray  # (n*R*C,) presence bitmask
    valid: np.ndarray  # (n*R*C,) bool: a passing pair sits here
    pos: np.ndarray  # (n*R*C,) index into PairData, -1 for padding
    uh: np.ndarray  # (n*R*C,) unit*2 + human (0 for padding)
    all_valid: bool


@dataclass(frozen=True)
class Structure:
    """The passing pairs of one (t_overlap, t_rule), decomposed into shape buckets."""

    buckets: tuple[_Bucket, ...]
    n_passing: int


def structure(data: PairData, t_overlap: float, t_rule: float) -> Structure:
    """Decompose the passing pairs into connected components and stack them by shape."""
    pp = np.flatnonzero(passing_mask(data.comps, t_overlap, t_rule))
    if pp.size == 0:
        return Structure((), 0)
    g, a, b = data.group[pp], data.gt[pp], data.pred[pp]
    ma, mb = int(a.max()) + 1, int(b.max()) + 1
    gt_u, gt_id = np.unique(g * ma + a, return_inverse=True)
    pr_u, pr_id = np.unique(g * mb + b, return_inverse=True)
    n1, n2 = gt_u.size, pr_u.size
    adj = coo_matrix((np.ones(pp.size, dtype=np.int8), (gt_id, n1 + pr_id)), shape=(n1 + n2, n1 + n2))
    ncomp, labels = connected_components(adj, directed=False)
    row = _local_rank(labels[:n1], ncomp)[gt_id]  # node ids are sorted by (group, index): rank = order in comp
    col = _local_rank(labels[n1:], ncomp)[pr_id]
    R = np.bincount(labels[:n1], minlength=ncomp)
    C = np.bincount(labels[n1:], minlength=ncomp)
    comp = labels[gt_id]
    pattern = (~np.isnan(data.comps[pp]) * PATTERN_BITS).sum(axis=1)
    uh = data.unit[pp] * 2 + data.human[pp]
    buckets = []
    shape_key = R * (int(C.max()) + 1) + C
    # components and passing pairs grouped by shape once, so each bucket below costs its own size, not a pass over
    # every component and pair (70 shapes x 1M pairs at 3.6M); within a shape by unit (a component lies in one
    # group, so in one unit), so the fused kernel empties its counters once per unit, then by id
    comp_unit = np.zeros(ncomp, dtype=np.int64)
    comp_unit[comp] = data.unit[pp]
    comp_order = np.lexsort((comp_unit, shape_key))
    keys, comp_start, comp_count = np.unique(shape_key[comp_order], return_index=True, return_counts=True)
    local = np.empty(ncomp, dtype=np.int64)  # index of each component among the components of its shape
    local[comp_order] = np.arange(ncomp) - np.repeat(comp_start, comp_count)
    pair_order = np.argsort(shape_key[comp], kind="stable")
    pair_end = np.cumsum(np.bincount(np.searchsorted(keys, shape_key[comp]), minlength=keys.size))
    for i, key in enumerate(keys):
        first = comp_order[comp_start[i]]
        r, c = int(R[first]), int(C[first])
        sel = pair_order[pair_end[i - 1] if i else 0:pair_end[i]]
        rc = r * c
        n_k = int(comp_count[i])
        cell = local[comp[sel]] * rc + row[sel] * c + col[sel]
        size = n_k * rc
        pos = np.full(size, -1, dtype=np.int64)
        pos[cell] = pp[sel]
        valid = pos >= 0
        comps_t = np.zeros((NC, size))
        comps_t[:, cell] = np.nan_to_num(data.comps[pp[sel]], nan=0.0).T
        pat = np.zeros(size, dtype=np.int64)
        pat[cell] = pattern[sel]
        uhb = np.zeros(size, dtype=np.int64)
        uhb[cell] = uh[sel]
        buckets.append(_Bucket(r, c, n_k, comps_t, pat, valid, pos, uhb, bool(valid.all())))
    return Structure(tuple(buckets), int(pp.size))


def _local_rank(labels: np.ndarray, ncomp: int) -> np.ndarray:
    """Rank of each node among the nodes of its component, in node-id order."""
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(np.bincount(labels, minlength=ncomp))[:-1]])
    rank = np.empty(labels.size, dtype=np.int64)
    rank[order] = np.arange(labels.size) - starts[labels[order]]
    return rank


def _bucket_scores(bk: _Bucket, W: np.ndarray, total: np.ndarray, den_pat: np.ndarray) -> np.ndarray:
    """(B, n*R*C) scores, -inf where no passing pair sits; same float ops and order as the scalar matcher."""
    num: np.ndarray | None = None
    tmp = np.empty((W.shape[0], bk.pattern.size))
    for i in range(NC):
        if not W[:, i].any():
            continue  # adding 0 * c leaves every partial sum unchanged
        np.multiply(W[:, i : i + 1], bk.comps_t[i], out=tmp)
        if num is None:
            num, tmp = tmp, np.empty_like(tmp)
        else:
            num += tmp
    if num is None:
        num = np.zeros_like(tmp)
    s = combine(num, den_pat[:, bk.pattern], total[:, None])
    if not bk.all_valid:
        s[:, ~bk.valid] = -np.inf
    return s


def greedy_pass(st: Structure, W: np.ndarray) -> Iterator[tuple[_Bucket, np.ndarray, np.ndarray, np.ndarray | None]]:
    """Full greedy pass (no match threshold) for a batch of weight vectors.

    Yields (bucket, cell, score, ok): for every config b and component k one matched cell index into the
    bucket's flat layout, its score, and whether a match was made (None = always).
    """
    total, den_pat = weight_sums(W)
    B = W.shape[0]
    for bk in st.buckets:
        S = _bucket_scores(bk, W, total, den_pat)
        rc = bk.R * bk.C
        if rc == 1:
            yield bk, np.broadcast_to(np.arange(bk.n), (B, bk.n)), S, None
            continue
        X = S.reshape(B, bk.n, rc)
        X4 = S.reshape(B, bk.n, bk.R, bk.C)
        base = np.arange(bk.n) * rc
        bi, ki = np.arange(B)[:, None], np.arange(bk.n)[None, :]
        steps = min(bk.R, bk.C)
        for step in range(steps):
            am = X.argmax(axis=2)
            val = X[bi, ki, am]
            ok = val > -np.inf
            if not ok.any():
                break
            yield bk, base + am, val, ok
            if step + 1 < steps:  # strike out the matched gt (row) and prediction (column)
                r, c = np.divmod(am, bk.C)
                X4[bi, ki, r, :] = -np.inf
                X4[bi, ki, :, c] = -np.inf


def n_below(thresholds: np.ndarray, val: np.ndarray) -> np.ndarray:
    """How many (sorted) thresholds lie strictly below each score: decision "score > t_j" holds iff j < result."""
    if thresholds.size > 24:
        return np.searchsorted(thresholds, val)
    k = np.zeros(val.shape, dtype=np.uint8)  # a few compares beat a binary search per element
    tmp = np.empty(val.shape, dtype=bool)
    for t in thresholds.tolist():
        np.greater(val, t, out=tmp)
        k += tmp.view(np.uint8)
    return k


def count_batch(st: Structure, W: np.ndarray, thresholds: np.ndarray, n_units: int,
                fused: bool | None = None) -> np.ndarray:
    """Machine matches per (config, match threshold, unit, human label): int64 (B, T, U, 2).

    `fused` (default: when numba is there) runs the compiled one-pass kernel (kernel.count_bucket), else the numpy
    passes below; both give the same counts."""
    B, T = W.shape[0], thresholds.size
    U2 = 2 * n_units
    if fused_available() if fused is None else fused:
        from calibration.schemes.violations import kernel

        W = np.asarray(W, dtype=np.float64)
        pad = -B % LANES  # lanes padded with copies of the first weight row, whose counts are dropped
        W = np.ascontiguousarray(np.concatenate([W, np.repeat(W[:1], pad, axis=0)]) if pad else W)
        tm = np.ascontiguousarray(thresholds, dtype=np.float64)
        total, _ = weight_sums(W)
        h = np.zeros((B + pad, U2, T + 1), dtype=np.int64)
        for bk in st.buckets:
            kernel.count_bucket(bk.R, bk.C, bk.n, bk.comps_t, bk.pattern, bk.valid, bk.uh, W, total, tm, h)
        h = h[:B]
    else:
        hist = np.zeros(B * U2 * (T + 1), dtype=np.int64)
        b_idx = np.arange(B)[:, None] * U2
        for bk, cell, val, ok in greedy_pass(st, W):
            k = n_below(thresholds, val)
            key = (b_idx + bk.uh[cell]) * (T + 1) + k
            hist += np.bincount((key if ok is None else key[ok]).ravel(), minlength=hist.size)
        h = hist.reshape(B, U2, T + 1)
    above = np.cumsum(h[:, :, ::-1], axis=2)[:, :, ::-1][:, :, 1:]  # (B, U2, T): matches with score > t_j
    return np.ascontiguousarray(above.transpose(0, 2, 1)).reshape(B, T, n_units, 2)


def matched_pairs(data: PairData, config: MatchConfig) -> np.ndarray:
    """Bool mask over `data` pairs: the pairs one config matches, by the violations matcher itself."""
    scores = weighted_score(data.comps, config.weight_vector())
    th = config.thresholds
    ok = passing_mask(data.comps, th.overlap, th.rule) & above(scores, th.match)
    return match_arrays(data.group, data.gt, data.pred, scores, ok, data.group_n_gt, data.group_n_pred,
                        config.matching)


def _batch_size(n_cells: int, n_weights: int, fused: bool, n_units: int = 1, n_thresholds: int = 1,
                n_jobs: int = 1) -> int:
    if fused:  # the fused kernel keeps no (weights x cells) array; its counts are (batch, units x 2, thresholds + 1)
        cap = max(8, min(FUSED_BATCH, HIST_BYTES // (16 * n_units * (n_thresholds + 1))))
        n_batches = -(-n_weights // cap)
        if n_weights >= 8 * n_jobs:  # as many batches for every thread, of one size
            n_batches = -(-n_batches // n_jobs) * n_jobs
        return int(max(1, -(-n_weights // n_batches)))
    return int(max(1, min(n_weights, BATCH_BYTES // max(1, 8 * n_cells))))


def threshold_counts(
    data: PairData, W: np.ndarray, tm: np.ndarray, t_overlap: float, t_rule: float, matching: str = "greedy",
    n_jobs: int | None = None, tick: Tick | None = None,
) -> np.ndarray:
    """Machine matches by human label for every weight row x sorted match threshold at one (t_overlap, t_rule):
    int64 (n_weights, n_match, U, 2). `tick(share)` after each batch and while waiting (it may cancel)."""
    nw = W.shape[0]
    out = np.zeros((nw, tm.size, data.n_units, 2), dtype=np.int64)
    if matching == "optimal":
        done = 0

        def step(n: int) -> None:
            nonlocal done
            done += n
            if tick is not None:
                tick(done / nw)

        out[:] = optimal_counts(data, W, passing_mask(data.comps, t_overlap, t_rule), tm, step)
        return out
    st = structure(data, t_overlap, t_rule)
    fused = st.n_passing * nw >= FUSED_MIN_WORK and fused_available()
    n_jobs = n_jobs or min(2, os.cpu_count() or 1)
    bs = _batch_size(sum(bk.pattern.size for bk in st.buckets), nw, fused, data.n_units, tm.size, n_jobs)
    queue = [(lo, min(nw, lo + bs)) for lo in range(0, nw, bs)]
    done = 0
    with ThreadPoolExecutor(max_workers=n_jobs) as pool:
        pending: dict[Future[np.ndarray], tuple[int, int]] = {}
        try:
            while queue or pending:
                while queue and len(pending) < 2 * n_jobs:
                    lo, hi = queue.pop(0)
                    pending[pool.submit(count_batch, st, W[lo:hi], tm, data.n_units, fused)] = (lo, hi)
                finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                for f in finished:
                    lo, hi = pending.pop(f)
                    out[lo:hi] = f.result()
                    done += hi - lo
                if tick is not None:
                    tick(done / nw)
        except Cancelled:
            for f in pending:
                f.cancel()
            raise
    return out


def evaluate_space(
    data: PairData, space: SearchSpace, progress: ProgressLike | None = None,
    cancel: Callable[[], bool] | object | None = None, n_jobs: int | None = None,
) -> np.ndarray:
    """Counts of machine matches for every config of `space`: int64 (n_o, n_r, n_w, n_m, U, 2) by human label.

    With TP = counts[..., 1], FP = counts[..., 0], every pair-level confusion count follows from the per-unit
    totals in `data`. Progress is in pair-weights (weights x passing pairs) so it tracks the real work.
    """
    W = space.weight_grid()
    tm = np.asarray(space.match, dtype=np.float64)
    no, nr, nw, nm = space.shape
    out = np.zeros((no, nr, nw, nm, data.n_units, 2), dtype=np.int64)
    pairs = space.threshold_pairs()
    work = [nw * max(1, int(passing_mask(data.comps, to, tr).sum())) for to, tr in pairs]
    total, before = sum(work), 0
    report(progress, 0, total, "evaluating configs")
    for i, (to, tr) in enumerate(pairs):  # one structure alive at a time keeps memory flat
        def tick(share: float, i: int = i, before: int = before) -> None:
            report(progress, before + int(share * work[i]), total, "evaluating configs")
            check(progress, cancel)

        out[i // nr, i % nr] = threshold_counts(data, W, tm, to, tr, space.matching, n_jobs, tick)
        before += work[i]
    return out


def evaluate_configs(data: PairData, configs: Sequence[MatchConfig]) -> np.ndarray:
    """Counts (n_configs, U, 2) for a few explicit configs (presets, the chosen ones)."""
    out = np.zeros((len(configs), data.n_units, 2), dtype=np.int64)
    for i, cfg in enumerate(configs):
        m = matched_pairs(data, cfg)
        np.add.at(out[i], (data.unit[m], data.human[m].astype(np.int64)), 1)
    return out
