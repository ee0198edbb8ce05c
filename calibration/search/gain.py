"""The held-out gain of a calibrated config over the scheme's default, its paired interval and the verdict.

A calibrated config is promoted only when the data say it beats the default on units the search never saw: the
gain is (held-out score of the calibrated procedure) minus (the default preset's score on the same units), signed
so that a positive gain is an improvement whatever the objective's direction (rmse: lower is better). Its 95%
interval is paired: both scores are computed on the same bootstrap replicates (heldout.replicates), and the
percentile interval is taken over the replicates' differences. "Better than" rests on that interval's lower
bound, never on two overlapping intervals (DESIGN.md, statistics conventions).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from calibration.agreement import percentile_interval

BETTER = "better than the default"
NO_BETTER = "no better than the default on held-out data"


def paired_gain(calibrated: float, default: float, cal_reps: np.ndarray, default_reps: np.ndarray,
                sign: float = 1.0) -> tuple[float, tuple[float, float]]:
    """(gain, 95% percentile interval of the per-replicate gains). Replicates where either score is undefined are
    dropped; no replicate at all (n_boot = 0) gives (NaN, NaN)."""
    estimate = sign * (calibrated - default)
    diffs = sign * (np.asarray(cal_reps, dtype=np.float64) - np.asarray(default_reps, dtype=np.float64))
    return float(estimate), percentile_interval(diffs)


def promoted(ci: tuple[float | None, float | None] | list[float | None]) -> bool:
    """The promotion rule: the interval's lower bound is above 0 (a missing interval promotes nothing)."""
    low = ci[0]
    return low is not None and math.isfinite(low) and low > 0


def verdict(ci: tuple[float | None, float | None] | list[float | None]) -> str:
    return BETTER if promoted(ci) else NO_BETTER


def _fmt(x: Any, signed: bool = False) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x:+.3f}" if signed else f"{x:.3f}"


def sentence(gain: dict[str, Any] | None, objective: str = "") -> str:
    """The verdict in words, for people (the CLI and the app show it first): 'The calibrated config is better than
    the default (std_match) on held-out data: kappa +0.062, 95% CI [0.021, 0.104].' `gain` is the `gain` entry of a
    result (to_dict); None: a run that has no default to compare with."""
    if not gain:
        return "No default config to compare with: the gain is not computed."
    ci = gain.get("ci") or [None, None]
    what = f"{objective} " if objective else ""
    figures = f"gain {what}{_fmt(gain.get('estimate'), True)}"
    if ci[0] is None or ci[1] is None:
        figures += ", no interval (no bootstrap replicates)"
    else:
        figures += f", 95% CI [{_fmt(ci[0])}, {_fmt(ci[1])}]"
    name = gain.get("baseline")
    default = "the default" if name in (None, "default") else f"the default ({name})"  # not "the default (default)"
    if gain.get("verdict") == BETTER:
        return f"The calibrated config is better than {default} on held-out data: {figures}."
    return f"The calibrated config is no better than {default} on held-out data: {figures}."
