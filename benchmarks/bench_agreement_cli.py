"""Speed of `concord agreement`'s path (store -> label_items per annotator and unit -> calibration.annotators) over
100,000 units with 3 annotators each, median of repeats, next to the math alone on the same item table (reference,
same process).

    python benchmarks/bench_agreement_cli.py [--units 100000] [--repeats 3] [--n-boot 1000] [--spans]

A synthetic violations project in a temp directory: one sample per unit, 2 ground-truth violations and 2
predictions of one checker, so every unit has 4 (gt, pred) items; each of ana, ben and cy labels every unit's
matches (80% copy a shared truth, else a random matching). `--spans`: each annotator also gives a curated ground
truth (0-2 spans) per sample, measured through span_agreement. Building the project is timed apart. Prints the
load average and the process's CPU share (CPU time / wall) with every figure, since the machine may be shared.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.services.agreement import agreement, tables  # noqa: E402
from benchresult import emit  # noqa: E402
from app.store import Change, Project  # noqa: E402
from calibration.annotators import item_agreement  # noqa: E402
from calibration.schemes.violations import Violation, ViolationSample  # noqa: E402

TEXT = "The product is the best on the market. It cures everything, instantly and forever."
CHECKER = "bench@1.0|model"
MATCHINGS = ([[0, 0], [1, 1]], [[0, 1], [1, 0]], [[0, 0]], [[1, 1]], [])


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), sum(cpus) / sum(walls), out


def build(path: Path, n: int, spans: bool, seed: int = 0) -> None:
    rng = random.Random(seed)
    v = (Violation("claim", 4, 11), Violation("absolute", 40, 55))
    with Project.create(path) as p:
        for lo in range(0, n, 20000):
            p.store("violations").write_violation_samples([ViolationSample(f"u{i:06d}", TEXT, v, {CHECKER: v}) for i in range(lo, min(n, lo + 20000))])
        truth = [rng.choice(MATCHINGS) for _ in range(n)]
        for who in ("ana", "ben", "cy"):
            changes = []
            for i in range(n):
                value = truth[i] if rng.random() < 0.8 else rng.choice(MATCHINGS)
                changes.append(Change(f"u{i:06d}", CHECKER, "matches", value))
                if spans:
                    k = rng.randint(0, 2)
                    gt = [{"start": s, "end": s + rng.randint(3, 12), "rule": "r"} for s in rng.sample(range(0, 60, 15), k)]
                    changes.append(Change(f"u{i:06d}", "", "ground_truth", gt))
            p.decisions.record(who, changes, origin="import")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--spans", action="store_true")
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.concord"
        wall, cpu, _ = timed(lambda: build(path, args.units, args.spans), 1)
        print(f"build: {args.units:,} units x 3 annotators in {wall:.1f} s (CPU share {cpu:.2f}; not part of the figure)")
        with Project.open(path) as p:
            wall, cpu, out = timed(lambda: agreement(p, n_boot=args.n_boot), args.repeats)
            ov = out["overall"]
            print(f"concord agreement path: median {wall:.2f} s over {args.repeats} runs (CPU share {cpu:.2f}), "
                  f"n_boot {args.n_boot}: Fleiss' kappa {ov['kappa']['estimate']:.4f}, alpha {ov['alpha']['estimate']:.4f}"
                  + (f", span F1 {ov['span_f1']['estimate']:.4f}" if ov.get("span_f1") else ""))
            wall_t, cpu_t, (items, _) = timed(lambda: tables(p), args.repeats)
            print(f"  of which reading labels and label_items: median {wall_t:.2f} s (CPU share {cpu_t:.2f})")
            rows = items[("violations", "matches")]
            wall_r, cpu_r, ref = timed(lambda: item_agreement(rows, n_boot=args.n_boot), args.repeats)
            print(f"reference (calibration.annotators.item_agreement on the same {len(rows):,} item rows): median "
                  f"{wall_r:.2f} s (CPU share {cpu_r:.2f}); Fleiss' kappa {ref['overall']['kappa']['estimate']:.4f}")
            same = abs(ov["kappa"]["estimate"] - ref["overall"]["kappa"]["estimate"]) < 1e-12
            result = (f"agreement path, {args.units:,} units x 3 (ref: item_agreement alone)", wall, wall * cpu,
                      wall_r, wall_r * cpu_r, same)
    print(f"load average after: {os.getloadavg()}")
    emit(*result[:5], matched=result[5])


if __name__ == "__main__":
    main()
