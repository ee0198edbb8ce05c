"""Hand-run: does the guaranteed-agreement mode keep its promise? Over random splits, the whole procedure of
`concord calibrate --guarantee` (app/services/guarantee.py, without the store): the judge's threshold calibrated by
the generic Calibrator on a fit split, the band certified by Learn-then-Test on a calibration split
(calibration.guarantee.problem_band), then the units of a test split the band lets the machine decide, and the
machine's agreement with the humans on them. The promise: that agreement falls below the target in at most delta of
the splits (plus binomial slack: 2 standard deviations of a Bernoulli(delta) share over the splits).

    python benchmarks/bench_guarantee.py [--splits 200] [--quick] [--faithbench DIR] [--sides any|both] [--seed 0]

Data it makes: a judge whose errors concentrate near its threshold (45% wrong at 0.5, almost never far from it), a
population of 20,000 samples; each split draws 300 fit + 300 calibration samples and tests on 4,000 others (the
test agreement is then close to the population's, so a "below" is the bound's failure, not test noise). With
--faithbench (default ../shared/data/faithbench when present; read only), each detector against the any-annotator
label, the 750 summaries split in thirds (fit / calibration / test): there a test third of about 80 decided
summaries adds its own sampling noise, so its rate is an upper estimate of the bound's failures.
--quick: 20 splits (a smoke run; the shared machine is small).
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchresult import emit, skip  # noqa: E402
from calibration.guarantee import decided, margins, problem_band  # noqa: E402
from calibration.schemes.judge.records import JudgeOutput, JudgeRecord  # noqa: E402
from calibration.schemes.judge.search import search_problem  # noqa: E402
from calibration.search.engine import Calibrator  # noqa: E402

TARGET, DELTA = 0.9, 0.05


def population(n: int, seed: int) -> tuple[list[JudgeRecord], dict[tuple[str, str], dict[str, Any]]]:
    """Judge `a` (a probability): wrong with chance 0.45 exp(-((s - 0.5) / 0.15)^2) at score s."""
    rng = np.random.default_rng(seed)
    s = rng.uniform(0, 1, n)
    wrong = rng.uniform(size=n) < 0.45 * np.exp(-((s - 0.5) / 0.15) ** 2)
    y = (s >= 0.5) != wrong
    records = [JudgeRecord(f"p{i}", "", judges={"a": JudgeOutput(float(s[i]))}) for i in range(n)]
    return records, {(r.id, ""): {"label": bool(v)} for r, v in zip(records, y)}


def one_split(records: Sequence[JudgeRecord], labels: dict[tuple[str, str], dict[str, Any]], judge: str,
              parts: tuple[np.ndarray, np.ndarray, np.ndarray], seed: int,
              sides: tuple[str, ...] = ("both",)) -> tuple[bool, float, float, bool] | None:
    """(test agreement below target, test coverage, calibration coverage, certified); None: nothing to fit."""
    opts = {"judge": judge, "reference": "adjudicated"}
    fit, cal, test = ([records[i] for i in p] for p in parts)
    problem = search_problem(fit, labels, opts)
    if problem is None:
        return None
    calibrator = Calibrator(objective="kappa", folds=3, seed=seed, n_boot=0).fit(problem)
    config = calibrator.best_config_
    band = problem_band(search_problem(cal, labels, opts), config, target=TARGET, delta=DELTA, sides=sides)
    tp = search_problem(test, labels, opts)
    m = margins(tp, config)
    ok = decided(band.lam, band.side, m.confidence, m.decision) & m.scored
    if not ok.any():
        return False, 0.0, band.coverage, band.certified
    agreement = float(np.mean(m.decision[ok] == tp.human[ok]))
    return agreement < TARGET, float(ok.mean()), band.coverage, band.certified


def report(name: str, results: list[tuple[bool, float, float, bool]], splits: int) -> None:
    below = sum(r[0] for r in results)
    slack = 2 * math.sqrt(DELTA * (1 - DELTA) / max(1, len(results)))
    rate = below / max(1, len(results))
    print(f"  {name:18} splits {len(results):4}  certified {np.mean([r[3] for r in results]):.2f}  "
          f"test below {TARGET:g}: {rate:.3f} (bound {DELTA} + slack {slack:.3f}: "
          f"{'ok' if rate <= DELTA + slack else 'EXCEEDED'})  coverage: calibration {np.mean([r[2] for r in results]):.3f}, "
          f"test {np.mean([r[1] for r in results]):.3f}", flush=True)


def synthetic(splits: int, seed: int) -> None:
    records, labels = population(20_000, seed)
    rng = np.random.default_rng(seed + 1)
    out = []
    for k in range(splits):
        perm = rng.permutation(len(records))
        res = one_split(records, labels, "a", (perm[:300], perm[300:600], perm[600:4600]), seed + k)
        if res is not None:
            out.append(res)
    report("synthetic judge", out, splits)


def faithbench(directory: Path, splits: int, seed: int, sides: tuple[str, ...]) -> None:
    from calibration.schemes.judge import faithbench as fb
    from calibration.schemes.judge.scheme import SCHEME

    raw, lines = fb.load(directory)
    records = [SCHEME.parse(r).record for r in raw]
    anyone: dict[str, bool] = {}
    for ls in lines.values():
        for ln in ls:
            anyone[ln["sample"]] = anyone.get(ln["sample"], False) or bool(ln["label"])
    labels = {(r.id, ""): {"label": anyone[r.id]} for r in records if r.id in anyone}
    n = len(records)
    rng = np.random.default_rng(seed + 2)
    print(f"FaithBench ({directory}): {n} summaries, {sum(anyone.values())} hallucinated (any annotator); thirds "
          f"fit / calibration / test; sides {'/'.join(sides)}", flush=True)
    for d in fb.DETECTORS:
        out = []
        for k in range(splits):
            perm = rng.permutation(n)
            res = one_split(records, labels, d, (perm[: n // 3], perm[n // 3: 2 * n // 3], perm[2 * n // 3:]),
                            seed + k, sides)
            if res is not None:
                out.append(res)
        report(d, out, splits)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=200)
    ap.add_argument("--quick", action="store_true", help="20 splits")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sides", choices=["both", "any"], default="any",
                    help="FaithBench: the machine decides both kinds of call, or any: also only its hallucination or "
                         "only its consistent calls (each at delta / 3), as `calibrate --sides any` (default any)")
    ap.add_argument("--faithbench", type=Path, default=ROOT.parent / "shared" / "data" / "faithbench")
    args = ap.parse_args()
    splits = 20 if args.quick else args.splits
    t0, c0 = time.perf_counter(), time.process_time()
    print(f"guaranteed agreement: target {TARGET}, delta {DELTA}, {splits} random splits, seed {args.seed}; "
          f"load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    synthetic(splits, args.seed)
    if args.faithbench.is_dir() and any(args.faithbench.glob("batch_*.json")):
        faithbench(args.faithbench, splits, args.seed,
                   ("both",) if args.sides == "both" else ("both", "positive", "negative"))
    else:
        print(f"FaithBench: no batch_*.json in {args.faithbench}: skipped")
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{wall:.1f} s wall, {cpu:.1f} s CPU ({cpu / max(wall, 1e-9):.0%} of one core); load "
          f"{os.getloadavg()[0]:.1f}")
    emit(f"guarantee over {splits} splits (no ref)", wall, cpu)


if __name__ == "__main__":
    main()
