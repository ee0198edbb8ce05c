"""Hand-run: adaptive overlap (calibration/overlap.py) replayed on FaithBench's real several-annotator labels against a
fixed overlap of 2: labels used, the human-human kappa with its 95% interval and width, and how often the resolved
label matches the whole panel's majority.

    python benchmarks/bench_adaptive_overlap.py [DIR] [--orders 20] [--bootstrap 1000] [--detector hhem-2.1]
        [--margin 0.1] [--audit 0.1] [--budgets 0.7,0.8,0.9,1.0] [--seed 0]

DIR holds batch_*.json as released (read only, never copied); default ../shared/data/faithbench. Every summary was
read by 2 to 5 annotators. One replay: each summary's annotators in a random order (one of `--orders` seeded
orders); the fixed design takes the first two of every summary; the adaptive design gives every summary the first,
then (rounds of calibration.overlap.next_round) the next one to the summaries whose confidence is below 3/4 (the
annotators disagree, the detector disagrees with them, or its score is within `--margin` of 0.5), an `--audit`
share of the confident ones, up to a budget of (share x the fixed design's labels). The detector is the machine: it
says hallucinated when its consistency score is below 0.5. Kappa: calibration.overlap.stratified_kappa between the
first and second annotator (post-stratified on the second-label decision's signals for the adaptive design; one
stratum for the fixed one), bootstrap over summaries. "random" gives the second label to a random subset of the
smallest budget's size instead: what any design with that many pairs can reach. Figures are means over the orders; "width <= fixed" counts
the orders where the adaptive interval is no wider.
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
from calibration.overlap import Evidence, next_round, stratified_kappa, stratum  # noqa: E402
from calibration.schemes.judge import faithbench  # noqa: E402


def load(directory: Path, detector: str, margin: float) -> tuple[list[dict[str, int]], list[int | None], list[bool]]:
    """Per summary: annotator -> label (1 hallucinated), the detector's label (None: no score), near its boundary."""
    raw, lines = faithbench.load(directory)
    index = {r["id"]: i for i, r in enumerate(raw)}
    labels: list[dict[str, int]] = [{} for _ in raw]
    for name, rows in lines.items():
        for row in rows:
            labels[index[row["sample"]]][name] = int(row["label"])
    machine, near = [], []
    for r in raw:
        score = (r["judges"].get(detector) or {}).get("score")
        machine.append(None if score is None else int(score < 0.5))
        near.append(score is not None and abs(score - 0.5) < margin)
    return labels, machine, near


def replay(orders: list[list[int]], machine: list[int | None], near: list[bool], budget: int, audit: float,
           seed: int) -> tuple[list[list[int]], list[tuple]]:
    """How many of its ordered labels each summary gets under adaptive overlap, and each one's stratum."""
    given = [1] * len(orders)
    strata = [stratum(Evidence((o[0],), 0, m, b)) for o, m, b in zip(orders, machine, near)]
    spent, rnd = len(orders), 0
    while spent < budget:
        # a summary whose annotators are all used up cannot get another: shown as pending (never ready)
        ev = [Evidence(tuple(o[:g]), int(g >= len(o)), m, b) for o, g, m, b in zip(orders, given, machine, near)]
        chosen = next_round(ev, budget=budget - spent, audit=audit if rnd == 0 else 0.0, seed=seed + rnd)
        if not chosen:
            break
        for i in chosen:
            given[i] += 1
        spent += len(chosen)
        rnd += 1
    return [o[:g] for o, g in zip(orders, given)], strata


