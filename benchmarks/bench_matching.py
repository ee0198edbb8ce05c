"""Scoring + one-to-one matching speed on ~1,000,000 candidate pairs (warm embedding cache).

10,000 samples x 4 checkers, each unit 4-6 GT x 4-6 predictions (~25 pairs): components are synthetic
(what a pair table holds once every text is embedded), so the figure is the engine alone: weighted score,
strict thresholds, greedy (and optimal) matching, TP/FP/FN per unit. Goal (issue 3): < 2 s on 2 cores.

Prints the median of several runs, pairs/s, and the ratio to the plain-loop reference
(calibration.schemes.violations.reference) timed on a slice in the same process and extrapolated per pair.
Also times building a pair table from records with a warm vector cache (end-to-end evaluation path).

    python benchmarks/bench_matching.py [--samples 10000] [--runs 5] [--slice 40000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchresult import emit  # noqa: E402
from calibration.schemes.violations import (  # noqa: E402
    HA_MATCH,
    STD_MATCH,
    MatchConfig,
    PairTable,
    Violation,
    ViolationSample,
    build_pair_table,
    count,
    match,
)
from calibration.schemes.violations import reference as ref  # noqa: E402
from calibration.schemes.violations.pairs import unit_pair_indices  # noqa: E402
from calibration.similarity import CachedEmbedder, EmbeddingSimilarity, MemoryVectorCache, text_key  # noqa: E402

CHECKERS = ["prompt-baseline@1.1.0|gpt-3.5-turbo-0613", "zeroshot-index@2.2.5|gpt-3.5-turbo-0613",
            "brute-context-classifier@1.7.5|gpt-3.5-turbo-0613", "self-consistent-explainer@2.1.3|gpt-3.5-turbo-0613"]


def synthetic_table(n_samples: int, seed: int = 0) -> PairTable:
    """Realistic component distributions: a few true detections per unit, the rest mostly non-overlapping."""
    rng = np.random.default_rng(seed)
    G = n_samples * len(CHECKERS)
    n_gt = np.repeat(rng.integers(4, 7, n_samples), len(CHECKERS))
    n_pred = rng.integers(4, 7, G)
    group, gt, pred = unit_pair_indices(n_gt, n_pred)
    n = group.size
    true = (gt == pred) & (rng.random(n) < 0.7)  # about 70% of GT found
    near = ~true & (rng.random(n) < 0.25)  # partially overlapping false candidates
    overlap = np.where(true, rng.uniform(0.3, 1.0, n), np.where(near, rng.uniform(0.01, 0.5, n), 0.0))
    rule = np.where(true, rng.uniform(0.5, 1.0, n), rng.uniform(-0.05, 0.7, n))
    category = np.where(rng.random(n) < 0.1, np.nan, np.where(true, rng.random(n) < 0.8, rng.random(n) < 0.3).astype(float))
    explanation = np.where(rng.random(n) < 0.2, np.nan, np.where(true, rng.uniform(0.4, 1.0, n), rng.uniform(0.0, 0.6, n)))
    correction = np.where(rng.random(n) < 0.4, np.nan, rng.uniform(0.0, 1.0, n))
    pairs = pd.DataFrame({"group": group, "gt": gt, "pred": pred, "overlap": overlap, "rule": rule,
                          "category": category, "explanation": explanation, "correction": correction})
    groups = pd.DataFrame({"sample_id": np.repeat([f"s{i}" for i in range(n_samples)], len(CHECKERS)),
                           "checker": np.tile(CHECKERS, n_samples), "n_gt": n_gt, "n_pred": n_pred})
    return PairTable.from_frames(groups, pairs)


def median_time(fn: Callable[[], object], runs: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def slice_table(t: PairTable, n_groups: int) -> PairTable:
    p = t.pairs[t.pairs["group"].to_numpy() < n_groups]
    return PairTable.from_frames(t.groups.iloc[:n_groups], p, t.gt_items[t.gt_items["group"] < n_groups],
                                 t.pred_items[t.pred_items["group"] < n_groups])


def bench_engine(table: PairTable, config: MatchConfig, method: str, runs: int, slice_pairs: int) -> tuple:
    n = len(table.pairs)
    engine = lambda: count(table, match(table, config, method=method)).units  # noqa: E731
    engine()  # warm-up (imports, allocator)
    med, units = median_time(engine, runs)
    g_slice = int(np.searchsorted(table.pairs["group"].to_numpy(), 0, side="left"))  # 0
    groups_needed = int(table.pairs["group"].to_numpy()[min(slice_pairs, n) - 1]) + 1 + g_slice
    small = slice_table(table, groups_needed)
    t0 = time.perf_counter()
    want = ref.match_pair_table(small, config, method)
    ref_time = time.perf_counter() - t0
    m = match(small, config, method=method)
    p = small.pairs
    got = set(zip(p["group"].to_numpy()[m].tolist(), p["gt"].to_numpy()[m].tolist(), p["pred"].to_numpy()[m].tolist()))
    assert got == want, "fast engine disagrees with the reference"
    ref_per_pair = ref_time / len(small.pairs)
    tp = int(units["tp"].sum())
    print(f"  {config.name:9s} {method:7s}  {n:,} pairs  median {med:6.3f} s  {n / med:>12,.0f} pairs/s  "
          f"(TP {tp:,})  reference {ref_per_pair * 1e6:5.2f} us/pair on {len(small.pairs):,} pairs "
          f"-> ~{ref_per_pair * n:6.1f} s for all; speed-up x{ref_per_pair * n / med:,.0f}")
    return (f"{config.name} {method} matching, {n:,} pairs (ref: plain loop, extrapolated)", med, None,
            ref_per_pair * n, None, got == want)


def bench_build(n_samples: int, runs: int) -> None:
    """build_pair_table from records with every vector already cached (no model: random unit vectors)."""
    rng = np.random.default_rng(1)
    rules = [f"Rule {i}: do not {w} in marketing copy" for i, w in enumerate(["mention minors", "claim health benefits",
             "promote excess", "omit the trademark symbol", "use superlatives", "imply social success"] * 5)]
    expl = [f"explanation {i}" for i in range(2000)]
    corr = [f"correction {i}" for i in range(2000)]
    cats = ["audience", "brand", "health", "legal"]

    def viol(start: int) -> Violation:
        return Violation(rules[rng.integers(len(rules))], start, start + int(rng.integers(5, 30)),
                         category=cats[rng.integers(len(cats))], explanation=expl[rng.integers(len(expl))],
                         correction=corr[rng.integers(len(corr))] if rng.random() < 0.6 else None)

    samples = []
    for i in range(n_samples):
        gt = tuple(viol(int(s)) for s in rng.integers(0, 400, int(rng.integers(4, 7))))
        preds = {c: tuple(viol(int(s)) for s in rng.integers(0, 400, int(rng.integers(4, 7)))) for c in CHECKERS}
        samples.append(ViolationSample(f"s{i}", "", gt, preds))
    cache = MemoryVectorCache()
    ns = "bench:random"
    cache.put_vectors(ns, {text_key(t): v for t, v in zip(rules + expl + corr, rng.normal(size=(len(rules) + 4000, 384)))})

    class NoModel:
        cache_key = ns

        def encode(self, texts):  # noqa: ANN001, ANN201
            raise AssertionError("warm cache: nothing should be encoded")

    sim = EmbeddingSimilarity(CachedEmbedder(NoModel(), cache))
    med, table = median_time(lambda: build_pair_table(samples, sim), runs)
    n = len(table.pairs)  # type: ignore[attr-defined]
    t_eval, _ = median_time(lambda: (count(table, match(table, STD_MATCH)), count(table, match(table, HA_MATCH))), runs)  # type: ignore[arg-type]
    print(f"  build_pair_table from {n_samples:,} samples x {len(CHECKERS)} checkers: {n:,} pairs in {med:.2f} s "
          f"(warm cache); then std+ha matching and counts {t_eval:.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--slice", type=int, default=40_000, help="pairs timed with the reference implementation")
    ap.add_argument("--skip-build", action="store_true")
    args = ap.parse_args()
    table = synthetic_table(args.samples)
    print(f"bench_matching: {len(table.groups):,} units, {len(table.pairs):,} candidate pairs, "
          f"median of {args.runs} runs (score + thresholds + matching + TP/FP/FN per unit)")
    results = [bench_engine(table, config, method, args.runs, args.slice)
               for config in (STD_MATCH, HA_MATCH) for method in ("greedy", "optimal")]
    if not args.skip_build:
        bench_build(args.samples, max(1, args.runs // 2))
    for r in results:
        emit(*r)


if __name__ == "__main__":
    main()
