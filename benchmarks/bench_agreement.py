"""Speed of agreement between several annotators: 100,000 units x 3 annotators (synthetic), median of repeats.

    python benchmarks/bench_agreement.py [--units 100000] [--repeats 3] [--n-boot 1000]

Items: one categorical label (4 categories) per unit and annotator, 5 units per sample; item_agreement (pairwise
kappa, Fleiss, alpha, bootstrap over samples) against a plain reference in the same process (scikit-learn's kappa per
pair and the krippendorff package, no intervals). Spans: 100,000 samples with 0-3 spans per annotator;
span_agreement (matching, micro F1, unitizing alpha, bootstrap) against a plain Python loop of the greedy matching.
Prints the load average and the process's CPU share, since the machine may be shared.
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import krippendorff  # noqa: E402
from sklearn.metrics import cohen_kappa_score  # noqa: E402

from benchresult import emit  # noqa: E402
from calibration.annotators import item_agreement, span_agreement  # noqa: E402


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any]:
    """(median wall seconds, CPU share of one core, last result)."""
    walls, cpus, out = [], [], None
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), sum(cpus) / sum(walls), out


def item_rows(n: int, rng: np.random.Generator) -> list[tuple]:
    truth = rng.integers(0, 4, n)
    rows = []
    for a in range(3):
        noisy = np.where(rng.random(n) < 0.3, rng.integers(0, 4, n), truth)
        rows += [(u // 5, u, f"ann{a}", int(c)) for u, c in enumerate(noisy)]
    return rows


def plain_items(rows: list[tuple], n: int) -> tuple[list[float], float]:
    by = {a: np.full(n, -1) for a in ("ann0", "ann1", "ann2")}
    for _, u, a, c in rows:
        by[a][u] = c
    kappas = [cohen_kappa_score(by[x], by[y]) for x, y in itertools.combinations(sorted(by), 2)]
    return kappas, krippendorff.alpha(reliability_data=np.stack(list(by.values())).astype(float),
                                      level_of_measurement="nominal")


def span_data(n: int, rng: np.random.Generator) -> tuple[dict, dict]:
    spans, lengths = {}, {}
    base = rng.integers(0, 200, size=(n, 3))
    for s in range(n):
        lengths[s] = 300
        for a in range(3):
            k = int(rng.integers(0, 4))
            starts = np.clip(base[s, :k] + rng.integers(-5, 6, k), 0, 250)
            spans[(s, f"ann{a}")] = [(int(x), int(x) + int(rng.integers(3, 40))) for x in starts]
    return spans, lengths


def plain_spans(spans: dict, n: int) -> float:
    matched = total = 0
    for s in range(n):
        for x, y in itertools.combinations(("ann0", "ann1", "ann2"), 2):
            a, b = sorted(spans[(s, x)]), sorted(spans[(s, y)])
            cand = []
            for i, (s1, e1) in enumerate(a):
                for j, (s2, e2) in enumerate(b):
                    inter = min(e1, e2) - max(s1, s2)
                    if inter > 0:
                        cand.append((-inter / (e1 - s1 + e2 - s2 - inter), i, j))
            ui, uj = set(), set()
            for _, i, j in sorted(cand):
                if i not in ui and j not in uj:
                    ui.add(i)
                    uj.add(j)
                    matched += 1
            total += len(a) + len(b)
    return 2 * matched / total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-boot", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n = args.units
    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs; {n:,} units x 3 annotators, "
          f"n_boot={args.n_boot}, median of {args.repeats}")
    rows = item_rows(n, rng)
    wall, share, out = timed(lambda: item_agreement(rows, n_boot=args.n_boot), args.repeats)
    pw, pshare, (kappas, alpha) = timed(lambda: plain_items(rows, n), args.repeats)
    assert np.allclose([p["kappa"]["estimate"] for p in out["pairs"]], kappas)
    assert np.isclose(out["overall"]["alpha"]["estimate"], alpha)
    k = out["overall"]["kappa"]
    print(f"items: item_agreement {wall:.2f} s (CPU {share:.0%}), Fleiss {k['estimate']:.4f} "
          f"[{k['low']:.4f}, {k['high']:.4f}], alpha {alpha:.4f}; plain reference (3 sklearn kappas + krippendorff, "
          f"no intervals) {pw:.2f} s (CPU {pshare:.0%})")
    items = (f"item_agreement, {n:,} units x 3 (ref: sklearn + krippendorff, no CI)", wall, wall * share, pw,
             pw * pshare)
    spans, lengths = span_data(n, rng)
    n_spans = sum(map(len, spans.values()))
    wall, share, out = timed(lambda: span_agreement(spans, lengths=lengths, n_boot=args.n_boot), args.repeats)
    pw, pshare, f1 = timed(lambda: plain_spans(spans, n), args.repeats)
    assert out["overall"]["span_f1"]["estimate"] == f1
    ov = out["overall"]
    print(f"spans ({n_spans:,}): span_agreement {wall:.2f} s (CPU {share:.0%}), span F1 {f1:.4f} "
          f"[{ov['span_f1']['low']:.4f}, {ov['span_f1']['high']:.4f}], u-alpha {ov['u_alpha']['estimate']:.4f}; "
          f"plain loop (matching only, no intervals) {pw:.2f} s (CPU {pshare:.0%})")
    print(f"load average after: {os.getloadavg()}")
    emit(*items, matched=True)  # the asserts above stop the run when the figures differ
    emit(f"span_agreement, {n_spans:,} spans (ref: plain greedy loop, no CI)", wall, wall * share, pw, pw * pshare,
         matched=True)


if __name__ == "__main__":
    main()
