"""Benchmark of the violations calibration (issue #18 item 5): the CLI's real grids, the real work, fair references.

Workload: `--samples` synthetic samples x 4 checkers (10,000 -> ~359,000 candidate pairs; 100,000 -> ~3.6 M), all
labeled, humans from a planted rule with 2% noise; `MatchCalibrator.fit` end to end (5-fold grouped CV, kappa,
1,000-replicate bootstrap), i.e. what `concord calibrate` runs once the pair table is built.

Grids (--grids): `ha` = `concord calibrate --components ha` as the CLI builds it (make_space: 4 overlap x 4 rule
gates x 1,001 weight vectors x 11 match thresholds = 176,176 configs), `std` = the CLI default (`--components std`),
`fixed` = the old benchmark's grid (ha weights at the spec's gates only: 11,011 configs).

Printed per grid: median wall and CPU time of the fit, CPU share (CPU / wall: < 1 when the shared machine gives us
less than our threads want), load average, and the real work: pair-weights = sum over gate pairs of (pairs passing
the gates x weight vectors) -- one greedy pass per weight vector and gate pair yields every match threshold.
References, timed in the same process on the same table:
- vectorised matcher: `grid.matched_pairs` (matching.match_arrays: score + gates + greedy over the whole table) run
  once per (weight vector, gate pair) with the same passing pairs -- what a straightforward search would do with
  the existing fast matcher, crediting it the match thresholds for free;
- numpy grid passes: `grid.count_batch(fused=False)` (the pre-#18 evaluator) on one batch, per pair-weight;
- compute limit: scoring every passing pair for every weight vector with the kernel's own arithmetic (5
  multiplies and adds, the present weights' sum, one division; compiled, vectorised; no matching, no counting), the
  faster of two layouts (pairs as vector lanes, into an L1-sized block; weight vectors as lanes, as the kernel
  scores): the fused kernel's ratio to it is printed, and its ratio to the first definition of the limit
  (`_score_sum`: a scalar loop summing every score into one accumulator, 1.4-2.3 ns per pair-weight: a looser
  bound, the one issue #18's "3.7-6x" and "within 3x" figures refer to).

Run: .venv/bin/python benchmarks/bench_calibration.py [--samples 10000] [--runs 3] [--grids ha,fixed,std]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchresult import emit  # noqa: E402
from calibration.schemes.violations import grid, kernel  # noqa: E402
from calibration.schemes.violations.pairdata import PairData, human_rows  # noqa: E402
from calibration.schemes.violations.search import make_space  # noqa: E402
from calibration.schemes.violations.space import SearchSpace  # noqa: E402
from calibration.schemes.violations.synthetic import human_labels, synthetic_table  # noqa: E402
from calibration.schemes.violations.calibrator import MatchCalibrator  # noqa: E402

TARGETS = {("ha", 10_000): 6.0, ("ha", 100_000): 60.0, ("std", 100_000): 12.0}  # issue #18, seconds wall


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def timed(fn: Callable[[], object], runs: int) -> tuple[float, float, str]:
    """Median wall, median CPU (all threads), load average at the end."""
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return statistics.median(wall), statistics.median(cpu), load()


def grids(names: list[str]) -> dict[str, SearchSpace]:
    out = {"ha": make_space("ha"), "std": make_space("std"),
           "fixed": SearchSpace.preset("ha", overlap=(0.0,), rule=(0.01,))}
    return {n: out[n] for n in names}


def pair_weights(data: PairData, space: SearchSpace) -> int:
    nw = len(space.weight_grid())
    return sum(nw * int(grid.passing_mask(data.comps, o, r).sum()) for o, r in space.threshold_pairs())


if kernel.AVAILABLE:
    from numba import njit

    LIMIT_BLOCK = 256  # pairs scored per block of the pair-lane limit (about 15 KB of components: L1)

    @njit(nogil=True, cache=True, error_model="numpy", inline="always")
    def _pair_score(w0: float, w1: float, w2: float, w3: float, w4: float, tot: float, p: int, c0: float,
                    c1: float, c2: float, c3: float, c4: float) -> float:
        """The kernel's arithmetic (kernel.score_row) for one pair and weight row, the present weights' sum added
        up per pair instead of looked up (a lookup would be a gather, which keeps the pair loop from vectorising)."""
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
        return v if den > 0 else kernel.NO_SCORE

    @njit(nogil=True, cache=True, error_model="numpy")
    def _score_all(comps_t: np.ndarray, W: np.ndarray, total: np.ndarray, pattern: np.ndarray) -> float:
        """The compute limit with pairs as vector lanes: every score of every passing pair under every weight
        vector, stored into an L1-sized block of pairs per weight row -- a vector loop -- and nothing else: no
        greedy, no binning, no counting."""
        block = LIMIT_BLOCK
        out = np.empty(block)
        acc = 0.0
        n = comps_t.shape[1]
        for lo in range(0, n, block):
            m = min(n, lo + block) - lo
            c0, c1, c2 = comps_t[0, lo:lo + m], comps_t[1, lo:lo + m], comps_t[2, lo:lo + m]
            c3, c4, pat = comps_t[3, lo:lo + m], comps_t[4, lo:lo + m], pattern[lo:lo + m]
            for b in range(W.shape[0]):
                w0, w1, w2, w3, w4 = W[b, 0], W[b, 1], W[b, 2], W[b, 3], W[b, 4]
                t = total[b]
                for j in range(m):
                    out[j] = _pair_score(w0, w1, w2, w3, w4, t, pat[j], c0[j], c1[j], c2[j], c3[j], c4[j])
                acc += out[b % m]  # keeps the stores alive
        return acc

    @njit(nogil=True, cache=True, error_model="numpy")
    def _score_lanes(comps_t: np.ndarray, W: np.ndarray, total: np.ndarray, pattern: np.ndarray) -> float:
        """The compute limit with weight vectors as vector lanes, as the kernel scores (kernel.score_row, the
        present weights' sum from kernel.den_table): every passing pair's row of scores, and nothing else."""
        Wt = np.ascontiguousarray(W.T)
        den = kernel.den_table(W)
        out = np.empty((1, W.shape[0]))
        acc = 0.0
        for j in range(comps_t.shape[1]):
            kernel.score_row(out, 0, Wt, total, den, pattern[j], comps_t[0, j], comps_t[1, j], comps_t[2, j],
                             comps_t[3, j], comps_t[4, j])
            acc += out[0, j % out.shape[1]]  # keeps the stores alive
        return acc


    @njit(nogil=True, cache=True, error_model="numpy")
    def _score_sum(comps_t: np.ndarray, W: np.ndarray, total: np.ndarray, den_pat: np.ndarray,
                   pattern: np.ndarray) -> float:
        """The first definition of the limit (issue #18's "3.7-6x"): every score summed into one accumulator, the
        denominator looked up per presence pattern. A scalar loop (the sum is one dependency chain, the lookup a
        gather), so a looser bound than `_score_all`; printed beside it for comparison with earlier figures."""
        acc = 0.0
        c0, c1, c2, c3, c4 = comps_t[0], comps_t[1], comps_t[2], comps_t[3], comps_t[4]
        for b in range(W.shape[0]):
            w0, w1, w2, w3, w4 = W[b, 0], W[b, 1], W[b, 2], W[b, 3], W[b, 4]
            t, dp = total[b], den_pat[b]
            for j in range(c0.size):
                acc += ((w0 * c0[j] + w1 * c1[j] + w2 * c2[j] + w3 * c3[j] + w4 * c4[j]) * t) / dp[pattern[j]]
        return acc

def references(data: PairData, space: SearchSpace, runs: int) -> float:
    """Per pair-weight CPU cost of the fused kernel, the numpy passes, the vectorised matcher, the compute limit,
    all on the grid's first gate pair (the one that lets most pairs through). Returns one matcher run's CPU."""
    to, tr = space.threshold_pairs()[0]
    W = space.weight_grid()
    rng = np.random.default_rng(0)
    sub = W[rng.choice(len(W), min(grid.FUSED_BATCH, len(W)), replace=False)]  # one kernel call's batch, as the fit
    tm = np.asarray(space.match, dtype=np.float64)
    st = grid.structure(data, to, tr)
    n = st.n_passing * sub.shape[0]
    grid.count_batch(st, sub[:2], tm, data.n_units)  # compile / load the kernel outside the timing
    _, c_fused, ld = timed(lambda: grid.count_batch(st, sub, tm, data.n_units, fused=True), runs)
    _, c_numpy, _ = timed(lambda: grid.count_batch(st, sub[:16], tm, data.n_units, fused=False), runs)
    c_numpy *= sub.shape[0] / 16
    from calibration.schemes.violations.config import MatchConfig, Thresholds
    cfgs = [MatchConfig("ref", dict(zip(("overlap", "rule", "category", "explanation", "correction"), map(float, w))),
                        Thresholds(to, tr, float(tm[len(tm) // 2]))) for w in sub[:8]]
    _, c_call, _ = timed(lambda: [grid.matched_pairs(data, c) for c in cfgs], runs)
    c_call /= len(cfgs)  # one matcher run: one weight vector at one gate pair (and one match threshold)
    c_match = c_call * sub.shape[0]
    print(f"  per pair-weight CPU on gate ({to}, {tr}), {st.n_passing:,} passing pairs x {sub.shape[0]} weight vectors "
          f"({ld}):")
    print(f"    fused kernel {c_fused / n * 1e9:6.2f} ns   numpy grid passes {c_numpy / n * 1e9:6.2f} ns "
          f"(x{c_numpy / c_fused:.1f})   vectorised matcher per weight vector {c_match / n * 1e9:6.2f} ns "
          f"(x{c_match / c_fused:.1f}; on all {len(data):,} pairs, as it runs)")
    if kernel.AVAILABLE:
        total, den = grid.weight_sums(sub)
        comps_t = np.ascontiguousarray(np.concatenate([bk.comps_t[:, bk.valid] for bk in st.buckets], axis=1))
        pattern = np.concatenate([bk.pattern[bk.valid] for bk in st.buckets])
        den = np.where(den > 0, den, 1.0)
        _score_all(comps_t, sub[:1], total[:1], pattern)
        _score_lanes(comps_t, sub[:1], total[:1], pattern)
        _score_sum(comps_t, sub[:1], total[:1], den[:1], pattern)
        _, c_pairs, _ = timed(lambda: _score_all(comps_t, sub, total, pattern), runs)
        _, c_lanes, _ = timed(lambda: _score_lanes(comps_t, sub, total, pattern), runs)
        _, c_sum, _ = timed(lambda: _score_sum(comps_t, sub, total, den, pattern), runs)
        c_lim = min(c_pairs, c_lanes)
        print(f"    compute limit (scores only, vectorised; the faster of pairs as lanes {c_pairs / n * 1e9:.2f} ns and "
              f"weight vectors as lanes {c_lanes / n * 1e9:.2f} ns) {c_lim / n * 1e9:6.2f} ns: fused kernel = "
              f"{c_fused / c_lim:.1f}x the limit; first definition (scalar sum) {c_sum / n * 1e9:6.2f} ns: kernel = "
              f"{c_fused / c_sum:.1f}x")
    return c_call


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--grids", default="ha,fixed,std")
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()

    t0 = time.perf_counter()
    table = synthetic_table(args.samples, seed=0)
    human = human_labels(table, noise=0.02, seed=0)
    labeled = np.arange(len(table.groups))
    print(f"workload: {args.samples:,} samples x 4 checkers = {len(table.groups):,} units, {len(table.pairs):,} candidate "
          f"pairs, {len(human):,} human matches (built in {time.perf_counter() - t0:.1f} s); {os.cpu_count()} CPUs; "
          f"fused kernel: {'numba' if kernel.AVAILABLE else 'NOT available (numpy passes)'}; {load()}")
    unit = np.zeros(len(table.groups), dtype=np.int64)
    data = PairData.build(table, human_rows(table, human, labeled), unit, 1)
    t_first = time.perf_counter()
    MatchCalibrator(space=SearchSpace.preset("ha", overlap=(0.0,), rule=(0.01,), match=(0.5,)), n_boot=10).fit(
        synthetic_table(50, seed=1), human_labels(synthetic_table(50, seed=1)), range(200))
    small = grid.structure(data, 0.0, 0.01)  # so little work runs the numpy passes: load the kernel here
    grid.count_batch(small, make_space("ha").weight_grid()[:2], np.array([0.5]), data.n_units, fused=True)
    print(f"warm-up (imports + numba kernel load from its cache): {time.perf_counter() - t_first:.2f} s")

    results = []
    for name, space in grids([g.strip() for g in args.grids.split(",") if g.strip()]).items():
        work = pair_weights(data, space)
        no, nr, nw, nm = space.shape
        print(f"\n[{name}] {no} overlap x {nr} rule gates x {nw:,} weight vectors x {nm} match thresholds = "
              f"{len(space):,} configs; real work {work / 1e9:.2f} G pair-weights (passing pairs x weight vectors)")
        cal = MatchCalibrator(space=space, folds=5, n_boot=args.n_boot)
        wall, cpu, ld = timed(lambda: cal.fit(table, human, labeled), args.runs)
        d = cal.to_dict()
        target = TARGETS.get((name, args.samples))
        verdict = "" if target is None else f"  target < {target:.0f} s: {'MET' if wall < target else 'NOT MET'}"
        print(f"  fit (median of {args.runs}): {wall:.2f} s wall, {cpu:.2f} s CPU, CPU share {cpu / wall:.2f} "
              f"(of 2 cores max 2.0), {ld}{verdict}")
        print(f"  {work / cpu / 1e6:,.0f} M pair-weights per CPU-second, {work / wall / 1e6:,.0f} M per wall-second")
        print(f"  best {d['best']['weights']} thresholds {d['best']['thresholds']}; held-out kappa "
              f"{d['heldout']['score']:.4f} [{d['heldout']['ci'][0]:.4f}, {d['heldout']['ci'][1]:.4f}]")
        per_call = references(data, space, args.runs)
        ref = per_call * nw * no * nr
        print(f"  reference: vectorised matcher once per (weight vector, gate pair) = {nw * no * nr:,} runs x "
              f"{per_call * 1e3:.0f} ms = {ref:,.0f} s CPU for this grid vs the fit's {cpu:.1f} s CPU (x{ref / cpu:.0f})")
        results.append((f"fit, {name} grid, {len(table.pairs):,} pairs (ref: matcher per weight vector, CPU "
                        "extrapolated)", wall, cpu, None, ref))
    for r in results:
        emit(*r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
