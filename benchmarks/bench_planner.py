"""Hand-run: the sample-size planner (calibration/planner.py, what `concord plan` does) checked against what further
labeling actually gives on FaithBench's real several-annotator labels.

    python benchmarks/bench_planner.py [DIR] [--starts 100,200] [--targets 0.08,0.065] [--repeats 8]
        [--bootstrap 1000] [--seed 0]

DIR holds batch_*.json as released (read only); default ../shared/data/faithbench. The statistic is `concord
plan`'s: Fleiss' kappa on the summary label (hallucinated or not) with every annotator who read the summary, its
95% percentile bootstrap over summaries (calibration.annotators.item_agreement). One check: draw `start` summaries
at random (the labels so far), plan with the 1/sqrt(n) scaling of their half-width the number of summaries that
reaches the target (and fit the exponent on subsamples of n/4, n/2, n as the command does); then draw that many
summaries from all 750 (three draws) and measure the half-width they actually give. A plan beyond the 750 cannot be
checked and is counted apart. Figures are means over `--repeats` starting draws.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchresult import emit, machine_state, skip  # noqa: E402
from calibration.annotators import item_agreement  # noqa: E402
from calibration.planner import fit_exponent, subsample_halfwidths, units_for_halfwidth  # noqa: E402
from calibration.schemes.judge import faithbench  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, nargs="?", default=ROOT.parent / "shared" / "data" / "faithbench")
    ap.add_argument("--starts", default="100,200")
    ap.add_argument("--targets", default="0.08,0.065")
    ap.add_argument("--repeats", type=int, default=8)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not args.directory.is_dir():
        skip("no data")
        return
    wall, cpu = time.perf_counter(), time.process_time()
    _, lines = faithbench.load(args.directory)
    by_sample: dict[str, list[tuple]] = {}
    for name, rows in lines.items():
        for r in rows:
            by_sample.setdefault(r["sample"], []).append((r["sample"], "", name, bool(r["label"])))
    samples = sorted(by_sample)
    n_all = len(samples)

    def halfwidth(index: np.ndarray, seed: int) -> float:
        rows = [r for i in index for r in by_sample[samples[i]]]
        k = item_agreement(rows, n_boot=args.bootstrap, seed=seed)["overall"]["kappa"]
        return (k["high"] - k["low"]) / 2

    h_all = halfwidth(np.arange(n_all), args.seed)
    print(f"FaithBench: {n_all} summaries, {sum(map(len, by_sample.values()))} labels; Fleiss' kappa half-width on all "
          f"{n_all}: {h_all:.4f}; {args.repeats} starting draws per row, {args.bootstrap} bootstrap replicates, "
          f"seed {args.seed}")
    print(f"{'start':>5} {'target':>6} {'start hw':>8} {'fitted b':>8} {'planned n':>9} {'actual hw':>9} "
          f"{'actual/target':>13} {'within 10%':>10} {'beyond data':>11}")
    rng = np.random.default_rng(args.seed)
    for start in (int(x) for x in args.starts.split(",")):
        for target in (float(x) for x in args.targets.split(",")):
            rows = []
            beyond = 0
            for r in range(args.repeats):
                seed = args.seed + r
                first = np.sort(rng.choice(n_all, size=start, replace=False))
                h0 = halfwidth(first, seed)
                points = subsample_halfwidths(start, lambda idx, f=first, s=seed: halfwidth(f[idx], s), seed=seed)
                b = fit_exponent([p[0] for p in points], [p[1] for p in points])
                planned = units_for_halfwidth(h0, start, target)
                if planned is None or planned > n_all:
                    beyond += 1
                    continue
                actual = np.mean([halfwidth(np.sort(rng.choice(n_all, size=planned, replace=False)), seed + 100 + d)
                                  for d in range(3)])
                rows.append((h0, b, planned, actual, actual / target, abs(actual / target - 1) <= 0.1))
            if not rows:
                print(f"{start:5} {target:6.3f} {'':8} {'':8} {'':9} {'':9} {'':13} {'':10} {beyond:11}")
                continue
            m = np.mean(np.array(rows, dtype=float), axis=0)
            spread = np.std([x[4] for x in rows])
            print(f"{start:5} {target:6.3f} {m[0]:8.4f} {m[1]:8.2f} {m[2]:9.0f} {m[3]:9.4f} "
                  f"{m[4]:8.3f}±{spread:.3f} {m[5]:10.2f} {beyond:11}")
    emit(f"planner check, {args.repeats} repeats (no ref)", *machine_state(wall, cpu))


if __name__ == "__main__":
    main()
