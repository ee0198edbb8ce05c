"""Views of a calibration result for the GUI panel and the CLI: heatmap surface, threshold curve, disagreements."""
from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from calibration.schemes.violations.config import MatchConfig
from calibration.schemes.violations.matching import weighted_score
from calibration.search.data import PairData, PairTableLike, check_table, human_key_set, labeled_array
from calibration.search.evaluate import matched_pairs
from calibration.search.space import DIMS


def _check_dims(cv_results: pd.DataFrame, *dims: str) -> None:
    for d in dims:
        if d not in DIMS or d not in cv_results.columns:
            raise ValueError(f"dimension {d!r}: expected one of {list(DIMS)}")


def objective_surface(cv_results: pd.DataFrame, dim_x: str, dim_y: str, value: str = "score") -> pd.DataFrame:
    """Heatmap table: rows = values of dim_y, columns = values of dim_x, cell = best `value` over all other dims."""
    _check_dims(cv_results, dim_x, dim_y)
    if dim_x == dim_y:
        raise ValueError(f"objective_surface: dim_x and dim_y must differ, both are {dim_x!r}")
    if value not in cv_results.columns:
        raise ValueError(f"value {value!r}: not a column of cv_results")
    return cv_results.pivot_table(index=dim_y, columns=dim_x, values=value, aggfunc="max").sort_index()


def threshold_curve(cv_results: pd.DataFrame, value: str = "score") -> pd.DataFrame:
    """`value` against t_match with every other dimension held at the best row's values (best = max `value`)."""
    if value not in cv_results.columns:
        raise ValueError(f"value {value!r}: not a column of cv_results")
    best = cv_results.loc[cv_results[value].fillna(-np.inf).idxmax()]
    others = [d for d in DIMS if d != "t_match"]
    same = np.logical_and.reduce([cv_results[d].to_numpy() == best[d] for d in others])
    curve = cv_results.loc[same, ["t_match", value]].sort_values("t_match")
    return curve.reset_index(drop=True)


def disagreements(
    pair_table: PairTableLike, config: MatchConfig, human_matches: Iterable[tuple[int, int, int]],
    labeled_groups: Iterable[int],
) -> pd.DataFrame:
    """Candidate pairs of labeled units where `config` and the humans disagree (one row per pair).

    Columns: group, sample_id, checker, gt, pred, score, machine, human; sorted by group, gt, pred so the GUI
    can jump to the sample.
    """
    check_table(pair_table)
    labeled = labeled_array(pair_table, labeled_groups)
    human = human_key_set(pair_table, human_matches, labeled)
    unit = np.full(len(pair_table.groups), -1, dtype=np.int64)
    unit[labeled] = 0
    data = PairData.build(pair_table, human, unit, 1)
    machine = matched_pairs(data, config)
    diff = np.flatnonzero(machine != data.human)
    g = data.group[diff]
    groups = pair_table.groups
    return pd.DataFrame({
        "group": g,
        "sample_id": groups["sample_id"].to_numpy()[g],
        "checker": groups["checker"].to_numpy()[g],
        "gt": data.gt[diff],
        "pred": data.pred[diff],
        "score": weighted_score(data.comps[diff], config.weight_vector()),
        "machine": machine[diff],
        "human": data.human[diff],
    })
