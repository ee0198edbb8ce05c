"""What a scheme hands the calibration engine: a `SearchProblem`.

Two levels of data, because humans review units but metrics decide items:
- `units`: one row per labeled unit (what a human reviewed, e.g. a (sample, checker) pair). Column `group` is the
  cross-validation group (the sample: all units of a sample fall in one fold); optional `stratum` names the
  thing a leave-one-out or rank objective is about (the checker); optional `rank_weight` scales a stratum's
  positives for the rank objectives (violations: n_gt + n_pred, so the rate ranks checkers as F1 does).
- items: the decisions inside the units (candidate pairs, excerpts, answers): `item_unit` (row of `units`) and
  `human` (class ints 0..n_classes-1 for binary/ordinal labels, floats when `n_classes == 0`).

A config is a row of `space` (`dict[name, value]`); configs travel as column arrays. The engine calls
`decide(configs) -> (n_configs, n_items)` machine decisions comparable item by item to `human`. A problem may
also provide `stats(configs, cell_of_item, n_cells, tick) -> (n_configs, n_cells, k, k)` confusion counts summed
over cells (rows = human class, columns = machine class): a fast path that never builds per-item arrays (the
violations greedy pass). Without it the engine counts `decide`'s output itself. The optional members (`stats`,
`threaded`, `scheme`, `objective`, `group_noun`, `stratum_noun`) are declared with their defaults in
`ProblemOptions` and read through `options(problem)`.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from calibration.search.space import Columns, Space

# `tick(share)`: the share (0..1) of the current chunk done; reports progress and raises Cancelled when asked to.
Tick = Callable[[float], None]


@runtime_checkable
class SearchProblem(Protocol):
    space: Space
    units: pd.DataFrame
    item_unit: np.ndarray
    human: np.ndarray
    n_classes: int  # 2 = binary, k > 2 = ordinal classes 0..k-1, 0 = continuous decisions

    def decide(self, configs: Columns) -> np.ndarray:
        """(n_configs, n_items) machine decisions under each config (classes as ints, or floats)."""

    def baselines(self) -> dict[str, dict[str, Any]]:
        """Named configs (presets such as std_match) scored beside the best one; the first anchors the tie-break."""

    def to_params(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The scheme's own parameter dict for one config (what `--apply` saves, JSON-able)."""


DEFAULT_OBJECTIVE = "kappa"


@dataclass(frozen=True)
class ProblemOptions:
    """What a problem may offer beyond the SearchProblem members, declared here with their defaults (as
    calibration.schemes.base.Capabilities does for schemes): the engine reads `options(problem)`, never probes a
    problem with getattr. A problem declares one by defining the attribute of that name."""

    objective: str | None = None  # the objective it suggests (ADDM: "weighted_kappa"); None: DEFAULT_OBJECTIVE
    group_noun: str = "group"  # what a `units.group` is, for messages ("sample", "business")
    stratum_noun: str = "stratum"  # what a `units.stratum` is ("checker", "judge", "model")
    # stats(configs, cell_of_item, n_cells, tick) -> (n_configs, n_cells, k, k) confusion counts: the fast path
    stats: Callable[[Columns, np.ndarray, int, Tick | None], np.ndarray] | None = None
    threaded: bool = False  # its `stats` already spreads one chunk over the cores: run one chunk at a time
    scheme: str | None = None  # the scheme whose parameters these are (stored with a run, for --apply)


OPTIONAL_MEMBERS: tuple[str, ...] = tuple(f.name for f in fields(ProblemOptions))


def options(problem: Any) -> ProblemOptions:
    """The problem's optional members (ProblemOptions): the one place they are read, with their declared defaults.
    A ValueError names one of the wrong type."""
    found = {m: getattr(problem, m) for m in OPTIONAL_MEMBERS if hasattr(problem, m)}
    for m, value in found.items():
        if m == "stats":
            if value is not None and not callable(value):
                raise ValueError("problem.stats: must be callable")
        elif m == "threaded":
            if not isinstance(value, bool):
                raise ValueError(f"problem.threaded: must be True or False, got {value!r}")
        elif value is not None and not isinstance(value, str):
            raise ValueError(f"problem.{m}: must be a string, got {type(value).__name__}")
    return ProblemOptions(**found)


