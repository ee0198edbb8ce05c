"""The violations scheme's evaluation hook (`concord evaluate`): the checker leaderboard under match configs, the
humans' own figures, and per-unit machine scores for the review list.

Pure: side effects come in through `options` from the app -- `cache` (the project's embedding cache, so texts are
embedded once per project), `progress`, and `save_scores(config_ref, rows)` (the list's machine F1 column).
Options read here:
  presets       preset names (default std_match and ha_match)
  params        parameter dicts (MatchConfig.to_dict() shape: a config applied in the project, `--use`)
  config_file   a match config TOML file (`--config`)
  matching      "greedy" | "optimal": override every config's matching
  embedding     override every config's similarity backend
  n_boot, seed  bootstrap replicates and seed of the 95% intervals
  machine_decisions  optional callback(config_ref, {(sample, checker): {"matches": [[gt, pred], ...]}}): the first
                config's matches as human-style labels, for the human ceiling beside the metric (issue #15)
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain, compress, repeat
from operator import is_not, methodcaller
from typing import Any

import numpy as np
import pandas as pd

from calibration.schemes.base import Report, Table
from calibration.schemes.violations.columns import (
    ColumnWindows,
    ViolationColumns,
    object_array,
    str_array,
)
from calibration.schemes.violations.config import PRESETS, ConfigError, MatchConfig
from calibration.schemes.violations.metrics import prf, unit_counts
from calibration.schemes.violations.pairs import PairTable, build_pair_table
from calibration.similarity.pairwise import TextSimilarity
from calibration.unit_scores import UnitScores

DEFAULT_PRESETS = ("std_match", "ha_match")


def configs_from(options: Mapping[str, Any]) -> list[MatchConfig]:
    """The match configs `options` ask for (ConfigError / KeyError name the bad one)."""
    configs: list[MatchConfig] = []
    if options.get("config_file"):
        configs.append(MatchConfig.from_toml(options["config_file"]))
    for d in options.get("params") or ():
        configs.append(MatchConfig.from_dict(d, source=f"{d.get('name', 'config')}@{d.get('version', '')}"))
    for name in options.get("presets") or ():
        if name not in PRESETS:
            raise ConfigError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}")
        configs.append(PRESETS[name])
    if not configs:
        configs = [PRESETS[n] for n in DEFAULT_PRESETS]
    if options.get("embedding"):
        configs = [c.with_(embedding=options["embedding"]) for c in configs]
    return configs


def pair_table(samples: Sequence[Any] | ViolationColumns, embedding: str | TextSimilarity, options: Mapping[str, Any]
               ) -> PairTable:
    progress = options.get("progress")
    if progress is not None:
        progress.update(0, 1, f"embedding texts ({getattr(embedding, 'cache_key', embedding)})")
    table = build_pair_table(samples, embedding, cache=options.get("cache"))
    if progress is not None:
        progress.update(1, 1, "pair table ready")
    return table


def human_groups(table: PairTable, labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> tuple[list[tuple[int, int, int]], list[int]]:
    """Human matches mapped onto the table's groups: ((group, gt, pred) sorted, labeled groups sorted)."""
    matches, labeled = human_group_arrays(table, labels)
    return list(zip(*(matches.T.tolist() if len(matches) else ((), (), ())))), labeled.tolist()


