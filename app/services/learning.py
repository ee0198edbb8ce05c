"""Learning curve and stopping rule of a scheme's calibration (issue #16), for `concord calibrate --curve` and the
calibration panel: the same search re-run on the first n labeled units in the order they were labeled (the event
log), for growing n; then calibration.learning.stopping. Nothing here names a scheme."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.errors import UsageError
from app.progress import Progress
from app.services.schemes import scheme_options
from app.store import Project
from calibration import learning
from calibration.schemes.base import Scheme

NOT_LABELS = ("status", "note")


def labeled_in_order(project: Project, scheme: Scheme) -> list[tuple[str, str]]:
    """The scheme's labeled (sample, unit) keys in the order first labeled; keys with labels but no event (should
    not happen: events are the truth) come last in key order."""
    labels = project.scheme_data.scheme_labels(scheme.name)
    have = {k for k, kinds in labels.items() if any(v is not None for kind, v in kinds.items() if kind not in NOT_LABELS)}
    ordered = [k for k in project.units.label_order(scheme.name) if k in have]
    return ordered + sorted(have - set(ordered))


def learning_curve(project: Project, scheme: Scheme, options: Mapping[str, Any], *, objective: str | None = None,
                   folds: int = 5, group_by: str | None = None, seed: int = 0, n_boot: int = 1000, points: int = 8,
                   target: float = learning.TARGET, progress: Progress | None = None) -> dict[str, Any]:
    """{"points": [{n, score, lo, hi, half_width, note}], "stopping": {...}} on growing prefixes of the labeled keys
    (a prefix keeps every label kind of its keys; per-sample kinds at unit '' count as keys of their own)."""
    from calibration.search.engine import Calibrator
    from calibration.search.problem import suggested_objective
    from calibration.search.progress import check

    labels = project.scheme_data.scheme_labels(scheme.name)
    order = labeled_in_order(project, scheme)
    if not order:
        raise UsageError(f"no human decisions yet for the {scheme.name} scheme: nothing to draw a curve from")
    records = project.scheme_data.scheme_records(scheme.name)
    opts = scheme_options(project, scheme, options, progress)

    ns = learning.sizes(len(order), max(folds * 2, len(order) // points), points)

    def fit(n: int) -> tuple[float, float, float]:
        if progress is not None:  # one step per point; the GUI's cancel stops between and inside points
            progress.update(ns.index(n), len(ns), f"learning curve: {n} labeled units")
        check(progress, None)
        keep = set(order[:n])
        sub = {k: v for k, v in labels.items() if k in keep or not any(
            x is not None for kind, x in v.items() if kind not in NOT_LABELS)}
        problem = scheme.search_problem(records, sub, opts)
        if problem is None:
            raise ValueError(f"nothing to calibrate on the first {n} labeled units")
        cal = Calibrator(objective=objective or suggested_objective(problem), folds=folds,
                         group_by=group_by or "group", seed=seed, n_boot=n_boot)
        cal.fit(problem, cancel=progress)
        return cal.heldout_score_, cal.heldout_ci_[0], cal.heldout_ci_[1]

    pts = learning.curve(ns, fit)
    stop = learning.stopping(pts, target)
    return {"points": [{"n": p.n, "score": p.score, "lo": p.lo, "hi": p.hi, "half_width": p.half_width,
                        "note": p.note} for p in pts],
            "stopping": stop.to_dict(), "n_labeled": len(order)}
