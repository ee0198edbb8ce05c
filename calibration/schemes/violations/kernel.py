"""The grid's fused kernel: scoring, greedy pass and threshold counting in one pass per weight vector (issue #18).

`grid.count_batch` (numpy) materialises a (weights x cells) score array per shape bucket and runs `min(R, C)`
argmax rounds over it, then bins every matched score with a separate histogram. That is ~10 array passes over
memory per weight vector. Here compiled loops do all of it on a block of components at a time (in L1/L2): the
same float operations in the same order (score = (sum_i w_i * c_i) * W_total / sum(w present), NO_SCORE where no
weighted component is present, -inf where no passing pair sits), the same greedy (first maximum in row-major (gt,
pred) order, strike its row and column), the same binning (number of sorted match thresholds strictly below the
score, i.e. `np.searchsorted(..., "left")`). 1 x 1 components (most of them) need no greedy; bigger ones are laid
out cell-major so every greedy round is a vector loop over the block's components, and only picks are binned.
So the counts equal the numpy path's exactly (tests/test_violations_kernel.py checks it on random tables).

Why numba: the work is (passing pairs x weight vectors), 10^9 small scalar steps on the default `--components ha`
grid, and the greedy pass has a data-dependent loop that numpy can only express as repeated full-array passes.
numba compiles it once (cached on disk next to this file, or in numba's user cache) and releases the GIL, so the
grid's thread pool uses every core. It is a declared dependency; if it cannot be imported the numpy path runs
(same numbers, slower) -- `AVAILABLE` says which.
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
BLOCK = 256  # pairs of 1 x 1 components scored per block (about 15 KB of components: L1)
GREEDY_BLOCK = 1024  # cells per block of bigger components: wider vector loops over components (measured best)
NC = 5  # components of a pair (config.COMPONENTS)
SORT_ABOVE = 64  # components with more cells than this take the sorted greedy (n log n) instead of argmax rounds


@njit(nogil=True, cache=True, error_model="numpy")
def _bin(tm: np.ndarray, val: float) -> int:
    """How many sorted thresholds lie strictly below `val` (searchsorted, side left)."""
    if tm.size <= 24:  # branch-free count: a binary search mispredicts on every step
        k = 0
        for t in tm:
            k += t < val
        return k
    lo, hi = 0, tm.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if tm[mid] < val:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True, error_model="numpy")
def count_bucket(R: int, C: int, n: int, comps_t: np.ndarray, pattern: np.ndarray, valid: np.ndarray,
                 uh: np.ndarray, W: np.ndarray, total: np.ndarray, tm: np.ndarray,
                 hist: np.ndarray) -> None:
    """Add one shape bucket's matches to hist[b, unit*2 + human, n_below(score)] for every weight row b."""
    if R * C == 1:
        _count_single(n, comps_t, pattern, uh, W, total, tm, hist)
    else:
        _count_greedy(R, C, n, comps_t, pattern, valid, uh, W, total, tm, hist)


@njit(nogil=True, cache=True, error_model="numpy", inline="always")
def _score(w0: float, w1: float, w2: float, w3: float, w4: float, tot: float, p: int, c0: float, c1: float,
           c2: float, c3: float, c4: float) -> float:
    """The numpy path's operations, in its order (COMPONENTS order, then * total / den); NO_SCORE without den.

    den, the weights of the components present (bit i of the pattern p), is summed here in COMPONENTS order from
    0.0 exactly as grid.weight_sums sums it, instead of looked up in its (weights x 32) table: the lookup is a
    gather that kept LLVM from vectorising the loop (scalar divisions; this way it runs 8 lanes of vdivpd)."""
    num = w0 * c0
    num += w1 * c1
    num += w2 * c2
    num += w3 * c3
    num += w4 * c4
    den = 0.0
    den += w0 if p & 1 else 0.0
    den += w1 if p & 2 else 0.0
    den += w2 if p & 4 else 0.0
    den += w3 if p & 8 else 0.0
    den += w4 if p & 16 else 0.0
    v = (num * tot) / den
    return v if den > 0 else NO_SCORE


@njit(nogil=True, cache=True, error_model="numpy")
def _count_single(n: int, comps_t: np.ndarray, pattern: np.ndarray, uh: np.ndarray, W: np.ndarray,
                  total: np.ndarray, tm: np.ndarray, hist: np.ndarray) -> None:
    """1 x 1 components (every cell valid, every pair matched): per block of BLOCK pairs and weight row, one
    vectorisable scoring pass, one compare pass per threshold into uint8 bin counts (64 per vector register; int64
    counts were 25% slower) or a binary search, one histogram pass."""
    B = W.shape[0]
    T1 = tm.size + 1
    s = np.empty(BLOCK)
    kt = np.empty(BLOCK, dtype=np.int64)
    bn = np.empty(BLOCK, dtype=np.uint8)
    hf = hist.reshape(B, hist.shape[1] * hist.shape[2])
    for lo in range(0, n, BLOCK):
        m = min(n, lo + BLOCK) - lo
        c0, c1, c2 = comps_t[0, lo:lo + m], comps_t[1, lo:lo + m], comps_t[2, lo:lo + m]
        c3, c4 = comps_t[3, lo:lo + m], comps_t[4, lo:lo + m]
        pat, key = pattern[lo:lo + m], uh[lo:lo + m]
        for j in range(m):
            kt[j] = key[j] * T1
        for b in range(B):
            w0, w1, w2, w3, w4 = W[b, 0], W[b, 1], W[b, 2], W[b, 3], W[b, 4]
            tot = total[b]
            for j in range(m):
                s[j] = _score(w0, w1, w2, w3, w4, tot, pat[j], c0[j], c1[j], c2[j], c3[j], c4[j])
            hb = hf[b]
            if tm.size <= 24:
                for j in range(m):
                    bn[j] = 0
                for t in tm:
                    for j in range(m):
                        bn[j] += t < s[j]
                for j in range(m):
                    hb[kt[j] + bn[j]] += 1
            else:
                for j in range(m):
                    hb[kt[j] + _bin(tm, s[j])] += 1


