"""The violations view's calibration service (app/gui: the calibration panel): MatchCalibrator on the pair table,
the run persisted, the result applied as a match config. The scheme's own adapter, so it may import the scheme's
calibration package; `concord calibrate` reaches any scheme through the registry (app/services/schemes.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from app.errors import UsageError
from app.progress import Progress
from app.schemes.violations.services import human_labels, pair_table
from app.schemes.violations.store import store_of
from app.store import Project
from calibration.schemes.violations import MatchConfig
from calibration.schemes.violations.config import DEFAULT_EMBEDDING
from calibration.schemes.violations import search
from calibration.schemes.violations.calibrator import MatchCalibrator
from calibration.schemes.violations.space import SearchSpace
from calibration.search import SpaceError
from calibration.search.engines import check_engine


def make_space(components: str | Sequence[str] = "ha", step: float = 0.1, matching: str = "greedy",
               thresholds: Mapping[str, Sequence[float]] | None = None,
               fixed_weights: Mapping[str, float] | None = None) -> SearchSpace:
    try:
        return search.make_space(components, step, matching, thresholds, fixed_weights)
    except SpaceError as exc:
        raise UsageError(f"search space: {exc}") from None


def calibrate(project: Project, space: SearchSpace, *, objective: str = "kappa", folds: int = 5,
              group_by: str = "sample", seed: int = 0, embedding: str = DEFAULT_EMBEDDING,
              progress: Progress | None = None, n_boot: int = 1000, engine: str = "local",
              scheduler: str | None = None) -> tuple[MatchCalibrator, int]:
    """Fit on the project's current human match decisions; the run is stored and its id returned.

    Everything that can be refused (parameters, too few labels) is checked before the pair table is built:
    embedding a large project takes seconds to minutes.
    """
    try:
        cal = MatchCalibrator(space=space, objective=objective, folds=folds, group_by=group_by, seed=seed, n_boot=n_boot,
                              engine=engine, scheduler=scheduler)  # engine: calibration.search.engines
        check_engine(engine, scheduler)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    _check_enough_labels(store_of(project).human_matches(), folds, group_by)
    table = pair_table(project, embedding, progress)
    labels = human_labels(project, table)
    if not labels.labeled_groups:
        raise UsageError("no human match decisions yet: label some (sample, checker) pairs in the app, "
                         "or `concord labels import`, then calibrate")
    n_samples = table.groups.iloc[labels.labeled_groups]["sample_id"].nunique()
    if group_by == "sample" and n_samples < folds:
        raise UsageError(f"--folds {folds}: only {n_samples} labeled samples; use fewer folds or label more")
    cal.fit(table, labels.matches, labels.labeled_groups, progress=progress)
    result = cal.to_dict() | {"embedding": embedding}
    params = {"scheme": search.ViolationsProblem.scheme, "space": space.to_dict(), "objective": objective, "folds": folds,
              "group_by": group_by, "seed": seed, "embedding": embedding}
    run_id = project.save_calibration_run(objective, params, result, cal.cv_results_)
    return cal, run_id


def _check_enough_labels(matches: Mapping[tuple[str, str], Any], folds: int, group_by: str) -> None:
    """Refuse early, from the labels alone: no decisions, or fewer labeled samples (checkers) than folds."""
    if not matches:
        raise UsageError("no human match decisions yet: label some (sample, checker) pairs in the app, "
                         "or `concord labels import`, then calibrate")
    if group_by == "sample":
        n = len({sid for sid, _ in matches})
        if n < folds:
            raise UsageError(f"--folds {folds}: only {n} labeled sample{'s' if n != 1 else ''}; "
                             "use fewer folds or label more")
    else:
        n = len({checker for _, checker in matches})
        if n < 2:
            raise UsageError(f"--group-by checker: only {n} labeled checker; leave-one-checker-out needs 2 or more")


def next_version(project: Project, name: str) -> str:
    versions = [r.split("@", 1)[1] for r in store_of(project).match_config_refs() if r.split("@", 1)[0] == name]
    if not versions:
        return "1.0.0"
    major, minor, _ = max(tuple(int(x) for x in v.split(".")) for v in versions)
    return f"{major}.{minor + 1}.0"


def apply_config(project: Project, name: str, params: Mapping[str, Any], matching: str, embedding: str,
                 origin: str = "calibration") -> MatchConfig:
    """Save calibrated weights/thresholds as a new version of `name`, usable by `evaluate --use` and the app.
    `origin` "calibration (forced)": applied although no better than the default."""
    if not name or "@" in name or "|" in name:
        raise UsageError(f"--apply {name!r}: a config name without '@' or '|'")
    config = MatchConfig.from_dict(
        {"name": name, "version": next_version(project, name), "matching": matching, "embedding": embedding,
         "weights": params["weights"], "thresholds": params["thresholds"]}
    )
    store_of(project).save_match_config(config, origin=origin)
    return config
