"""The grid's fused kernel: scoring, greedy pass and threshold counting in one pass per component (issues #18, #28).

`grid.count_batch` (numpy) materialises a (weights x cells) score array per shape bucket and runs `min(R, C)`
argmax rounds over it, then bins every matched score with a separate histogram. Here compiled loops do all of it
one component at a time with the batch's weight vectors as the vector lanes: every valid cell of the component is
scored under all B weight vectors (a row of B lanes), the greedy runs on those rows, lane by lane at once, and each
round's picks are counted. The same float operations in the same order as the numpy path (score = (sum_i w_i * c_i)
* W_total / sum(w present), NO_SCORE where no weighted component is present), the same greedy (first maximum in
row-major (gt, pred) order, strict >, as numpy's argmax; strike its row and column), the same thresholds (a pick
counts for match threshold t iff t < score, i.e. `np.searchsorted(..., "left")` bins). So the counts equal the
numpy path's exactly (tests/test_violations_kernel.py checks it on random tables).

Why weight vectors as lanes (issue #28): a component's cells, row and column are then scalars shared by every
lane, so empty cells cost nothing (they are skipped, not padded and scored), the present weights' sum is one
contiguous row of a (32 patterns x B) table, and no cell is gathered or scattered. Why counters per threshold, not a
histogram scatter: each round's picks (a row of B lanes) are added to (thresholds x B) uint16 counters, one vector
pass per threshold, the human picks in the high byte. Components arrive sorted by unit (grid.structure), so the
counters are emptied into the (B, unit x human, bins) histogram once per unit (or every 255 rows, before a byte
could overflow). Beyond LINEAR_MAX thresholds each pick is binned by bisection instead.

Why numba: the work is (passing pairs x weight vectors), 10^9 small steps on the default `--components ha` grid,
and the greedy pass has a data-dependent loop that numpy can only express as repeated full-array passes. numba
compiles it once (cached on disk next to this file, or in numba's user cache) and releases the GIL, so the grid's
thread pool uses every core. It is a declared dependency; if it cannot be imported the numpy path runs (same
numbers, slower) -- `AVAILABLE` says which.
"""
from __future__ import annotations

import numpy as np

try:  # optional at import: numpy fallback in grid.count_batch
    from numba import njit

    AVAILABLE = True
except ImportError:  # pragma: no cover - exercised only where numba is missing
    AVAILABLE = False

    def njit(*args, **kwargs):  # type: ignore[no-redef]
        def wrap(fn):  # noqa: ANN001, ANN202
            return fn
        return wrap if not args or not callable(args[0]) else args[0]

NO_SCORE = -np.finfo(np.float64).max  # same as grid.NO_SCORE (a pair with no weighted component present)
NC = 5  # components of a pair (config.COMPONENTS)
SORT_ABOVE = 64  # components with more cells than this take the sorted greedy (n log n) instead of argmax rounds
LINEAR_MAX = 24  # up to this many match thresholds picks are counted per threshold, above it binned by bisection
ROWS_MAX = 255  # pick rows between two empties of the uint16 counters (a byte each for all picks and human picks)
HUMAN = 256  # a human-matched pick's increment: its own count in the high byte


@njit(nogil=True, cache=True, error_model="numpy")
def _bin(tm: np.ndarray, val: float) -> int:
    """How many sorted thresholds lie strictly below `val` (searchsorted, side left)."""
    lo, hi = 0, tm.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if tm[mid] < val:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True, error_model="numpy")
def den_table(W: np.ndarray) -> np.ndarray:
    """(32, B): the present weights' sum per presence pattern and weight row, summed from 0.0 in COMPONENTS order
    exactly as grid.weight_sums sums it (adding 0.0 for an absent component)."""
    B = W.shape[0]
    den = np.empty((1 << NC, B))
    for p in range(1 << NC):
        for b in range(B):
            d = 0.0
            for i in range(NC):
                d += W[b, i] if p & (1 << i) else 0.0
            den[p, b] = d
    return den