def human_group_arrays(table: PairTable, labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> tuple[np.ndarray, np.ndarray]:
    """`human_groups` as arrays: an (n, 3) int64 array of (group, gt, pred) rows sorted, the labeled groups sorted.
    Units are found by codes (samples and checkers as integers) and the pairs read into one array: a dict keyed by
    every group and a tuple per pair took most of a second at 100k samples."""
    return LabelMatches.of(labels).group_arrays(table)


class LabelMatches:
    """The human labels' `matches` as arrays, read once (C-level passes over the labels: map, compress, zip; a Python
    loop over 200k units was half of `human_group_arrays`): each labeled unit's sample id and checker (str), its list
    of pairs, and its sample's code (`windowed` picks a window's units by their samples)."""

    def __init__(self, sids: np.ndarray, units: np.ndarray, values: list[Any]) -> None:
        self.sids, self.units, self.values = sids, units, values
        self._codes: tuple[np.ndarray, pd.Index] | None = None

    @classmethod
    def of(cls, labels: Mapping[tuple[str, str], Mapping[str, Any]]) -> "LabelMatches":
        matches = list(map(methodcaller("get", "matches"), labels.values()))
        has = list(map(is_not, matches, repeat(None)))
        values = list(compress(matches, has))
        if not values:
            return cls(object_array([]), object_array([]), [])
        sids, units = zip(*compress(labels.keys(), has))
        return cls(str_array(sids), str_array(units), values)

    def windowed(self, sample_ids: np.ndarray) -> "LabelMatches":
        """The labels of units of these samples (a window's), in their order here."""
        if not self.values:
            return self
        if self._codes is None:
            codes, uniques = pd.factorize(self.sids)
            self._codes = codes, pd.Index(uniques, dtype=object)
        codes, uniques = self._codes
        mark = np.zeros(len(uniques), dtype=bool)
        found = uniques.get_indexer(pd.Index(str_array(sample_ids), dtype=object))
        mark[found[found >= 0]] = True
        keep = np.flatnonzero(mark[codes])
        return LabelMatches(self.sids[keep], self.units[keep], [self.values[i] for i in keep.tolist()])

    def group_arrays(self, table: PairTable) -> tuple[np.ndarray, np.ndarray]:
        """`human_group_arrays` of these labels on `table`."""
        if not self.values:  # nothing to map: skip indexing every group (100k at 100k samples)
            return np.empty((0, 3), dtype=np.int64), np.empty(0, dtype=np.int64)
        group = _groups_of(table, self.sids, self.units)
        found = group >= 0
        values = list(compress(self.values, found.tolist()))
        group = group[found]
        n_pairs = np.fromiter(map(len, values), dtype=np.int64, count=len(values))
        flat = _pair_array(values, int(n_pairs.sum()))
        rows = np.column_stack([np.repeat(group, n_pairs), flat])
        rows = rows[np.lexsort((rows[:, 2], rows[:, 1], rows[:, 0]))] if len(rows) else rows
        return rows, np.sort(group)


def _pair_array(values: Sequence[Any], n: int) -> np.ndarray:
    """The `n` [gt, pred] pairs of `values` (lists of pairs) as an (n, 2) int64 array, read in one call; a value that
    is not a list of pairs (or a number the fast read refuses) goes through `int(a), int(b)` per pair, as the pairs
    were always read (the same numbers, the same error)."""
    try:
        flat = np.fromiter(chain.from_iterable(chain.from_iterable(values)), dtype=np.int64)
        if flat.size == 2 * n:
            return flat.reshape(n, 2)
    except (TypeError, ValueError, OverflowError):
        pass
    return np.array([(int(a), int(b)) for a, b in chain.from_iterable(values)], dtype=np.int64).reshape(-1, 2)


def _groups_of(table: PairTable, sids: np.ndarray, units: np.ndarray) -> np.ndarray:
    """The group of each (sample id, checker), -1 where the table has no such unit: samples and checkers as codes of
    the table's own, and each group's pair of codes as one integer."""
    if table.codes is not None:  # the builder's own codes (unique sample ids and checker names, all str)
        gs_code, s_distinct = table.codes.s_idx, table.codes.samples
        gc_code, c_distinct = table.codes.c_idx, object_array(table.codes.checkers)
    else:
        g_sample, g_checker = (str_array(table.groups[c].to_numpy(dtype=object)) for c in ("sample_id", "checker"))
        (gs_code, s_distinct), (gc_code, c_distinct) = pd.factorize(g_sample), pd.factorize(g_checker)
    # object indexes: pandas would copy str values into its Arrow string type and back
    s_index, c_index = pd.Index(s_distinct, dtype=object), pd.Index(c_distinct, dtype=object)
    width = max(len(c_index), 1)
    g_key = gs_code.astype(np.int64) * width + gc_code
    s_code, c_code = (index.get_indexer(pd.Index(values, dtype=object)).astype(np.int64)
                      for index, values in ((s_index, sids), (c_index, units)))
    key = np.where((s_code >= 0) & (c_code >= 0), s_code * width + c_code, -1)
    return pd.Index(g_key).get_indexer(key).astype(np.int64)  # key -1 matches no group (keys are >= 0)


def human_leaderboard(table: PairTable, matches: Sequence[tuple[int, int, int]] | np.ndarray,
                      labeled: Sequence[int] | np.ndarray) -> dict[str, dict[str, float]]:
    """Per-checker P/R/F1 from the humans' own matches, on the units they labeled (`human_groups`, or its arrays)."""
    return human_figures(human_sums(table, matches, labeled))


def human_sums(table: PairTable, matches: Sequence[tuple[int, int, int]] | np.ndarray,
               labeled: Sequence[int] | np.ndarray) -> dict[str, list[int]]:
    """Checker -> [units, tp, n_pred, n_gt] summed over the labeled units (integers: windows add up). Integer sums per
    checker by bincount (a pandas lookup per labeled unit took most of a second at 10k samples)."""
    n_groups = len(table.groups)
    labeled = np.asarray(labeled, dtype=np.int64)
    groups_of_matches = (matches[:, 0] if isinstance(matches, np.ndarray)
                         else np.fromiter((g for g, _, _ in matches), np.int64, len(matches)))
    matched = np.bincount(groups_of_matches, minlength=n_groups)
    c_idx, checkers = pd.factorize(table.groups["checker"].to_numpy(dtype=object)[labeled], sort=True)
    n = len(checkers)
    units = np.bincount(c_idx, minlength=n)
    tp = np.bincount(c_idx, weights=matched[labeled], minlength=n).astype(np.int64)  # exact: integers < 2**53
    n_pred = np.bincount(c_idx, weights=table.groups["n_pred"].to_numpy(dtype=np.int64)[labeled], minlength=n)
    n_gt = np.bincount(c_idx, weights=table.groups["n_gt"].to_numpy(dtype=np.int64)[labeled], minlength=n)
    return {str(c): [int(units[j]), int(tp[j]), int(n_pred[j]), int(n_gt[j])] for j, c in enumerate(checkers)}


def human_figures(sums: Mapping[str, Sequence[int]]) -> dict[str, dict[str, float]]:
    """`human_leaderboard` from `human_sums` (of one table, or added over windows), checkers sorted."""
    out: dict[str, dict[str, float]] = {}
    for checker in sorted(sums):
        units, t, n_pred, n_gt = sums[checker]
        fp, fn = n_pred - t, n_gt - t
        p, r, f = prf(t, fp, fn)
        out[checker] = {"units": units, "tp": t, "fp": fp, "fn": fn,
                        "precision": float(p), "recall": float(r), "f1": float(f)}
    return out


def unit_scores(table: PairTable, config: MatchConfig, matching: str, units: Any = None) -> UnitScores:
    """Per-unit (sample_id, checker, tp, fp, fn, f1) under `config`: the review list's machine F1 column (`units`:
    Counts.units if the caller has them, so the matching is not run again). Columns that read as those rows."""
    uc = unit_counts(table, config, method=matching) if units is None else units
    tp, fp, fn = (uc[c].to_numpy() for c in ("tp", "fp", "fn"))
    _, _, f1 = prf(tp, fp, fn)
    return UnitScores(_as_str(uc["sample_id"]), _as_str(uc["checker"]), tp, fp, fn, f1)


def _as_str(column: pd.Series) -> np.ndarray:
    """The column's values as an object array of str: the table's own str objects when every value is one (no copy
    of 400k ids per config), else `astype(str)` of each."""
    values = column.to_numpy(dtype=object)
    if pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values
    return object_array(column.astype(str).tolist())


def proposed_matches(table: PairTable, config: MatchConfig, matching: str,
                     mask: Any = None) -> dict[tuple[str, str], dict[str, Any]]:
    """The matcher's matches per unit as the human label kind `matches` (every unit, [] when nothing matches;
    `mask`: the match mask if the caller has it), each unit's pairs sorted by (gt, pred). Units with the same matches
    share one value (read-only, as labels are): they are few distinct lists of small indices, and a dict and list
    per unit were 150 MB at 100k samples. Found per number of matches k, as the distinct rows of an (n, k) array."""
    from calibration.schemes.violations.matching import match

    chosen = np.asarray(match(table, config, method=matching) if mask is None else mask, dtype=bool)
    g, gt, pred = (table.pairs[c].to_numpy(dtype=np.int64)[chosen] for c in ("group", "gt", "pred"))
    order = np.lexsort((pred, gt, g))
    g, gt, pred = g[order], gt[order], pred[order]
    n_groups = len(table.groups)
    counts = np.bincount(g, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    width = int(max(gt.max(), pred.max())) + 1 if g.size else 1
    key = gt * width + pred  # a pair as one integer (both indices < width)
    values = np.empty(n_groups, dtype=object)
    for k in np.unique(counts).tolist():
        units = np.flatnonzero(counts == k)
        rows = key[starts[units][:, None] + np.arange(k)]
        inverse, distinct = _distinct_rows(rows, width * width)
        made = object_array([{"matches": [[a // width, a % width] for a in row]} for row in distinct.tolist()])
        values[units] = made[inverse]
    sids, checkers = table.groups["sample_id"].tolist(), table.groups["checker"].tolist()
    if table.codes is None:  # else the builder's ids and names, all str already
        sids, checkers = map(str, sids), map(str, checkers)
    return dict(zip(zip(sids, checkers), values.tolist()))


def _distinct_rows(rows: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """(each row's index among the distinct rows, the distinct rows) of an (n, k) array of integers in [0, base):
    a row read as one k-digit number in that base and hashed (pandas' factorize) when such numbers fit in int64, else
    np.unique's sort of the rows (a sort was half of `proposed_matches` at 100k samples)."""
    k = rows.shape[1]
    if k == 0 or base ** k >= 2**62:
        distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
        return inverse.reshape(-1), distinct
    number = rows[:, 0].copy()
    for j in range(1, k):
        number = number * base + rows[:, j]
    inverse, numbers = pd.factorize(number)
    distinct = np.empty((len(numbers), k), dtype=rows.dtype)
    for j in range(k - 1, -1, -1):  # the digits back, last first
        numbers, distinct[:, j] = np.divmod(numbers, base)
    return inverse, distinct


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def leaderboard_table(configs: Mapping[str, Any], human: Mapping[str, Any]) -> Table:
    names = list(configs)
    first = configs[names[0]]["checkers"] if names else {}
    checkers = sorted(first, key=lambda c: (-(first[c]["f1"] or 0), c))
    columns = ["checker"]
    for n in names:
        columns += [f"{n} F1 [95% CI]", "P", "R"]
    if human:
        columns.append("human F1 (units)")
    rows = []
    for c in checkers:
        row: list[Any] = [c]
        for n in names:
            m = configs[n]["checkers"].get(c, {})
            lo, hi = m.get("f1_ci", [None, None])
            row += [f"{_fmt(m.get('f1'))} [{_fmt(lo)}, {_fmt(hi)}]", _fmt(m.get("precision")), _fmt(m.get("recall"))]
        if human:
            h = human.get(c)
            row.append("–" if h is None else f"{h['f1']:.3f} ({h['units']})")
        rows.append(tuple(row))
    return Table("Checker leaderboard: micro F1 with 95% bootstrap interval, precision, recall", tuple(columns), tuple(rows))


def evaluate_report(records: Sequence[Any] | ViolationColumns | ColumnWindows,
                    labels: Mapping[tuple[str, str], Mapping[str, Any]], options: Mapping[str, Any]) -> Report:
    """Leaderboards under each config (one pair table per similarity backend), the humans' own figures.
    `records`: the scheme's records, the violations as columns, or as windows of samples (what the store reads for
    evaluate: `ColumnWindows`, evaluated WINDOW samples at a time when every config's similarity is computed per
    pair of texts alone (Jaccard); embeddings are encoded in one batch, so those evaluate one window of everything).

    `data`: {"checkers": the first config's per-checker figures, "configs": {name: evaluate(...)}, "human": ...}.
    """
    from calibration.schemes.violations.tally import Tally
    from calibration.similarity.pairwise import JaccardSimilarity, as_similarity

    if isinstance(records, ColumnWindows):
        windows = records
    else:
        samples = records if isinstance(records, ViolationColumns) else [getattr(r, "sample", r) for r in records]
        windows = ColumnWindows.of(samples if isinstance(samples, ViolationColumns) else ViolationColumns.from_samples(samples))
    configs = configs_from(options)
    n_boot, seed = int(options.get("n_boot", 1000)), int(options.get("seed", 0))
    save = options.get("save_scores")
    methods = [options.get("matching") or c.matching for c in configs]
    sims = {c.embedding: as_similarity(c.embedding, options.get("cache")) for c in configs}
    size = WINDOW if all(isinstance(s, JaccardSimilarity) for s in sims.values()) else None
    tally = Tally(len(configs), keep_units=save is not None)
    human_labels = LabelMatches.of(labels)
    human: dict[str, list[int]] = {}
    for cols in windows.windows(size):
        for checker, sums in _window(cols, configs, methods, sims, tally, human_labels, options).items():
            human[checker] = [a + b for a, b in zip(human.get(checker, (0, 0, 0, 0)), sums)]
        del cols  # a window's columns (and tables: _window returned) let go before the next is read
    results: dict[str, Any] = {}
    for i, (config, method, figures) in enumerate(zip(configs, methods, tally.figures(n_boot, seed))):
        if save is not None:
            save(config.ref, tally.unit_scores(i))
        results[config.name] = {
            "config": config.to_dict() | {"matching": method},
            "similarity": sims[config.embedding].cache_key,
            "bootstrap": {"replicates": n_boot, "seed": seed, "ci": 0.95, "unit": "sample"},
            "checkers": figures,
        }
    human_board = human_figures(human)
    first_result = next(iter(results.values()))
    notes = ("human F1: F1 from the humans' own matches on the units they labeled.",) if human_board else ()
    return Report("violations", (leaderboard_table(results, human_board),),
                  {"checkers": first_result["checkers"], "configs": results, "human": human_board}, notes)


def _window(cols: ViolationColumns, configs: Sequence[MatchConfig], methods: Sequence[str],
            sims: Mapping[str, TextSimilarity], tally: Any, human_labels: "LabelMatches",
            options: Mapping[str, Any]) -> dict[str, list[int]]:
    """One window of `evaluate_report`: its pair tables, each config's matching counted into `tally`, the first
    config's decisions handed over (`machine_decisions`); returns the humans' sums on it (`human_sums`)."""
    from calibration.schemes.violations.matching import match
    from calibration.schemes.violations.metrics import count, table_codes

    tables = {e: pair_table(cols, sim, options) for e, sim in sims.items()}
    codes = {e: table_codes(t) for e, t in tables.items()}
    counted = []
    decide = options.get("machine_decisions")
    for i, (config, method) in enumerate(zip(configs, methods)):
        table = tables[config.embedding]
        mask = match(table, config, method=method)
        counted.append(count(table, mask, codes[config.embedding]))
        if decide is not None and i == 0:
            decide(config.ref, proposed_matches(table, config, method, mask=mask))
    tally.add(counted)
    first = tables[configs[0].embedding]
    return human_sums(first, *human_labels.windowed(cols.sample_ids).group_arrays(first))


WINDOW = 10_000  # samples per window of `evaluate_report`: a window's columns, pair tables and counts, ~40 MB
