"""Simulation benchmark for the labeling queue (issue #16): how many labels each order needs.

Planted data: a pool of units (one decision each) with three features in [0, 1] and a category; the human decision
is a hidden config's (weights 0.5/0.3/0.2 on the features, threshold 0.72: `score > t`, about 12% positives) with
NOISE of the decisions flipped at random. The search problem is the generic engine's: Simplex(a, b, c; step 0.05) x
Grid(t; 0.40 .. 0.90 by 0.005) = 23,331 configs. A separate test pool drawn the same way is never labeled: "held-out kappa" is
the calibrated config's kappa on it, the target the planted config's kappa on it minus 0.02.

Each order labels from zero: the first BATCH units are the seeded random order for every order (nothing is
calibrated yet), then every BATCH labels the Calibrator is re-fit on the labeled units (5 folds, no bootstrap) and
the next BATCH come from the order, through calibration.queue (the same functions app/services/queue.py uses:
committee of the run's best configs, neighbours in the space, seeded tie-breaks). metric-vs-llm's machine label is
a second planted config (weights 0.4/0.4/0.2, t 0.7) with its own noise. `annotators` needs several annotators and
is not simulated. "Needs n labels": the re-calibration at n labels and the next two (n + 20, n + 40) all meet the
target (a single lucky fit with a handful of labels does not count). Printed: labels needed (median over SEEDS, and each seed's), the ratio to random, load average
and CPU share.

    .venv/bin/python benchmarks/bench_queue.py [--seeds 5] [--pool 2000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from calibration import queue as q
from calibration.search import Calibrator, Grid, Simplex, Space
from calibration.search.objectives import kappa

BATCH = 20
STAY = 3  # the target counts as reached at n labels when n and the next STAY - 1 re-calibrations all meet it
NOISE = 0.02
PLANTED = {"a": 0.5, "b": 0.3, "c": 0.2, "t": 0.72}
LLM = {"a": 0.4, "b": 0.4, "c": 0.2, "t": 0.7}
SPACE = Space((Simplex(("a", "b", "c"), 0.05), Grid("t", tuple(np.round(np.arange(0.40, 0.9001, 0.005), 3)))))


@dataclass
class Planted:
    """A SearchProblem over chosen rows of a pool (units = items)."""

    feats: np.ndarray
    human: np.ndarray
    units: pd.DataFrame
    space: Space = SPACE
    n_classes: int = 2

    @property
    def item_unit(self) -> np.ndarray:
        return np.arange(len(self.units))

    def decide(self, configs: dict[str, np.ndarray]) -> np.ndarray:
        w = np.stack([np.asarray(configs[c], dtype=np.float64) for c in ("a", "b", "c")], axis=1)
        return (self.feats @ w.T > np.asarray(configs["t"], dtype=np.float64)[None, :]).T.astype(np.int64)

    def baselines(self) -> dict[str, dict[str, float]]:
        return {"equal": {"a": 0.3, "b": 0.3, "c": 0.4, "t": 0.5}}

    def to_params(self, config: dict[str, float]) -> dict[str, float]:
        return dict(config)


def draw(n: int, rng: np.random.Generator, config: dict[str, float], noise: float) -> tuple[np.ndarray, np.ndarray]:
    feats = rng.random((n, 3))
    score = feats @ np.array([config["a"], config["b"], config["c"]])
    h = (score > config["t"]).astype(np.int64)
    flip = rng.random(n) < noise
    return feats, np.where(flip, 1 - h, h)


def problem(feats: np.ndarray, human: np.ndarray, rows: np.ndarray, cats: np.ndarray,
            labeled: np.ndarray | None = None) -> Planted:
    units = pd.DataFrame({"group": [f"u{i}" for i in rows], "stratum": cats[rows]})
    if labeled is not None:
        units["labeled"] = labeled[rows]
    return Planted(feats[rows], human[rows], units)


def test_kappa(feats: np.ndarray, human: np.ndarray, config: dict[str, float]) -> float:
    p = Planted(feats, human, pd.DataFrame({"group": np.arange(len(human))}))
    d = p.decide({k: np.array([v]) for k, v in config.items()})[0].astype(bool)
    h = human.astype(bool)
    return float(kappa((d & h).sum(), (d & ~h).sum(), (~d & h).sum(), (~d & ~h).sum()))


def run_order(order: str, seed: int, pool: int, max_labels: int) -> int | None:
    rng = np.random.default_rng(1000 + seed)
    feats, human = draw(pool, rng, PLANTED, NOISE)
    llm_h = (feats @ np.array([LLM["a"], LLM["b"], LLM["c"]]) > LLM["t"]).astype(np.int64)
    llm_h = np.where(rng.random(pool) < 0.1, 1 - llm_h, llm_h)
    cats = rng.choice(np.array(["w", "x", "y", "z"]), pool, p=[0.55, 0.25, 0.15, 0.05])
    t_feats, t_human = draw(pool, rng, PLANTED, NOISE)
    target = test_kappa(t_feats, t_human, PLANTED) - 0.02
    labeled = np.zeros(pool, dtype=bool)
    everything = np.arange(pool)
    start, streak = None, 0
    first = q.random_order(~labeled, seed)[:BATCH]
    labeled[first] = True
    while labeled.sum() <= max_labels:
        rows = np.flatnonzero(labeled)
        cal = Calibrator(objective="kappa", folds=5, seed=seed, n_boot=0, min_units=0, min_positives=0)
        try:
            cal.fit(problem(feats, human, rows, cats))
            got = test_kappa(t_feats, t_human, cal.best_config_)
        except ValueError:
            got = -1.0
        if got >= target:
            start = start or int(labeled.sum())
            streak += 1
            if streak == STAY:
                return start
        else:
            start, streak = None, 0
        eligible = ~labeled
        if order == "random":
            nxt = q.random_order(eligible, seed)
        elif order == "list":
            nxt = np.flatnonzero(eligible)
        elif order == "stratified":
            nxt = q.stratified_order(cats, eligible, seed, labeled)
        else:
            cand = problem(feats, human, everything, cats, labeled)
            machine = problem(feats, llm_h, everything, cats, np.ones(pool, dtype=bool))
            primary, secondary = q.model_scores(cand, cal.cv_results_, cal.best_config_, order, machine)
            nxt = q.order_by(primary, eligible, seed, secondary)
        labeled[nxt[:BATCH]] = True
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--pool", type=int, default=2000)
    ap.add_argument("--max-labels", type=int, default=1200)
    args = ap.parse_args()
    print(f"load average before: {os.getloadavg()}")
    orders = ("random", "disagreement", "boundary", "metric-vs-llm", "stratified", "list")
    needed: dict[str, list[int | None]] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for order in orders:
        s0 = time.perf_counter()
        needed[order] = [run_order(order, seed, args.pool, args.max_labels) for seed in range(args.seeds)]
        print(f"  {order:14s} done in {time.perf_counter() - s0:5.1f} s", flush=True)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0

    def med(xs: list[int | None]) -> float:
        return statistics.median([x if x is not None else float("inf") for x in xs])

    ref = med(needed["random"])
    print(f"\nlabels to reach held-out kappa within 0.02 of the planted config's (pool {args.pool}, noise {NOISE}, "
          f"batch {BATCH}, {args.seeds} seeds; '>' = not reached by {args.max_labels})")
    print(f"{'order':14s} {'median':>7s} {'vs random':>9s}  per seed")
    for order in orders:
        m = med(needed[order])
        per = " ".join(str(x) if x is not None else f">{args.max_labels}" for x in needed[order])
        print(f"{order:14s} {m:7.0f} {m / ref:9.2f}  {per}")
    print(f"\nwall {wall:.1f} s, CPU share {cpu / wall:.2f} (process CPU / wall), load average after: {os.getloadavg()}")
    from benchresult import emit  # here: tests load this module by path, without benchmarks/ on sys.path

    emit(f"{len(orders)} orders x {args.seeds} seeds, pool {args.pool} (no ref)", wall, cpu)


if __name__ == "__main__":
    main()