@njit(nogil=True, cache=True, error_model="numpy")
def score_row(out: np.ndarray, Wt: np.ndarray, total: np.ndarray, den: np.ndarray, c0: float, c1: float,
              c2: float, c3: float, c4: float) -> None:
    """One pair's score under every weight row (Wt is W transposed): the numpy path's operations in its order
    (COMPONENTS order, then * total / den); NO_SCORE where den is not positive."""
    w0, w1, w2, w3, w4 = Wt[0], Wt[1], Wt[2], Wt[3], Wt[4]
    for b in range(out.size):
        num = w0[b] * c0
        num += w1[b] * c1
        num += w2[b] * c2
        num += w3[b] * c3
        num += w4[b] * c4
        d = den[b]
        v = (num * total[b]) / d
        out[b] = v if d > 0 else NO_SCORE


@njit(nogil=True, cache=True, error_model="numpy")
def _count_row(acc: np.ndarray, tm: np.ndarray, best: np.ndarray, inc: np.ndarray) -> None:
    """Count one row of picks (best[b], increment inc[b]: 0 no pick, 1, or 1 + HUMAN) for every threshold t < best:
    a vector pass per threshold. (Ending at the first threshold no pick is above, or skipping those below the row's
    smallest pick, cost more than the passes they saved: the reductions they need stay scalar.)"""
    for t in range(tm.size):
        tt = tm[t]
        row = acc[t]
        for b in range(best.size):
            row[b] += inc[b] if tt < best[b] else np.uint16(0)


@njit(nogil=True, cache=True, error_model="numpy")
def _count_one(acc: np.ndarray, tm: np.ndarray, best: np.ndarray, inc: np.uint16) -> None:
    """_count_row for a row of one cell's scores: one increment for every lane."""
    for t in range(tm.size):
        tt = tm[t]
        row = acc[t]
        for b in range(best.size):
            row[b] += inc if tt < best[b] else np.uint16(0)


@njit(nogil=True, cache=True, error_model="numpy")
def _empty(acc: np.ndarray, hist: np.ndarray, u: int) -> None:
    """Move the counters of unit u (picks above threshold t: all in the low byte, human ones in the high byte) into
    hist[b, 2u + human, bin] (bin k: k thresholds below the score), and zero them."""
    T, B = acc.shape
    for b in range(B):
        hn = hist[b, 2 * u]
        hh = hist[b, 2 * u + 1]
        nxt_n = 0  # non-human / human picks above threshold t + 1
        nxt_h = 0
        for t in range(T - 1, -1, -1):
            a = np.int64(acc[t, b])
            ah = a >> 8
            an = (a & 255) - ah
            hn[t + 1] += an - nxt_n
            hh[t + 1] += ah - nxt_h
            nxt_n = an
            nxt_h = ah
    acc[:] = 0


@njit(nogil=True, cache=True, error_model="numpy")
def _bin_row(hist: np.ndarray, tm: np.ndarray, best: np.ndarray, inc: np.ndarray, u: int) -> None:
    """Many thresholds: each lane's pick binned by bisection into hist directly."""
    for b in range(best.size):
        if inc[b] != 0:
            hist[b, 2 * u + (inc[b] >> 8), _bin(tm, best[b])] += 1