def suggested_objective(problem: Any) -> str:
    """The objective a problem suggests (its optional `objective`, e.g. ADDM's "weighted_kappa"), else kappa: what
    calibrate, the learning curve and the app's panel use when the user names none."""
    return options(problem).objective or DEFAULT_OBJECTIVE


@runtime_checkable
class ScoredProblem(Protocol):
    """A problem whose machine decides each item by a threshold on one score per item (a judge's score, a TRACe
    judge's adherence score): the guaranteed-agreement mode (calibration/guarantee.py) defers on the items whose
    score lies near that threshold. `threshold_dim` names the space dimension holding the threshold."""

    threshold_dim: str

    def item_scores(self) -> tuple[np.ndarray, np.ndarray]:
        """(n_items,) each item's score (NaN: the item has none, e.g. a unit decided without a score) and (n_items,)
        bool: True where a high score means the positive class."""


def nouns(problem: Any) -> tuple[str, str]:
    """(group noun, stratum noun) for messages: a problem may set `group_noun` / `stratum_noun`."""
    found = options(problem)
    return found.group_noun, found.stratum_noun


def dim_words(problem: Any) -> tuple[dict[str, str], str]:
    """(titles of the space's dimensions, what a config decides) for the sentence on the chosen weights
    (report.weights_sentence): a problem may set `dim_titles` / `decides`, like its nouns."""
    return dict(getattr(problem, "dim_titles", None) or {}), getattr(problem, "decides", "the decision")


def check_problem(problem: Any) -> None:
    """Raise ValueError naming the broken part when `problem` does not honour the SearchProblem contract."""
    for attr in ("space", "units", "item_unit", "human", "n_classes", "decide", "baselines", "to_params"):
        if not hasattr(problem, attr):
            raise ValueError(f"problem: missing attribute {attr!r} (see calibration.search.problem.SearchProblem)")
    options(problem)  # (its optional members' types)
    if not isinstance(problem.space, Space):
        raise ValueError(f"problem.space: expected a calibration.search.Space, got {type(problem.space).__name__}")
    units = problem.units
    if not isinstance(units, pd.DataFrame) or "group" not in units.columns:
        raise ValueError("problem.units: expected a DataFrame with a 'group' column (one row per labeled unit)")
    if len(units) == 0:
        raise ValueError("problem.units: no labeled unit; label some before calibrating")
    iu, h = np.asarray(problem.item_unit), np.asarray(problem.human)
    if iu.ndim != 1 or h.shape != iu.shape:
        raise ValueError(f"problem.item_unit / human: expected two 1-d arrays of equal length, got {iu.shape} / {h.shape}")
    if iu.size and (iu.min() < 0 or iu.max() >= len(units)):
        raise ValueError(f"problem.item_unit: values must be unit rows 0..{len(units) - 1}")
    k = int(problem.n_classes)
    if k == 1 or k < 0:
        raise ValueError(f"problem.n_classes: expected 0 (continuous) or >= 2, got {k}")
    if k and h.size and (h.min() < 0 or h.max() >= k or not np.all(h == np.round(h))):
        raise ValueError(f"problem.human: class labels must be integers 0..{k - 1}")


def confusion(decisions: np.ndarray, human: np.ndarray, cell: np.ndarray, n_cells: int, k: int) -> np.ndarray:
    """(n_configs, n_cells, k, k) counts of items by (human class, machine class) per cell, from decisions."""
    d = np.asarray(decisions)
    if d.size and (d.min() < 0 or d.max() >= k):
        raise ValueError(f"decide: machine decisions must be classes 0..{k - 1}")
    c, n = d.shape
    key = (cell.astype(np.int64) * (k * k) + np.asarray(human, dtype=np.int64) * k)[None, :] + d.astype(np.int64)
    key = key + (np.arange(c, dtype=np.int64) * (n_cells * k * k))[:, None]
    return np.bincount(key.ravel(), minlength=c * n_cells * k * k).reshape(c, n_cells, k, k)
