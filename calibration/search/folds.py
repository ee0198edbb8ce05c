"""Grouped, shuffled k-fold assignment: scikit-learn's `GroupKFold(shuffle=True)`, without importing sklearn.

Why hand-written: `sklearn.model_selection` costs 1.2-1.7 s to import (sklearn.utils pulls in scipy.stats), a third
of a first `concord calibrate` on a small project, for these few lines. The steps are GroupKFold's (scikit-learn
1.6+ with shuffle=True): the sorted distinct groups are permuted by `RandomState(seed)`, cut into `n_splits`
consecutive parts by `np.array_split`, and part f is fold f's test set. tests/test_search_folds.py checks it against
GroupKFold itself, so a change there shows.
"""
from __future__ import annotations

import numpy as np


def group_folds(groups: np.ndarray, n_splits: int, seed: int) -> np.ndarray:
    """Fold (0..n_splits-1) of every item, items of one group always in the same fold."""
    groups = np.asarray(groups)
    unique = np.unique(groups)
    if n_splits > unique.size:
        raise ValueError(f"Cannot have number of splits n_splits={n_splits} greater than the number of groups: "
                         f"{unique.size}.")
    order = np.random.RandomState(seed).permutation(unique)
    fold_of = np.empty(unique.size, dtype=np.int64)
    for f, part in enumerate(np.array_split(order, n_splits)):
        fold_of[np.searchsorted(unique, part)] = f
    return fold_of[np.searchsorted(unique, groups)]