@njit(nogil=True, cache=True, error_model="numpy")
def count_bucket(R: int, C: int, n: int, comps_t: np.ndarray, pattern: np.ndarray, valid: np.ndarray,
                 uh: np.ndarray, W: np.ndarray, total: np.ndarray, tm: np.ndarray,
                 hist: np.ndarray) -> None:
    """Add one shape bucket's matches to hist[b, unit*2 + human, n_below(score)] for every weight row b.

    Component k's cells are k*R*C + r*C + c (row-major); a component lies in one unit (units partition groups).
    Bin 0 (no threshold below the score) is not filled: count_batch only reads the counts above each threshold."""
    B = W.shape[0]
    T = tm.size
    rc = R * C
    steps = min(R, C)
    linear = T <= LINEAR_MAX and steps <= ROWS_MAX  # else picks are binned straight into hist
    Wt = np.ascontiguousarray(W.T)
    den = den_table(W)
    acc = np.zeros((T, B), dtype=np.uint16)
    S = np.empty((rc, B))  # row q: score of the component's q-th valid cell under every weight row
    best = np.empty(B)
    br = np.empty(B, dtype=np.int64)
    bc = np.empty(B, dtype=np.int64)
    inc = np.empty(B, dtype=np.uint16)
    qr = np.empty(rc, dtype=np.int64)
    qc = np.empty(rc, dtype=np.int64)
    qi = np.empty(rc, dtype=np.uint16)
    neg = np.empty(rc)
    used_r = np.zeros(R, dtype=np.bool_)
    used_c = np.zeros(C, dtype=np.bool_)
    sorted_path = rc > SORT_ABOVE and steps > 2
    cur = -1
    rows = 0
    for k in range(n):
        lo = k * rc
        nv = 0
        u = -1
        for j in range(rc):
            src = lo + j
            if valid[src]:
                if u < 0:
                    u = uh[src] >> 1
                elif uh[src] >> 1 != u:
                    raise ValueError("a component's pairs lie in different units: units must partition the groups")
                qr[nv] = j // C
                qc[nv] = j - (j // C) * C
                qi[nv] = 1 + HUMAN * (uh[src] & 1)
                score_row(S[nv], Wt, total, den[pattern[src]], comps_t[0, src], comps_t[1, src], comps_t[2, src],
                          comps_t[3, src], comps_t[4, src])
                nv += 1
        if nv == 0:
            continue
        if linear and (u != cur or rows + steps > ROWS_MAX):
            if cur >= 0:
                _empty(acc, hist, cur)
            cur = u
            rows = 0
        rows += steps
        if rc == 1:
            if linear:
                _count_one(acc, tm, S[0], qi[0])
            else:
                inc[:] = qi[0]
                _bin_row(hist, tm, S[0], inc, u)
            continue
        if sorted_path:  # per lane: a stable descending sort, then take cells whose row and column are free
            for b in range(B):
                for q in range(nv):
                    neg[q] = -S[q, b]
                order = np.argsort(neg[:nv], kind="mergesort")
                used_r[:] = False
                used_c[:] = False
                taken = 0
                for q in order:
                    x = S[q, b]
                    if x == -np.inf or taken == steps:
                        break
                    r, c = qr[q], qc[q]
                    if used_r[r] or used_c[c]:
                        continue
                    used_r[r] = True
                    used_c[c] = True
                    taken += 1
                    if linear:
                        for t in range(T):
                            if tm[t] < x:
                                acc[t, b] += qi[q]
                    else:
                        hist[b, 2 * u + (qi[q] >> 8), _bin(tm, x)] += 1
            continue
        for step in range(steps):
            for b in range(B):
                best[b] = -np.inf
                inc[b] = 0
            if step + 1 < steps:  # a later round strikes this pick's row and column: track them
                for b in range(B):
                    br[b] = -1
                    bc[b] = -1
                for q in range(nv):
                    row = S[q]
                    r, c, iq = qr[q], qc[q], qi[q]
                    for b in range(B):
                        x = row[b]
                        g = x > best[b]
                        best[b] = x if g else best[b]
                        br[b] = r if g else br[b]
                        bc[b] = c if g else bc[b]
                        inc[b] = iq if g else inc[b]
            else:
                for q in range(nv):
                    row = S[q]
                    iq = qi[q]
                    for b in range(B):
                        x = row[b]
                        g = x > best[b]
                        best[b] = x if g else best[b]
                        inc[b] = iq if g else inc[b]
            picked = 0
            for b in range(B):
                picked += inc[b] != 0
            if picked == 0:
                break
            if linear:
                _count_row(acc, tm, best, inc)
            else:
                _bin_row(hist, tm, best, inc, u)
            if step + 1 < steps:
                for q in range(nv):
                    row = S[q]
                    r, c = qr[q], qc[q]
                    for b in range(B):
                        row[b] = -np.inf if (br[b] == r) | (bc[b] == c) else row[b]
    if linear and cur >= 0:
        _empty(acc, hist, cur)
