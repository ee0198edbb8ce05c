"""The violations scheme as a calibration `SearchProblem`: items are the candidate pairs of labeled units.

Units are the labeled (sample, checker) groups of a pair table: CV group = sample, stratum = checker, rank weight
= n_gt + n_pred (so the strata objectives rank checkers by F1). Items are their candidate pairs, human class 1
when a human matched the pair. A config (matching, t_overlap, t_rule, w_<component>..., t_match) decides a pair
by whether the matcher links it.

`decide` runs the violations matcher once per config (exact by construction; used for the few configs the
engine re-decides). `stats` is the fast path for whole chunks of the grid: configs are grouped by
(matching, t_overlap, t_rule); within a group every distinct weight vector gets one greedy pass that yields
every match threshold at once (calibration.schemes.violations.grid). Counts come back per cell as 2 x 2 confusion
matrices, identical to `decide`'s (a property test checks it).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.violations.config import COMPONENTS, PRESETS, MatchConfig, Thresholds
from calibration.schemes.violations.grid import matched_pairs, passing_mask, threshold_counts
from calibration.schemes.violations.pairdata import PairData, PairTableLike, check_table, human_rows, labeled_array
from calibration.schemes.violations.space import SearchSpace, SpaceError
from calibration.search.problem import Tick
from calibration.search.space import Columns, Space

WEIGHT_COLUMNS: tuple[str, ...] = tuple(f"w_{c}" for c in COMPONENTS)


def config_columns(config: MatchConfig) -> dict[str, Any]:
    """A MatchConfig as a row of the violations search space."""
    th = config.thresholds
    return {"matching": config.matching, "t_overlap": th.overlap, "t_rule": th.rule,
            **{f"w_{c}": config.weights[c] for c in COMPONENTS}, "t_match": th.match}


def match_config(row: Mapping[str, Any], name: str = "calibrated", version: str = "1.0.0") -> MatchConfig:
    """A row of the violations search space as a MatchConfig."""
    return MatchConfig(name=name, version=version, matching=row.get("matching", "greedy"),
                       weights={c: float(row[f"w_{c}"]) for c in COMPONENTS},
                       thresholds=Thresholds(float(row["t_overlap"]), float(row["t_rule"]), float(row["t_match"])))


class ViolationsProblem:
    """Calibrate match weights and thresholds of the violations metric against human match decisions."""

    scheme = "violations"
    group_noun = "sample"
    stratum_noun = "checker"
    decides = "the match"  # for the sentence on the chosen weights (calibration/search/report.py)
    dim_titles = {"w_overlap": "span overlap (IoU)", "w_rule": "rule similarity", "w_category": "category",
                  "w_explanation": "explanation similarity", "w_correction": "correction similarity"}
    n_classes = 2
    threaded = True  # stats runs a chunk's gate pairs side by side (or one gate pair's weight batches) on a thread pool
    embedding: str | None = None

    def __init__(self, pair_table: PairTableLike, human_matches: Iterable[tuple[int, int, int]] | np.ndarray,
                 labeled_groups: Iterable[int], space: SearchSpace | None = None, n_jobs: int | None = None) -> None:
        check_table(pair_table)
        self.table = pair_table
        self.labeled = labeled_array(pair_table, labeled_groups)
        self.human_rows = human_rows(pair_table, human_matches, self.labeled)  # bool over pair_table.pairs
        self.search_space = space or SearchSpace()
        self.space: Space = self.search_space.space()
        self.n_jobs = n_jobs
        groups = pair_table.groups.iloc[self.labeled]
        self.units = pd.DataFrame({
            "group": groups["sample_id"].astype(str).to_numpy(),
            "stratum": groups["checker"].astype(str).to_numpy(),
            "rank_weight": (groups["n_gt"].to_numpy(dtype=np.float64) + groups["n_pred"].to_numpy(dtype=np.float64)),
        })
        unit_of_group = np.full(len(pair_table.groups), -1, dtype=np.int64)
        unit_of_group[self.labeled] = np.arange(self.labeled.size)
        self.data = PairData.build(pair_table, self.human_rows, unit_of_group, self.labeled.size)
        self.item_unit = self.data.unit
        self.human = self.data.human.astype(np.int64)

    # ---------------------------------------------------------------- SearchProblem
    def baselines(self) -> dict[str, dict[str, Any]]:
        """The spec's presets (std_match, ha_match), as they are: greedy matching, their own thresholds."""
        return {name: config_columns(cfg) for name, cfg in PRESETS.items()}

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        cfg = match_config(config)
        th = cfg.thresholds
        out = {"scheme": self.scheme, "matching": cfg.matching, "weights": dict(cfg.weights),
               "thresholds": {"overlap": th.overlap, "rule": th.rule, "match": th.match}}
        if self.embedding:  # the similarity backend the pair table was built with belongs to the config
            out["embedding"] = self.embedding
        return out

    def decide(self, configs: Columns) -> np.ndarray:
        """(n_configs, n_pairs) 0/1: does the matcher link the pair under each config (one matcher run each)."""
        n = len(configs["t_match"])
        out = np.zeros((n, len(self.data)), dtype=np.int64)
        for i in range(n):
            out[i] = matched_pairs(self.data, match_config({k: v[i] for k, v in configs.items()}))
        return out

    def stats(self, configs: Columns, cell_of_item: np.ndarray, n_cells: int, tick: Tick | None = None) -> np.ndarray:
        """(n_configs, n_cells, 2, 2) confusion counts [human, machine] per cell, by the greedy-pass evaluator."""
        data = self.data.with_units(cell_of_item, n_cells)
        n = len(configs["t_match"])
        W = np.column_stack([np.asarray(configs[c], dtype=np.float64) for c in WEIGHT_COLUMNS])
        tm = np.asarray(configs["t_match"], dtype=np.float64)
        keys = pd.DataFrame({"m": configs["matching"], "o": configs["t_overlap"], "r": configs["t_rule"]})
        groups = list(keys.groupby(["m", "o", "r"], sort=False).indices.items())
        plans = []
        for (matching, to, tr), rows in groups:
            wu, w_inv = _distinct_rows(W[rows])
            tu, t_inv = np.unique(tm[rows], return_inverse=True)
            work = wu.shape[0] * max(1, int(passing_mask(data.comps, to, tr).sum()))
            plans.append((matching, float(to), float(tr), rows, wu, w_inv, tu, t_inv, work))
        total = sum(p[-1] for p in plans) or 1
        counts = np.zeros((n, n_cells, 2), dtype=np.int64)
        done = [0.0] * len(plans)
        lock = threading.Lock()
        jobs = self.n_jobs or min(2, os.cpu_count() or 1)
        inner = self.n_jobs if len(plans) == 1 else 1

        def run(i: int) -> None:
            matching, to, tr, rows, wu, w_inv, tu, t_inv, work = plans[i]

            def sub(share: float) -> None:
                if tick is not None:
                    with lock:
                        done[i] = share * work
                        tick(sum(done) / total)

            c = threshold_counts(data, wu, tu, to, tr, str(matching), inner, sub)
            counts[rows] = c[w_inv, t_inv]

        if len(plans) == 1 or jobs == 1:
            for i in range(len(plans)):
                run(i)
        else:  # gate pairs side by side, one thread each: their structures (numpy) overlap, not only the kernel
            with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="concord-gates") as pool:
                futures = [pool.submit(run, i) for i in range(len(plans))]
                try:
                    for f in futures:
                        f.result()
                except BaseException:
                    for f in futures:
                        f.cancel()
                    raise
        pairs = data.unit_pairs
        pos = data.unit_positives
        out = np.empty((n, n_cells, 2, 2), dtype=np.int64)
        out[..., 1, 1] = counts[..., 1]
        out[..., 0, 1] = counts[..., 0]
        out[..., 1, 0] = pos - counts[..., 1]
        out[..., 0, 0] = pairs - pos - counts[..., 0]
        return out


