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
contiguous row of a (32 patterns x B) table, and no cell is gathered or scattered.

Scoring: a component's cells two per pass over the lanes (score_rows2), so each lane's weights and total are
loaded once for both; on this machine's vector units (AVX-512, 8 lanes per instruction) a row costs about the
scores-only limit, bound by its division.

Greedy rounds (issue #28 item 3): each valid cell q carries a strike word, the bitmask of the cells sharing its row
or column (itself included; up to SORT_ABOVE = 63 cells, the sign bit flags a human match). A round scans the cells
four at a time per pass over the lanes (running maximum and word in registers) and keeps per lane the winner's word;
the next round skips the cells whose bit is set in the lanes' OR of past winners (`dead`), so no strike pass
rewrites the scores. The last pass takes exactly the one to four cells left (none visited twice), adds the winners
to `dead` and returns their OR, so a round of a component of up to four cells (most of them) is one pass over the
lanes; the first round's loops test no struck bits. A component without human matches takes its last round as a
plain maximum.

Counting: a pick counts for threshold t iff t < score. Each row of picks is compared with 8 thresholds per pass and
the 8 results (or a last 3 or 4) packed into one int64 "thermometer" word per lane (byte i: 1 iff t_i < score),
added to (2, words, B) counters of non-human and human picks: a row whose picks are all one or the other (a 1 x 1
component's) reads and writes one set of words, a mixed row splits each word by the winners' sign bits. Components
arrive sorted by unit (grid.structure), so the counters are emptied into the (B, unit x human, bins) histogram once
per unit or every ROWS_MAX rows, before a byte could overflow. Beyond LINEAR_MAX thresholds each pick is binned by
bisection instead.

What bounds it: vector instruction throughput. Counting a row of picks takes one compare (into a mask register)
and one masked OR per threshold: the CLI's 11 thresholds, 22 instructions per 8 lanes plus the counter words,
about 0.6 ns per lane here, 1.5x scoring the row (5 multiplies, 4 adds, a multiply, a division, a select). Tried for
issue #28 item 3 and measured no faster (microbenchmarks, CPU time, same minute): a lane's bin from arithmetic
(ceil(score * 10), clamped) with an exact fix-up against the thresholds on either side -- they cannot be
recomputed by a multiply (k * c == k / 10 at k = 1 forces c = 0.1, and 3, 6, 7 * 0.1 differ), dividing is slower
(0.78 vs 0.61 ns per lane), looking them up compiles to a gather (2.9 ns), and turning the bin into thermometer
words by variable shifts costs as many instructions as the compares save; compares on ordered integer keys, the
11 thresholds in one word of 5-bit fields, four rows counted per pass with the counters in registers, and
scoring and counting a 1 x 1 component in one loop (1.4-2.0 vs 1.1 ns: the compares wait on the division) were
no faster or slower. So the kernel stays about 3.4-3.5x the scores-only limit (benchmarks/bench_calibration.py;
3.7x before the changes above), not 3x.

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
SORT_ABOVE = 63  # components with more cells (a strike word's bits) and 2+ rounds take the sorted greedy (n log n)
LINEAR_MAX = 24  # up to this many match thresholds picks are coded by compares, above it binned by bisection
ROWS_MAX = 255  # pick rows between two empties of the counters (a byte per threshold and lane)
HUMAN_BIT = np.int64(np.iinfo(np.int64).min)  # the same flag in a cell's strike word (sign bit: word < 0)


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


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _lane_score(w0: float, w1: float, w2: float, w3: float, w4: float, tot: float, d: float, c0: float, c1: float,
                c2: float, c3: float, c4: float) -> float:
    """One pair's score under one weight row (weights w, total tot, present weights' sum d): the numpy path's
    operations in its order (COMPONENTS order, then * total / den); NO_SCORE where d is not positive."""
    num = w0 * c0
    num += w1 * c1
    num += w2 * c2
    num += w3 * c3
    num += w4 * c4
    v = (num * tot) / d
    return v if d > 0 else NO_SCORE


@njit(nogil=True, cache=True, error_model="numpy")
def score_row(out: np.ndarray, q: int, Wt: np.ndarray, total: np.ndarray, den: np.ndarray, p: int, c0: float,
              c1: float, c2: float, c3: float, c4: float) -> None:
    """One pair's score under every weight row into out[q] (Wt is W transposed, den the den_table, p the pair's
    presence pattern). Rows are indexed here, not sliced: a slice is a new array whose reference count numba raises
    and drops (two atomic operations each), which cost as much as scoring a row did."""
    for b in range(out.shape[1]):
        out[q, b] = _lane_score(Wt[0, b], Wt[1, b], Wt[2, b], Wt[3, b], Wt[4, b], total[b], den[p, b], c0, c1, c2,
                                c3, c4)


@njit(nogil=True, cache=True, error_model="numpy")
def score_rows2(out: np.ndarray, q: int, Wt: np.ndarray, total: np.ndarray, den: np.ndarray, p: int, c0: float,
                c1: float, c2: float, c3: float, c4: float, p_: int, e0: float, e1: float, e2: float, e3: float,
                e4: float) -> None:
    """score_row for two pairs (patterns p and p_) into out[q] and out[q + 1] in one pass over the lanes: the
    weights and totals are loaded once for both."""
    for b in range(out.shape[1]):
        w0, w1, w2, w3, w4, tot = Wt[0, b], Wt[1, b], Wt[2, b], Wt[3, b], Wt[4, b], total[b]
        out[q, b] = _lane_score(w0, w1, w2, w3, w4, tot, den[p, b], c0, c1, c2, c3, c4)
        out[q + 1, b] = _lane_score(w0, w1, w2, w3, w4, tot, den[p_, b], e0, e1, e2, e3, e4)


@njit(nogil=True, cache=True, error_model="numpy")
def _count_one(acc: np.ndarray, S: np.ndarray, q: int, tp: np.ndarray, human: bool) -> None:
    """Add a row of picks, one per lane (S[q, b]; -inf: no pick), to the thermometer counters: byte i of
    acc[h, j, b] counts lane b's picks above threshold 8j + i that are human matches (h = 1) or not (h = 0); here
    the whole row is one or the other, so each word is read and written once. tp: the sorted thresholds padded
    with +inf (nothing lies above it) to a multiple of 4; 8 compares per pass make one counter word, so each score
    is loaded once per 8 thresholds."""
    B = S.shape[1]
    h = 1 if human else 0
    n4 = tp.size >> 2
    for j in range((n4 + 1) >> 1):
        o = 8 * j
        t0, t1, t2, t3 = tp[o], tp[o + 1], tp[o + 2], tp[o + 3]
        if o + 4 < tp.size:
            t4, t5, t6, t7 = tp[o + 4], tp[o + 5], tp[o + 6], tp[o + 7]
            for b in range(B):
                acc[h, j, b] += _word8(S[q, b], t0, t1, t2, t3, t4, t5, t6, t7)
        elif t3 == np.inf:  # 3 thresholds left (the CLI's 11): a compare saved (nothing lies above +inf)
            for b in range(B):
                acc[h, j, b] += _word3(S[q, b], t0, t1, t2)
        else:
            for b in range(B):
                acc[h, j, b] += _word4(S[q, b], t0, t1, t2, t3)


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _word8(s: float, t0: float, t1: float, t2: float, t3: float, t4: float, t5: float, t6: float,
           t7: float) -> int:
    """Thermometer word of 8 thresholds: byte i is 1 iff t_i < s."""
    return (np.int64(t0 < s) | (np.int64(t1 < s) << 8) | (np.int64(t2 < s) << 16) | (np.int64(t3 < s) << 24)
            | (np.int64(t4 < s) << 32) | (np.int64(t5 < s) << 40) | (np.int64(t6 < s) << 48)
            | (np.int64(t7 < s) << 56))


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _word4(s: float, t0: float, t1: float, t2: float, t3: float) -> int:
    """Thermometer word of 4 thresholds (bytes 0-3)."""
    return np.int64(t0 < s) | (np.int64(t1 < s) << 8) | (np.int64(t2 < s) << 16) | (np.int64(t3 < s) << 24)


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _word3(s: float, t0: float, t1: float, t2: float) -> int:
    """Thermometer word of 3 thresholds (bytes 0-2)."""
    return np.int64(t0 < s) | (np.int64(t1 < s) << 8) | (np.int64(t2 < s) << 16)


@njit(nogil=True, cache=True, error_model="numpy")
def _count_row(acc: np.ndarray, S: np.ndarray, q: int, tp: np.ndarray, win: np.ndarray) -> None:
    """_count_one with each lane's own human flag: its winner's strike word has HUMAN_BIT (is negative)."""
    B = S.shape[1]
    n4 = tp.size >> 2
    for j in range((n4 + 1) >> 1):
        o = 8 * j
        t0, t1, t2, t3 = tp[o], tp[o + 1], tp[o + 2], tp[o + 3]
        if o + 4 < tp.size:
            t4, t5, t6, t7 = tp[o + 4], tp[o + 5], tp[o + 6], tp[o + 7]
            for b in range(B):
                w = _word8(S[q, b], t0, t1, t2, t3, t4, t5, t6, t7)
                m = win[b] >> 63
                acc[0, j, b] += w & ~m
                acc[1, j, b] += w & m
        elif t3 == np.inf:
            for b in range(B):
                w = _word3(S[q, b], t0, t1, t2)
                m = win[b] >> 63
                acc[0, j, b] += w & ~m
                acc[1, j, b] += w & m
        else:
            for b in range(B):
                w = _word4(S[q, b], t0, t1, t2, t3)
                m = win[b] >> 63
                acc[0, j, b] += w & ~m
                acc[1, j, b] += w & m


@njit(nogil=True, cache=True, error_model="numpy")
def _empty(acc: np.ndarray, T: int, hist: np.ndarray, u: int) -> None:
    """Move unit u's thermometer counters (picks above each threshold) into hist[b, 2u + human, bin] (bin k: k
    thresholds below the score), and zero them."""
    for b in range(acc.shape[2]):
        nxt_n = 0  # non-human / human picks above threshold t + 1
        nxt_h = 0
        for t in range(T - 1, -1, -1):
            sh = 8 * (t & 7)
            ah = (acc[1, t >> 3, b] >> sh) & 255
            an = (acc[0, t >> 3, b] >> sh) & 255
            hist[b, 2 * u, t + 1] += an - nxt_n
            hist[b, 2 * u + 1, t + 1] += ah - nxt_h
            nxt_n = an
            nxt_h = ah
    acc[:] = 0


@njit(nogil=True, cache=True, error_model="numpy")
def _bin_row(hist: np.ndarray, tm: np.ndarray, S: np.ndarray, q: int, win: np.ndarray, u: int) -> None:
    """Many thresholds: each lane's pick (S[q, b] where win[b] != 0) binned by bisection into hist directly."""
    for b in range(S.shape[1]):
        if win[b] != 0:
            hist[b, 2 * u + (1 if win[b] < 0 else 0), _bin(tm, S[q, b])] += 1


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _bit(q: int) -> int:
    """Cell q's bit in a strike word; a one-round component may have more than 63 cells, whose bits are never read
    (its round has no struck cells) but must still be a defined shift."""
    return np.int64(1) << (q & 63)


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _pick(S: np.ndarray, b: int, d: int, m: float, w: int, i: int, wi: int, ki: int) -> tuple[float, int]:
    """Lane b's running maximum m and its word w after cell i (strict >: the first maximum in cell order stays;
    a cell whose bit ki is set in d is struck)."""
    x = S[i, b]
    g = (x > m) & (d & ki == 0)
    return (x, wi) if g else (m, w)


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _last_pass(S: np.ndarray, nv: int, word: np.ndarray, dead: np.ndarray, first: bool, best: np.ndarray,
               win: np.ndarray, ql: int) -> int:
    """_argmax_round's last pass (cells ql .. nv-1, one to four): one lane loop per count, so no cell is visited
    twice; called with a literal `first`, so the first round's loops test no struck bits."""
    B = S.shape[1]
    r = nv - ql
    i0, i1, i2, i3 = ql, min(ql + 1, nv - 1), min(ql + 2, nv - 1), min(ql + 3, nv - 1)
    w0, w1, w2, w3 = word[i0], word[i1], word[i2], word[i3]
    k0, k1, k2, k3 = _bit(i0), _bit(i1), _bit(i2), _bit(i3)
    picked = np.int64(0)
    if r == 1:
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if ql == 0 else best[0, b]
            w = np.int64(0) if ql == 0 else win[b]
            m, w = _pick(S, b, d, m, w, i0, w0, k0)
            best[0, b] = m
            win[b] = w
            dead[b] = d | w
            picked |= w
    elif r == 2:
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if ql == 0 else best[0, b]
            w = np.int64(0) if ql == 0 else win[b]
            m, w = _pick(S, b, d, m, w, i0, w0, k0)
            m, w = _pick(S, b, d, m, w, i1, w1, k1)
            best[0, b] = m
            win[b] = w
            dead[b] = d | w
            picked |= w
    elif r == 3:
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if ql == 0 else best[0, b]
            w = np.int64(0) if ql == 0 else win[b]
            m, w = _pick(S, b, d, m, w, i0, w0, k0)
            m, w = _pick(S, b, d, m, w, i1, w1, k1)
            m, w = _pick(S, b, d, m, w, i2, w2, k2)
            best[0, b] = m
            win[b] = w
            dead[b] = d | w
            picked |= w
    else:
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if ql == 0 else best[0, b]
            w = np.int64(0) if ql == 0 else win[b]
            m, w = _pick(S, b, d, m, w, i0, w0, k0)
            m, w = _pick(S, b, d, m, w, i1, w1, k1)
            m, w = _pick(S, b, d, m, w, i2, w2, k2)
            m, w = _pick(S, b, d, m, w, i3, w3, k3)
            best[0, b] = m
            win[b] = w
            dead[b] = d | w
            picked |= w
    return picked


@njit(nogil=True, cache=True, error_model="numpy")
def _argmax_round(S: np.ndarray, nv: int, word: np.ndarray, dead: np.ndarray, first: bool, best: np.ndarray,
                  win: np.ndarray) -> int:
    """One greedy round over the component's nv scored cells: per lane the first maximum (strict >, in cell order,
    as numpy's argmax) among the cells not struck yet (bit q of dead[b] clear; none in the first round) into
    best[0, b] (-inf: no cell left), its strike word into win[b] (0: none) and added to dead[b] (the next round's
    struck cells). Returns the OR of the lanes' words (0: no lane picked; negative: some lane picked a human match).

    Four cells per pass over the lanes, so a lane's running maximum and word stay in registers across them; the
    last pass takes the one to four cells left and also writes dead and the OR, so a round of up to four cells
    (most components) is one pass over the lanes."""
    B = S.shape[1]
    ql = ((nv - 1) >> 2) << 2  # the last pass's first cell
    for q in range(0, ql, 4):
        i0, i1, i2, i3 = q, q + 1, q + 2, q + 3
        w0, w1, w2, w3 = word[i0], word[i1], word[i2], word[i3]
        k0, k1, k2, k3 = _bit(i0), _bit(i1), _bit(i2), _bit(i3)
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if q == 0 else best[0, b]
            w = np.int64(0) if q == 0 else win[b]
            m, w = _pick(S, b, d, m, w, i0, w0, k0)
            m, w = _pick(S, b, d, m, w, i1, w1, k1)
            m, w = _pick(S, b, d, m, w, i2, w2, k2)
            m, w = _pick(S, b, d, m, w, i3, w3, k3)
            best[0, b] = m
            win[b] = w
    if first:
        return _last_pass(S, nv, word, dead, True, best, win, ql)
    return _last_pass(S, nv, word, dead, False, best, win, ql)


@njit(nogil=True, cache=True, error_model="numpy")
def _max_round(S: np.ndarray, nv: int, dead: np.ndarray, first: bool, best: np.ndarray) -> None:
    """_argmax_round's best[0] alone, for a last round that needs no strike word and no human flag."""
    B = S.shape[1]
    for q in range(0, nv, 4):
        i0, i1, i2, i3 = q, min(q + 1, nv - 1), min(q + 2, nv - 1), min(q + 3, nv - 1)
        k0, k1, k2, k3 = _bit(i0), _bit(i1), _bit(i2), _bit(i3)
        for b in range(B):
            d = np.int64(0) if first else dead[b]
            m = -np.inf if q == 0 else best[0, b]
            x = S[i0, b]
            m = x if (x > m) & (d & k0 == 0) else m
            x = S[i1, b]
            m = x if (x > m) & (d & k1 == 0) else m
            x = S[i2, b]
            m = x if (x > m) & (d & k2 == 0) else m
            x = S[i3, b]
            m = x if (x > m) & (d & k3 == 0) else m
            best[0, b] = m


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
    linear = T <= LINEAR_MAX  # else picks are binned straight into hist
    tp = np.full(-(-T // 4) * 4, np.inf)
    tp[:T] = tm
    Wt = np.ascontiguousarray(W.T)
    den = den_table(W)
    acc = np.zeros((2, (tp.size + 7) >> 3, B), dtype=np.int64)  # thermometer counters (_count_one)
    S = np.empty((rc, B))  # row q: score of the component's q-th valid cell under every weight row
    best = np.empty((1, B))  # a round's best score per lane
    win = np.empty(B, dtype=np.int64)  # the winning cell's strike word per lane (0: no pick)
    dead = np.zeros(B, dtype=np.int64)  # cells struck so far per lane (bit q)
    qr = np.empty(rc, dtype=np.int64)
    qc = np.empty(rc, dtype=np.int64)
    qh = np.empty(rc, dtype=np.int64)  # 1 where the cell is a human match
    qs = np.empty(rc, dtype=np.int64)  # the cell's index in the bucket's arrays
    word = np.empty(rc, dtype=np.int64)  # the cells sharing its row or column (itself too), HUMAN_BIT if human
    rmask = np.zeros(R, dtype=np.int64)
    cmask = np.zeros(C, dtype=np.int64)
    jr = np.arange(rc) // C  # row and column of cell j, once per bucket (no division per cell)
    jc = np.arange(rc) % C
    neg = np.empty(rc)
    used_r = np.zeros(R, dtype=np.bool_)
    used_c = np.zeros(C, dtype=np.bool_)
    sorted_path = rc > SORT_ABOVE and steps > 1  # more cells than a strike word has bits, and a strike to track
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
                qr[nv] = jr[j]
                qc[nv] = jc[j]
                qh[nv] = uh[src] & 1
                qs[nv] = src
                nv += 1
        if nv == 0:
            continue
        q = 0
        while q + 2 <= nv:  # two cells per pass over the lanes: the weights loaded once for both
            a, z = qs[q], qs[q + 1]
            score_rows2(S, q, Wt, total, den, pattern[a], comps_t[0, a], comps_t[1, a], comps_t[2, a],
                        comps_t[3, a], comps_t[4, a], pattern[z], comps_t[0, z], comps_t[1, z], comps_t[2, z],
                        comps_t[3, z], comps_t[4, z])
            q += 2
        if q < nv:
            a = qs[q]
            score_row(S, q, Wt, total, den, pattern[a], comps_t[0, a], comps_t[1, a], comps_t[2, a],
                      comps_t[3, a], comps_t[4, a])
        if linear and (u != cur or rows + steps > ROWS_MAX):
            if cur >= 0:
                _empty(acc, T, hist, cur)
            cur = u
            rows = 0
        if rc == 1:
            if linear:
                _count_one(acc, S, 0, tp, qh[0] == 1)
                rows += 1
            else:
                win[:] = HUMAN_BIT if qh[0] else 1
                _bin_row(hist, tm, S, 0, win, u)
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
                    if linear:
                        for t in range(_bin(tm, x)):
                            acc[qh[q], t >> 3, b] += np.int64(1) << (8 * (t & 7))
                    else:
                        hist[b, 2 * u + qh[q], _bin(tm, x)] += 1
                    taken += 1
            if linear:
                rows += steps
            continue
        no_human = True
        if steps > 1:  # strike words: a pick strikes every cell of its row and column
            for q in range(nv):
                rmask[qr[q]] = 0
                cmask[qc[q]] = 0
            for q in range(nv):
                rmask[qr[q]] |= np.int64(1) << q
                cmask[qc[q]] |= np.int64(1) << q
        for q in range(nv):
            word[q] = (rmask[qr[q]] | cmask[qc[q]] if steps > 1 else 1) | (HUMAN_BIT if qh[q] else 0)
            no_human &= qh[q] == 0
        for step in range(steps):
            if step + 1 == steps and no_human and linear:  # no strike to track, no human flag: the maximum only
                _max_round(S, nv, dead, step == 0, best)
                _count_one(acc, best, 0, tp, False)
                rows += 1
                break
            picked = _argmax_round(S, nv, word, dead, step == 0, best, win)
            if picked == 0:
                break
            if linear:
                if picked < 0:  # some lane's winner is a human match (the sign bit of the words' OR)
                    _count_row(acc, best, 0, tp, win)
                else:
                    _count_one(acc, best, 0, tp, False)
                rows += 1
            else:
                _bin_row(hist, tm, best, 0, win, u)
    if linear and cur >= 0:
        _empty(acc, T, hist, cur)
