"""Services of the `violations` scheme for its view (app/schemes/violations/views*): the pair table (embeddings cached
in the project), human matches on it, per-unit machine scores for the review list. `concord evaluate` reaches the
scheme through the registry (app/services/evaluation.py); these wrap the same helpers of its evaluation hook
(calibration/schemes/violations/evaluation.py)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import app.llm.openai_embedder  # noqa: F401  registers the "openai" embedding backend
from app.progress import Progress
from app.schemes.violations.store import store_of
from app.store import Project
from calibration.schemes.violations import MatchConfig, PairTable, build_pair_table
from calibration.schemes.violations import evaluation as hook


@dataclass
class HumanLabels:
    """Human match decisions mapped onto a pair table's groups."""

    matches: list[tuple[int, int, int]]  # (group, gt, pred)
    labeled_groups: list[int]


def pair_table(project: Project, embedding: str, progress: Progress | None = None,
               checkers: Sequence[str] | None = None) -> PairTable:
    """The pair table of the project's samples as stored (the file's ground truth), from columns read by SQL."""
    if progress is not None:
        progress.update(0, 2, "loading samples")
    columns = store_of(project).violation_columns(curated=False)
    if progress is not None:
        progress.update(1, 2, f"embedding texts ({embedding})")
    table = build_pair_table(columns, embedding, checkers=checkers, cache=project.caches)
    if progress is not None:
        progress.update(2, 2, "pair table ready")
    return table


def human_labels(project: Project, table: PairTable) -> HumanLabels:
    labels = {key: {"matches": sorted(pairs)} for key, pairs in store_of(project).human_matches().items()}
    return HumanLabels(*hook.human_groups(table, labels))


def human_leaderboard(table: PairTable, labels: HumanLabels) -> dict[str, dict[str, float]]:
    """Per-checker P/R/F1 from the humans' own matches, on the units they labeled."""
    return hook.human_leaderboard(table, labels.matches, labels.labeled_groups)


def store_machine_scores(project: Project, table: PairTable, config: MatchConfig, matching: str) -> None:
    """Per-unit TP/FP/FN/F1 under `config`, shown in the review list's machine F1 column."""
    project.units.set_machine_scores(config.ref, hook.unit_scores(table, config, matching))