def _distinct_rows(W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows in order of first appearance (the grid's simplex order, so batches match a plain grid run)
    and the position of each input row among them."""
    _, first, inv = np.unique(W, axis=0, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return W[first[order]], rank[inv.ravel()]


def search_problem(records: Sequence[Any], labels: Mapping[tuple[str, str], Mapping[str, Any]],
                   options: Mapping[str, Any]) -> ViolationsProblem | None:
    """The Scheme hook: `options` carries the pair table ("pair_table", built by the caller with its similarity
    backend and cache) and optionally "space" (a SearchSpace) and "n_jobs"; labels' "matches" are the human
    decisions. None when no unit of the table is labeled. `options["unlabeled"]` (issue #16, the queue): every
    unit of the table instead (no human match where unlabeled) and a boolean `labeled` column in `units`."""
    table = options.get("pair_table")
    embedding = None
    if table is None:  # built here from the records: `embedding` (default the std backend), `cache`, `progress`
        from calibration.schemes.violations.config import DEFAULT_EMBEDDING
        from calibration.schemes.violations.evaluation import pair_table

        embedding = options.get("embedding") or DEFAULT_EMBEDDING
        if not any((k or {}).get("matches") is not None for k in labels.values()):
            return None  # refuse before embedding anything
        table = pair_table([getattr(r, "sample", r) for r in records], embedding, options)
    index = {(str(s), str(c)): g for g, (s, c) in enumerate(zip(table.groups["sample_id"], table.groups["checker"]))}
    labeled, matches = [], []
    for key, kinds in labels.items():
        g = index.get((str(key[0]), str(key[1])))
        if g is None or kinds.get("matches") is None:
            continue
        labeled.append(g)
        matches.extend((g, int(a), int(b)) for a, b in kinds["matches"])
    if not labeled:
        return None
    every = bool(options.get("unlabeled"))  # issue #16 (the queue): every unit of the table, humans where labeled
    was_labeled = labeled
    if every:
        labeled = list(range(len(table.groups)))
    space = options.get("space")
    if space is None and any(k in options for k in ("components", "step", "thresholds", "fix", "matching")):
        space = make_space(options.get("components", "ha"), options.get("step", 0.1), options.get("matching") or "greedy",
                           options.get("thresholds"), options.get("fix"))
    problem = ViolationsProblem(table, matches, labeled, space, options.get("n_jobs"))
    problem.embedding = embedding
    if every:
        problem.units["labeled"] = np.isin(problem.labeled, np.asarray(was_labeled, dtype=np.int64))
    return problem


def make_space(components: str | Sequence[str] = "ha", step: float = 0.1, matching: str = "greedy",
               thresholds: Mapping[str, Sequence[float]] | None = None,
               fixed_weights: Mapping[str, float] | None = None) -> SearchSpace:
    """A SearchSpace from the CLI's words: components "std" / "ha" / "overlap,rule", thresholds per name, fixed
    weights. Raises SpaceError (a ValueError) naming the bad part."""
    from calibration.schemes.violations.space import PRESET_COMPONENTS

    comps = PRESET_COMPONENTS.get(components, None) if isinstance(components, str) else tuple(components)
    if comps is None:
        comps = tuple(c.strip() for c in str(components).split(",") if c.strip())
    kwargs: dict[str, Any] = {k: tuple(v) for k, v in (thresholds or {}).items()}
    try:
        return SearchSpace(components=comps, step=step, matching=matching, fixed_weights=dict(fixed_weights or {}), **kwargs)
    except TypeError as exc:
        raise SpaceError(str(exc)) from None
