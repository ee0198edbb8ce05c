"""ADDM scheme speed: the three scores for 100,000 businesses, and a full policy grid over 10,000 businesses.

Scores: 100,000 synthetic businesses x 3 methods (records as the parser returns them); times the column build
plus the three scores per method (median of runs), then one full evaluation with bootstrap intervals, and the
plain-loop reference (calibration.schemes.addm.reference) on a slice in the same process, extrapolated.
Grid: the default integer policy grid around addm_v2 (5^7 = 78,125 policies) over 10,000 businesses: the
quadratic-kappa grid search (kappa_grid) and the full (policies x businesses) int8 verdict array (decide),
against the scalar per-verdict reference on a slice; then the same grid through the generic engine
(Calibrator, 5 grouped folds, held-out score with a bootstrap interval) on human verdicts planted from another
policy. Prints os.getloadavg() and CPU share (process CPU / wall).

    python benchmarks/bench_addm.py [--businesses 100000] [--grid-businesses 10000] [--runs 3] [--boot 200]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.schemes.addm import (  # noqa: E402
    ADDM_V2, decide, evaluate, features, kappa_grid, method_table, policy_grid, scores)
from calibration.schemes.addm import reference as ref  # noqa: E402
from tests.addm_data import random_samples  # noqa: E402
from benchresult import emit  # noqa: E402

METHODS = ("direct", "rag", "amos")


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, float, Any]:
    """Median wall seconds, CPU share (process CPU / wall over all runs) and the last result."""
    walls, out = [], None
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        walls.append(time.perf_counter() - t)
    share = (time.process_time() - c0) / max(1e-9, time.perf_counter() - w0)
    return statistics.median(walls), share, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--businesses", type=int, default=100_000)
    ap.add_argument("--grid-businesses", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--boot", type=int, default=200)
    ap.add_argument("--slice", type=int, default=10_000, help="businesses for the scalar reference")
    a = ap.parse_args()
    print(f"load average at start: {os.getloadavg()}  cores: {os.cpu_count()}")

    t = time.perf_counter()
    samples = random_samples(a.businesses, seed=0, methods=METHODS)
    print(f"generated {len(samples):,} businesses x {len(METHODS)} methods in {time.perf_counter() - t:.1f} s")

    def three() -> dict[str, Any]:
        return {m: scores(method_table(samples, m, ADDM_V2), ADDM_V2) for m in METHODS}

    wall, share, res = timed(three, a.runs)
    scores_wall, scores_cpu = wall, wall * share
    print(f"\nthree scores, {len(samples):,} businesses x {len(METHODS)} methods: median {wall:.2f} s "
          f"({len(samples) * len(METHODS) / wall:,.0f} results/s), CPU share {share:.2f}")
    for m in METHODS:
        r = res[m]
        print(f"  {m:<8} AUPRC {100 * r['auprc']:5.1f}%  process {r['process_score']:5.1f}%  consistency {r['consistency_score']:5.1f}%")

    sub = samples[: a.slice]
    t = time.perf_counter()
    want = {m: ref.three_scores(sub, m) for m in METHODS}
    ref_s = time.perf_counter() - t
    got = {m: scores(method_table(sub, m, ADDM_V2), ADDM_V2) for m in METHODS}
    same = all(abs(got[m][k] - want[m][k]) < 1e-9 for m in METHODS for k in want[m])
    ref_full = ref_s * len(samples) / len(sub)
    print(f"  scalar reference on {len(sub):,}: {ref_s:.2f} s -> {ref_full:.2f} s extrapolated "
          f"({ref_full / wall:.1f}x the engine); same scores: {same}")
    scores_result = (f"three scores, {len(samples):,} businesses (ref: scalar, extrapolated)", scores_wall, scores_cpu,
                     ref_full, same)

    wall, share, _ = timed(lambda: evaluate(samples, ADDM_V2, METHODS, n_boot=a.boot, seed=0), 1)
    print(f"  evaluate() with {a.boot} bootstrap replicates (3 methods + overall, 12 intervals): {wall:.2f} s, "
          f"CPU share {share:.2f}")

    gsamples = samples[: a.grid_businesses]
    f = features(gsamples)
    y = np.array([s.verdict for s in gsamples])
    grid = policy_grid()
    n_distinct = len(np.unique(f, axis=0))
    print(f"\npolicy grid: {len(grid):,} policies x {len(gsamples):,} businesses ({n_distinct} distinct count rows)")
    wall, share, kappas = timed(lambda: kappa_grid(f, y, grid.rows), a.runs)
    print(f"  kappa_grid (verdicts + quadratic kappa of every policy): median {wall:.3f} s "
          f"({len(grid) * len(gsamples) / wall / 1e9:.2f} G verdicts/s), CPU share {share:.2f}; best kappa {np.nanmax(kappas):.3f}")
    wall_d, share_d, v = timed(lambda: decide(f, grid.rows), a.runs)
    print(f"  decide -> ({v.shape[0]:,} x {v.shape[1]:,}) int8 ({v.nbytes / 1e6:.0f} MB): median {wall_d:.2f} s, CPU share {share_d:.2f}")
    rows = grid.rows[:: max(1, len(grid) // 20)][:20]
    fl = f.tolist()
    t = time.perf_counter()
    ref_v = [[ref.verdict_from_counts(c, r) for c in fl] for r in rows.tolist()]
    per = (time.perf_counter() - t) / (len(rows) * len(fl))
    same = np.array_equal(np.array(ref_v), decide(f, rows))
    print(f"  scalar reference: {per * 1e9:.0f} ns/verdict -> {per * len(grid) * len(fl):.0f} s for the grid "
          f"({per * len(grid) * len(fl) / wall_d:.0f}x decide); same verdicts: {same}")
    calibrator(gsamples, a.runs)
    print(f"\nload average at end: {os.getloadavg()}")
    emit(*scores_result[:4], matched=scores_result[4])
    emit(f"decide, {len(grid):,} policies x {len(gsamples):,} (ref: scalar, extrapolated)", wall_d,
         wall_d * share_d, per * len(grid) * len(fl), None, same)


def calibrator(gsamples: list[Any], runs: int) -> None:
    """The full grid through the generic engine, as `concord calibrate --scheme addm` runs it: human verdicts planted
    from another policy on every business, Calibrator(weighted_kappa, 5 grouped folds, 200 bootstrap replicates)."""
    from calibration.schemes.addm import VERDICTS, Policy, policy_verdict
    from calibration.schemes.addm.scheme import SCHEME
    from calibration.search import Calibrator

    hidden = Policy("hidden", (3.0, 4.0, 13.0), (6.0, 1.0), 10.0, 3.0)
    labels = {(s.id, ""): {"verdict": VERDICTS[policy_verdict(s.incidents, hidden)]} for s in gsamples}
    t = time.perf_counter()
    problem = SCHEME.search_problem(gsamples, labels, {})
    build = time.perf_counter() - t
    wall, share, cal = timed(lambda: Calibrator(objective="weighted_kappa", folds=5, seed=0, n_boot=200).fit(problem), runs)
    print(f"\ngeneric engine: Calibrator over {problem.space.n_configs:,} "
          f"policies x {len(gsamples):,} labeled businesses, 5 folds, 200 bootstrap replicates: median {wall:.2f} s "
          f"(+ {build:.2f} s building the problem), CPU share {share:.2f}; held-out kappa {cal.heldout_score_:.3f} "
          f"vs addm_v2 {cal.baselines_['addm_v2']:.3f}")


if __name__ == "__main__":
    main()