@njit(nogil=True, cache=True, error_model="numpy")
def _count_greedy(R: int, C: int, n: int, comps_t: np.ndarray, pattern: np.ndarray, valid: np.ndarray,
                  uh: np.ndarray, W: np.ndarray, total: np.ndarray, tm: np.ndarray,
                  hist: np.ndarray) -> None:
    """Components of R x C cells (some empty: no passing pair there), a block of `w` components (about GREEDY_BLOCK
    cells) at a time, laid out cell-major: s[j * w + k] is cell j (row-major r * C + c) of component k.

    Per block the valid cells are gathered once into contiguous arrays. Per weight row they are scored in one
    vectorisable pass and scattered into the block (empty cells stay -inf). The greedy then runs on all the
    block's components at once, round by round, every step a vectorisable loop over components: the first maximum
    over cells j in row-major order (strict >, as numpy's argmax), its threshold bin, and the strike of its row and
    column. Only picks are binned and counted. Components bigger than SORT_ABOVE cells with more than two steps take
    a sequential greedy over a stable descending sort instead (the same picks)."""
    B = W.shape[0]
    T1 = tm.size + 1
    rc = R * C
    steps = min(R, C)
    per = max(1, GREEDY_BLOCK // rc)  # components per block
    s = np.empty(per * rc)
    kt = np.empty(per * rc, dtype=np.int64)  # uh of every cell, cell-major
    at = np.empty(per * rc, dtype=np.int64)  # block position of the q-th valid cell
    sv = np.empty(per * rc)
    cv = np.empty((NC, per * rc))
    pv = np.empty(per * rc, dtype=np.int64)
    best = np.empty(per)
    am = np.empty(per, dtype=np.int64)
    pr = np.empty(per, dtype=np.int64)
    pc = np.empty(per, dtype=np.int64)
    kb = np.empty(per, dtype=np.int64)
    neg = np.empty(rc)
    used_r = np.zeros(R, dtype=np.bool_)
    used_c = np.zeros(C, dtype=np.bool_)
    sorted_path = rc > SORT_ABOVE and steps > 2
    hf = hist.reshape(B, hist.shape[1] * hist.shape[2])
    for k0 in range(0, n, per):
        w = min(n, k0 + per) - k0
        lo = k0 * rc
        nv = 0
        for k in range(w):
            for j in range(rc):
                src = lo + k * rc + j
                kt[j * w + k] = uh[src]
                if valid[src]:
                    at[nv] = j * w + k
                    for i in range(NC):
                        cv[i, nv] = comps_t[i, src]
                    pv[nv] = pattern[src]
                    nv += 1
        c0, c1, c2, c3, c4 = cv[0, :nv], cv[1, :nv], cv[2, :nv], cv[3, :nv], cv[4, :nv]
        m = w * rc
        for b in range(B):
            w0, w1, w2, w3, w4 = W[b, 0], W[b, 1], W[b, 2], W[b, 3], W[b, 4]
            tot = total[b]
            for q in range(nv):
                sv[q] = _score(w0, w1, w2, w3, w4, tot, pv[q], c0[q], c1[q], c2[q], c3[q], c4[q])
            for j in range(m):
                s[j] = -np.inf
            for q in range(nv):
                s[at[q]] = sv[q]
            hb = hf[b]
            if sorted_path:
                for k in range(w):
                    for j in range(rc):
                        neg[j] = -s[j * w + k]
                    order = np.argsort(neg, kind="mergesort")
                    used_r[:] = False
                    used_c[:] = False
                    taken = 0
                    for j in order:
                        x = s[j * w + k]
                        if x == -np.inf or taken == steps:
                            break
                        r = j // C
                        c = j - r * C
                        if used_r[r] or used_c[c]:
                            continue
                        used_r[r] = True
                        used_c[c] = True
                        taken += 1
                        hb[kt[j * w + k] * T1 + _bin(tm, x)] += 1
                continue
            for step in range(steps):
                for k in range(w):
                    best[k] = -np.inf
                    am[k] = -1
                for j in range(rc):  # first maximum in row-major order, every component at once
                    row = s[j * w:(j + 1) * w]
                    for k in range(w):
                        x = row[k]
                        g = x > best[k]
                        best[k] = x if g else best[k]
                        am[k] = j if g else am[k]
                picked = 0
                for k in range(w):
                    picked += am[k] >= 0
                if picked == 0:
                    break
                if tm.size <= 24:
                    for k in range(w):
                        kb[k] = 0
                    for t in tm:
                        for k in range(w):
                            kb[k] += t < best[k]
                else:
                    for k in range(w):
                        kb[k] = _bin(tm, best[k])
                for k in range(w):
                    a = am[k]
                    if a >= 0:
                        hb[kt[a * w + k] * T1 + kb[k]] += 1
                if step + 1 < steps:  # strike the picked cell's row and column (no pick: nothing struck)
                    for k in range(w):
                        a = am[k]
                        pr[k] = a // C if a >= 0 else -1
                        pc[k] = a - (a // C) * C if a >= 0 else -1
                    for j in range(rc):
                        r = j // C
                        c = j - r * C
                        row = s[j * w:(j + 1) * w]
                        for k in range(w):
                            row[k] = -np.inf if (pr[k] == r) | (pc[k] == c) else row[k]