def resolved_right(used: list[list[int]], reference: list[int | None]) -> float:
    """Share of summaries (with a clear panel majority) whose majority of the labels used (ties: the later label,
    as the store resolves them) is the panel's."""
    hits = []
    for labels, ref in zip(used, reference):
        if ref is None:
            continue
        ones = sum(labels)
        mine = 1 if 2 * ones > len(labels) else 0 if 2 * ones < len(labels) else labels[-1]
        hits.append(mine == ref)
    return float(np.mean(hits))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("directory", type=Path, nargs="?", default=ROOT.parent / "shared" / "data" / "faithbench")
    ap.add_argument("--orders", type=int, default=20)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--detector", default="hhem-2.1")
    ap.add_argument("--margin", type=float, default=0.1)
    ap.add_argument("--audit", type=float, default=0.1)
    ap.add_argument("--budgets", default="0.7,0.8,0.9,1.0")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not args.directory.is_dir():
        skip("no data")
        return
    wall, cpu = time.perf_counter(), time.process_time()
    labels, machine, near = load(args.directory, args.detector, args.margin)
    n = len(labels)
    panel = [sorted(d.values()) for d in labels]
    reference = [None if 2 * sum(v) == len(v) else int(2 * sum(v) > len(v)) for v in panel]
    full = item_agreement([(i, "", a, c) for i, d in enumerate(labels) for a, c in d.items()], n_boot=args.bootstrap,
                          seed=args.seed)["overall"]["kappa"]
    print(f"FaithBench: {n} summaries, {sum(map(len, labels))} labels (2-5 annotators each); machine {args.detector} "
          f"at 0.5 (near the boundary: within {args.margin}); audit {args.audit}; {args.orders} random annotator "
          f"orders; {args.bootstrap} bootstrap replicates over summaries; seed {args.seed}")
    print(f"every label: Fleiss' kappa {full['estimate']:.3f} [{full['low']:.3f}, {full['high']:.3f}]")
    rng = np.random.default_rng(args.seed)
    orders = []
    for _ in range(args.orders):
        orders.append([[d[a] for a in rng.permutation(sorted(d))] for d in labels])
    rows: dict[str, list[tuple[float, ...]]] = {}
    for r, order in enumerate(orders):
        seed = args.seed + r
        fixed = stratified_kappa([o[0] for o in order], [o[1] for o in order], [0] * n, n_boot=args.bootstrap, seed=seed)
        rows.setdefault("fixed 2", []).append((2 * n, fixed["estimate"], fixed["low"], fixed["high"],
                                               fixed["high"] - fixed["low"], resolved_right([o[:2] for o in order],
                                                                                            reference), 1.0))
        shares = [float(x) for x in args.budgets.split(",")]
        # the bound for any design with that many pairs: a second label on a random subset, no adaptivity at all
        pick = np.random.default_rng(seed).permutation(n)[: round(shares[0] * 2 * n) - n]
        second = [None] * n
        for i in pick:
            second[i] = order[i][1]
        k = stratified_kappa([o[0] for o in order], second, [0] * n, n_boot=args.bootstrap, seed=seed)
        rows.setdefault(f"random {shares[0]:.0%}", []).append(
            (n + len(pick), k["estimate"], k["low"], k["high"], k["high"] - k["low"],
             resolved_right([o[:2] if s is not None else o[:1] for o, s in zip(order, second)], reference),
             float(k["high"] - k["low"] <= fixed["high"] - fixed["low"])))
        for share in shares:
            used, strata = replay(order, machine, near, round(share * 2 * n), args.audit, seed)
            k = stratified_kappa([u[0] for u in used], [u[1] if len(u) > 1 else None for u in used], strata,
                                 n_boot=args.bootstrap, seed=seed)
            width = k["high"] - k["low"]
            rows.setdefault(f"adaptive {share:.0%}", []).append(
                (sum(map(len, used)), k["estimate"], k["low"], k["high"], width, resolved_right(used, reference),
                 float(width <= fixed["high"] - fixed["low"])))
    print(f"\n{'design':14} {'labels':>7} {'kappa':>6} {'95% CI':>16} {'width':>6} {'resolved = panel':>17} "
          f"{'width <= fixed':>15}")
    for name, vals in rows.items():
        m = np.mean(np.array(vals, dtype=float), axis=0)
        print(f"{name:14} {m[0]:7.0f} {m[1]:6.3f} [{m[2]:6.3f}, {m[3]:6.3f}] {m[4]:6.3f} {m[5]:17.3f} "
              f"{m[6]:15.2f}")
    emit(f"adaptive-overlap replay, {args.orders} orders (no ref)", *machine_state(wall, cpu))


if __name__ == "__main__":
    main()
