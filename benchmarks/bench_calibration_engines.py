"""Benchmark of calibration engines and large grids (issue #17).

1. The bench_calibration workload (10,000 samples x 4 checkers, ~360,000 pairs, ha weights at step 0.1 x 11 match
   thresholds, 5-fold CV, 1,000 bootstrap resamples) on the local engine vs a 2-worker Dask LocalCluster
   (processes, loopback), same chunks; results compared for equality.
2. Peak RSS and time for 10^4, 10^5 and 10^6 configs over the same pairs, each run in its own process (peak RSS is
   a per-process high-water mark): 1,001 weights x 10 / 100 match thresholds, and the ha grid at step 0.05
   (10,626 weight vectors) x 94 match thresholds = 998,844 configs.
3. Time against pairs (2,500 / 5,000 / 10,000 samples) at 10^4 configs.
Load average and CPU share (process CPU / wall) are printed next to every figure.

Run: .venv/bin/python benchmarks/bench_calibration_engines.py [--runs 3] [--skip-million]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchresult import emit  # noqa: E402
from calibration.schemes.violations.search import ViolationsProblem  # noqa: E402
from calibration.schemes.violations.space import SearchSpace  # noqa: E402
from calibration.schemes.violations.synthetic import human_labels, synthetic_table  # noqa: E402
from calibration.search import Calibrator  # noqa: E402

GRIDS = {  # name: (step, number of match thresholds)
    "1e4": (0.1, 10), "1e5": (0.1, 100), "1e6": (0.05, 94),
}


def problem(samples: int, grid: str = "bench") -> ViolationsProblem:
    table = synthetic_table(samples, seed=0)
    human = human_labels(table, noise=0.02, seed=0)
    if grid == "bench":
        space = SearchSpace.preset("ha", overlap=(0.0,), rule=(0.01,))
    else:
        step, nm = GRIDS[grid]
        space = SearchSpace.preset("ha", step=step, overlap=(0.0,), rule=(0.01,),
                                   match=tuple(np.round(np.linspace(0.0, 0.93, nm), 6)))
    return ViolationsProblem(table, human, range(len(table.groups)), space)


def one(samples: int, grid: str) -> dict:
    """One fit in this process: wall, CPU, peak RSS (MB), configs, pairs."""
    p = problem(samples, grid)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    cal = Calibrator(folds=5, n_boot=1000).fit(p)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall": wall, "cpu": cpu, "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_data": rss0, "configs": p.space.n_configs, "pairs": len(p.data), "load": os.getloadavg()[0],
            "heldout": cal.heldout_score_, "cv_mb": cal.cv_results_.memory_usage(deep=True).sum() / 1e6}


def child(samples: int, grid: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", grid, "--samples", str(samples)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def engines(samples: int, runs: int) -> tuple:
    """The result line's fields: the dask fit against the local engine's (the reference), same results."""
    import distributed

    from calibration.search.engines import DaskEngine

    p = problem(samples)
    chunk = -(-p.space.n_configs // 4)  # 4 chunks, so two workers have something to share
    print(f"1. bench_calibration workload: {len(p.data):,} pairs x {p.space.n_configs:,} configs, chunks of "
          f"{chunk:,} configs, 5 folds, 1,000 bootstrap; {os.cpu_count()} CPUs")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                       dashboard_address=None)
    client = distributed.Client(cluster, set_as_default=False)
    try:
        fits, medians = {}, {}
        for name, eng in (("local (threads)", "local"), ("dask, 2-worker LocalCluster", DaskEngine(client=client))):
            walls, cpus = [], []
            for _ in range(runs):
                t0, c0 = time.perf_counter(), time.process_time()
                fits[name] = Calibrator(folds=5, n_boot=1000, chunk_size=chunk, engine=eng).fit(p)
                walls.append(time.perf_counter() - t0)
                cpus.append(time.process_time() - c0)
            w, c = statistics.median(walls), statistics.median(cpus)
            medians[name] = (w, c)
            print(f"   {name:30s} {w:6.2f} s wall (median of {runs}), client CPU share {c / w:.2f}, "
                  f"load average {os.getloadavg()[0]:.1f}")
        a, b = fits.values()
        same = a.cv_results_.equals(b.cv_results_) and (a.heldout_score_, a.heldout_ci_, a.best_config_) == \
            (b.heldout_score_, b.heldout_ci_, b.best_config_)
        print(f"   identical results (cv_results_, best config, held-out score and interval): {same}")
        (rw, rc), (dw, dc) = medians.values()
        return (f"fit on dask (2 workers), {len(p.data):,} pairs (ref: local engine)", dw, dc, rw, rc, same)
    finally:
        client.close()
        cluster.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--skip-million", action="store_true", help="leave out the 10^6-config run (minutes)")
    ap.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.samples, args.one)))
        return 0
    print(f"load average at start {os.getloadavg()}")
    engine_result = engines(args.samples, args.runs)

    print("\n2. configs (each its own process; peak RSS = ru_maxrss; data = RSS after building the pairs)")
    print(f"   {'configs':>9} {'pairs':>8} {'wall s':>7} {'CPU share':>9} {'peak RSS MB':>11} {'data MB':>7} "
          f"{'cv_results_ MB':>14} {'load':>5}")
    rows = {}
    for grid in ("1e4", "1e5") + (() if args.skip_million else ("1e6",)):
        runs = [child(args.samples, grid) for _ in range(1 if grid == "1e6" else args.runs)]
        r = sorted(runs, key=lambda x: x["wall"])[len(runs) // 2]
        r["rss"] = max(x["rss"] for x in runs)
        rows[grid] = r
        print(f"   {r['configs']:>9,} {r['pairs']:>8,} {r['wall']:>7.1f} {r['cpu'] / r['wall']:>9.2f} "
              f"{r['rss']:>11.0f} {r['rss_data']:>7.0f} {r['cv_mb']:>14.0f} {r['load']:>5.1f}")
    if "1e6" in rows:
        print(f"   peak RSS 10^6 / 10^4 configs: {rows['1e6']['rss'] / rows['1e4']['rss']:.2f}x (acceptance: <= 2x)")

    print("\n3. pairs, at ~10^4 configs")
    print(f"   {'samples':>8} {'pairs':>8} {'wall s':>7} {'M pair-configs/s':>16} {'load':>5}")
    for s in (args.samples // 4, args.samples // 2, args.samples):
        r = child(s, "1e4") if s != args.samples else rows["1e4"]
        print(f"   {s:>8,} {r['pairs']:>8,} {r['wall']:>7.1f} {r['pairs'] * r['configs'] / r['wall'] / 1e6:>16.0f} "
              f"{r['load']:>5.1f}")
    emit(*engine_result)
    r = rows["1e4"]
    emit(f"fit, {r['configs']:,} configs x {r['pairs']:,} pairs, own process (no ref)", r["wall"], r["cpu"],
         load=r["load"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
