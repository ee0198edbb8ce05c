"""Guaranteed agreement through the generic calibration (issue #26 item 4): `concord calibrate --guarantee T` and
the app's guarantee box.

The labeled samples are split once, seeded: a calibration split (`share` of them) that the search never sees, and
the rest, on which the scheme's threshold is calibrated as usual. On the calibration split the band of scores
around the calibrated threshold where the machine must defer is certified by Learn-then-Test
(calibration/guarantee.py): with probability >= 1 - delta over that split, the machine agrees with the humans on
at least `target` of the new units it decides. The split matters: a band certified on the labels that chose the
threshold would be optimistic. The band is stored with the run (result["guarantee"]), where the labeling queue's
"deferred" order reads it. Nothing here names a scheme: a scheme offers the mode when its search problem is a
`ScoredProblem` (calibration/search/problem.py).
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from app.errors import UsageError
from app.progress import Progress
from app.services.schemes import calibrate, check_enough_labels, check_options, check_reference, scheme_options
from app.store import Project
from calibration.schemes.base import Scheme
from calibration.search.problem import ScoredProblem

DEFAULT_SHARE = 0.5


def check_guarantee(target: float, delta: float, share: float) -> None:
    if not 0 < target < 1:
        raise UsageError(f"--guarantee: the agreement target is a share in (0, 1), e.g. 0.9; got {target:g}")
    if not 0 < delta < 1:
        raise UsageError(f"--delta: a probability in (0, 1), e.g. 0.05; got {delta:g}")
    if not 0 < share < 1:
        raise UsageError(f"--guarantee-share: the share of labeled samples kept for the bound, in (0, 1); got {share:g}")


def calibration_split(groups: list[str], share: float, seed: int) -> set[str]:
    """A seeded `share` of the labeled samples (at least one, never all), for the bound alone."""
    names = sorted(set(groups))
    k = min(len(names) - 1, max(1, round(share * len(names))))
    rng = np.random.default_rng(seed)
    return {names[i] for i in rng.permutation(len(names))[:k]}


def _finite(x: Any) -> Any:
    return None if isinstance(x, float) and not math.isfinite(x) else x


def guarantee_dict(band: Any, n_samples: int, share: float, seed: int) -> dict[str, Any]:
    """The band as stored and printed (JSON-safe: an infinite bound or cut-off is null)."""
    d = band.to_dict()
    d["band"] = None if d["band"] is None else [_finite(x) for x in d["band"]]
    d.update(upper=_finite(d["upper"]), calibration_samples=n_samples, share=share, seed=seed)
    return d


def guaranteed(project: Project, scheme: Scheme, options: Mapping[str, Any], *, target: float, delta: float,
               share: float = DEFAULT_SHARE, sides: tuple[str, ...] = ("both",), seed: int = 0,
               progress: Progress | None = None, accept: Callable[[Any], Mapping[str, Any] | None] | None = None,
               **calibrate_kw: Any) -> tuple[Any, int, dict[str, Any]]:
    """Calibrate the scheme on all labeled samples but a calibration split, certify the band on the split; the run
    is stored with `guarantee` in its result. Returns (calibrator, run id, the guarantee's dict)."""
    check_guarantee(target, delta, share)
    check_options(scheme, options)
    reference = check_reference(scheme, options.get("reference"))
    labels = project.scheme_data.scheme_labels(scheme.name)
    if reference is None or not reference.released:
        check_enough_labels(scheme, labels, calibrate_kw.get("folds", 5), calibrate_kw.get("group_by") or "group")
    opts = scheme_options(project, scheme, options, progress)
    records = project.scheme_data.scheme_records(scheme.name)
    try:
        whole = scheme.search_problem(records, labels, opts)
    except ValueError as exc:
        raise UsageError(f"{scheme.name}: {exc}") from None
    if whole is None:
        raise UsageError(f"{scheme.title}: nothing to calibrate: no labeled {scheme.unit_noun} has a machine output")
    if not isinstance(whole, ScoredProblem):
        raise UsageError(f"--guarantee: the {scheme.title} scheme's calibration does not decide each unit by a "
                         "threshold on a score, so there is no band of scores to defer on")
    groups = whole.units["group"].astype(str).tolist()
    if len(set(groups)) < 2:
        raise UsageError(f"--guarantee: {len(set(groups))} labeled sample; the bound needs samples the search never "
                         "sees, so label at least two (many more for a useful band)")
    held = calibration_split(groups, share, seed)
    kept = [r for r in records if scheme.record_id(r) in held]
    out: dict[str, Any] = {}

    def certify(cal: Any) -> dict[str, Any]:
        from calibration.guarantee import problem_band

        problem = scheme.search_problem(kept, labels, opts)
        if problem is None:  # cannot happen: the split holds labeled samples of the same problem
            raise UsageError(f"--guarantee: the calibration split ({len(held)} samples) has no labeled unit")
        band = problem_band(problem, cal.best_config_, target=target, delta=delta, sides=sides)
        out.update(guarantee_dict(band, len(held), share, seed))
        extra = dict((accept(cal) if accept is not None else None) or {})
        return {**extra, "guarantee": out}

    cal, run_id = calibrate(project, scheme, options, seed=seed, progress=progress, accept=certify, hold_out=held,
                            **calibrate_kw)
    return cal, run_id, out


def deferred(problem: Any, guarantee: Mapping[str, Any], config: Mapping[str, Any]) -> np.ndarray:
    """(n_items,) bool: the items of a ScoredProblem (built over unlabeled units too) the stored band defers to a
    human under the run's `config`; items without a score are deferred."""
    from calibration.guarantee import decided, margins

    m = margins(problem, config)
    return ~decided(guarantee.get("lam"), str(guarantee.get("side") or "both"), m.confidence, m.decision)
