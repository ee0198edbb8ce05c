"""What `concord plan` prints (issue #29 item 4): from the labels so far, how many more samples (at the present
annotators per item) bring the agreement interval's half-width to a target, and how many more labeled units would
make each scheme's calibration gain interval exclude 0 if the present gain holds. The arithmetic and the method
(1/sqrt(n) scaling of the bootstrap half-width, checked by subsampling) are calibration/planner.py's.

Annotators per item: the plan keeps the present number; where the data hold items with 3 or more annotators, 2 and 3
per item are compared on the same samples (`by_annotators`). Agreement is the pooled item agreement of `concord agreement` (every scheme and kind, kept apart in the
categories) over the items at least two annotators labeled, with its bootstrap over samples: the sample is the unit
that is resampled, so it is the unit the plan counts. The gain is the stored one of each scheme's newest
calibration run (`concord calibrate`), over the units that run used. No scheme is named here.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from calibration import planner

STATISTICS = ("kappa", "alpha")


def _pairable(rows: Sequence[tuple]) -> list[tuple]:
    """The item rows of items at least two annotators labeled (the only ones agreement is computed on)."""
    raters = Counter((r[0], r[1]) for r in rows)
    return [r for r in rows if raters[(r[0], r[1])] >= 2]


def agreement_plan(project: Any, target: float, *, statistic: str = "kappa", schemes: Sequence[str] | None = None,
                   n_boot: int = 1000, seed: int = 0) -> dict[str, Any] | None:
    """The agreement part of the plan; None when fewer than two annotators labeled a common item."""
    from app.services.agreement import pooled, tables
    from calibration.annotators import item_agreement

    items, _ = tables(project, schemes)
    rows = _pairable(pooled(items) if len(items) > 1 else next(iter(items.values()), []))
    if not rows:
        return None
    samples = sorted({r[0] for r in rows})
    by_sample: dict[Any, list[tuple]] = {}
    for r in rows:
        by_sample.setdefault(r[0], []).append(r)

    def halfwidth(index: np.ndarray) -> float:
        chosen = [r for i in index for r in by_sample[samples[i]]]
        figure = item_agreement(chosen, n_boot=n_boot, seed=seed)["overall"][statistic]
        return (figure["high"] - figure["low"]) / 2

    full = item_agreement(rows, n_boot=n_boot, seed=seed)["overall"][statistic]
    n = len(samples)
    h0 = (full["high"] - full["low"]) / 2
    points = planner.subsample_halfwidths(n, halfwidth, seed=seed) if n_boot else []
    exponent = planner.fit_exponent([p[0] for p in points], [p[1] for p in points])
    needed = planner.units_for_halfwidth(h0, n, target)
    n_items = len({(r[0], r[1]) for r in rows})
    per_item = len(rows) / n_items
    items_per_sample = n_items / n
    more = None if needed is None else needed - n
    note = None
    if math.isfinite(exponent) and exponent < planner.SLOW:
        note = (f"on subsamples the half-width shrank as n^-{exponent:.2f}, slower than the n^-0.5 the plan assumes: "
                "plan for more samples than it says")
    elif math.isfinite(exponent) and exponent > planner.FAST:
        note = (f"on subsamples the half-width shrank as n^-{exponent:.2f}, faster than the n^-0.5 the plan assumes "
                "(usual with few samples, or a figure near its bound): the plan is on the safe side")
    elif not points:
        note = "no subsampling check (too few samples, or no bootstrap)"
    by_k = _by_annotators(by_sample, target, statistic, n_boot, seed) if n_boot else []
    return {"statistic": statistic, "estimate": _num(full["estimate"]), "low": _num(full["low"]),
            "high": _num(full["high"]), "halfwidth": _num(h0), "samples": n, "items": n_items,
            "annotators_per_item": round(per_item, 3), "samples_needed": needed, "more_samples": more,
            "more_labels": None if more is None else math.ceil(more * items_per_sample * per_item),
            "reached": needed is not None and needed <= n,
            "scaling": {"sizes": [p[0] for p in points], "halfwidths": [_num(p[1]) for p in points],
                        "exponent": _num(exponent), "assumed": planner.EXPONENT, "note": note},
            "by_annotators": by_k}


MIN_SAMPLES_BY_K = 20  # samples whose every item has 3 or more annotators, for the comparison of 2 with 3


def _by_annotators(by_sample: dict[Any, list[tuple]], target: float, statistic: str, n_boot: int,
                   seed: int) -> list[dict[str, Any]]:
    """Two or three annotators per item, compared on the same samples: those whose every item has 3 or more
    (at least MIN_SAMPLES_BY_K of them; else nothing to compare). Per k, each item keeps k of its annotators drawn
    at random (two draws, half-widths averaged), and the samples and labels needed at k follow from that
    half-width by the same scaling. Without such samples the effect of another annotator cannot be read from the
    data, and none is assumed."""
    from calibration.annotators import item_agreement

    rich = []
    for sid, rows in by_sample.items():
        raters = Counter((r[0], r[1]) for r in rows)
        if min(raters.values()) >= 3:
            rich.append(sid)
    if len(rich) < MIN_SAMPLES_BY_K:
        return []
    rng = np.random.default_rng(seed)
    n_items = len({(r[0], r[1]) for sid in rich for r in by_sample[sid]})
    out = []
    for k in (2, 3):
        widths = []
        for _ in range(2):
            chosen = []
            for sid in rich:
                per_item: dict[Any, list[tuple]] = {}
                for r in by_sample[sid]:
                    per_item.setdefault(r[1], []).append(r)
                for item_rows in per_item.values():
                    keep = rng.choice(len(item_rows), size=k, replace=False)
                    chosen.extend(item_rows[i] for i in sorted(keep))
            figure = item_agreement(chosen, n_boot=n_boot, seed=seed)["overall"][statistic]
            widths.append((figure["high"] - figure["low"]) / 2)
        h = float(np.mean(widths))
        needed = planner.units_for_halfwidth(h, len(rich), target)
        out.append({"annotators_per_item": k, "samples": len(rich), "halfwidth": _num(h), "samples_needed": needed,
                    "labels_needed": None if needed is None else math.ceil(needed * n_items / len(rich) * k)})
    return out


def gain_plans(project: Any, schemes: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per scheme with a stored calibration run that has a gain: the units at which its interval would exclude 0."""
    from app.services.queue import last_run
    from calibration.schemes.base import registry

    out = []
    for scheme in registry():
        if schemes and scheme.name not in schemes:
            continue
        run = last_run(project, scheme.name)
        result = (run or {}).get("result") or {}
        gain = result.get("gain")
        if not gain or not result.get("n_units"):
            continue
        estimate, (low, high) = gain.get("estimate"), gain.get("ci") or (None, None)
        n = int(result["n_units"])
        finite = all(isinstance(x, (int, float)) and math.isfinite(x) for x in (estimate, low, high))
        needed = planner.units_for_gain(estimate, low, n) if finite else None
        if not finite:
            note = "the stored gain has no interval (no bootstrap replicates)"
        elif needed is None:
            note = "the present gain is not positive: no number of units makes its interval exclude 0 if it holds"
        elif needed == n:
            note = "the interval already excludes 0"
        else:
            note = None
        out.append({"scheme": scheme.name, "objective": result.get("objective"), "estimate": _num(estimate),
                    "low": _num(low), "high": _num(high), "units": n, "units_needed": needed,
                    "more_units": None if needed is None else needed - n, "note": note})
    return out


def plan(project: Any, target: float, *, statistic: str = "kappa", schemes: Sequence[str] | None = None,
         n_boot: int = 1000, seed: int = 0) -> dict[str, Any]:
    """Every figure of `concord plan --json`."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {', '.join(STATISTICS)}, got {statistic!r}")
    return {"target_halfwidth": target, "n_boot": n_boot, "seed": seed,
            "method": "1/sqrt(n) scaling of the bootstrap half-width, checked by subsampling",
            "agreement": agreement_plan(project, target, statistic=statistic, schemes=schemes, n_boot=n_boot,
                                        seed=seed),
            "gain": gain_plans(project, schemes)}


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def describe(out: dict[str, Any]) -> list[str]:
    """The plan in words (the CLI prints them; the app's panel shows them)."""
    target = out["target_halfwidth"]
    head = (f"Plan for a 95% interval half-width of {target:g} (method: {out['method']}; "
            f"{out['n_boot']} bootstrap replicates, seed {out['seed']}).")
    text = [head]
    a = out["agreement"]
    if a is None:
        text.append("Agreement: no item labeled by two or more annotators yet: nothing to extrapolate from.")
    else:
        text.append(f"Agreement ({a['statistic']}): {_f(a['estimate'])} [{_f(a['low'])}, {_f(a['high'])}], "
                    f"half-width {_f(a['halfwidth'])} over {a['samples']} samples ({a['items']} items, "
                    f"{a['annotators_per_item']:g} annotators per item).")
        if a["samples_needed"] is None:
            text.append("  no interval (no bootstrap replicates, or the figure is undefined): no plan.")
        elif a["reached"]:
            text.append("  the target is reached already.")
        else:
            text.append(f"  about {a['more_samples']} more samples ({a['samples_needed']} in all) at "
                        f"{a['annotators_per_item']:g} annotators per item: about {a['more_labels']} more labels.")
        s = a["scaling"]
        if s["sizes"]:
            pts = ", ".join(f"{n}: {_f(h)}" for n, h in zip(s["sizes"], s["halfwidths"]))
            text.append(f"  check by subsampling (samples: half-width): {pts}; fitted exponent "
                        f"{_f(s['exponent'])} (assumed {s['assumed']:g}).")
        if s["note"]:
            text.append(f"  note: {s['note']}.")
        for b in a.get("by_annotators") or []:
            text.append(f"  with {b['annotators_per_item']} annotators per item (compared on the {b['samples']} "
                        f"samples whose every item has 3 or more): half-width {_f(b['halfwidth'])}, about "
                        f"{b['samples_needed']} samples, {b['labels_needed']} labels in all.")
    if not out["gain"]:
        text.append("Calibration gain: no stored calibration run with a gain (run `concord calibrate` first).")
    for g in out["gain"]:
        head = (f"Calibration gain ({g['scheme']}, {g['objective']}): {_f(g['estimate'])} "
                f"[{_f(g['low'])}, {_f(g['high'])}] over {g['units']} units")
        if g["note"]:
            text.append(f"{head}: {g['note']}.")
        else:
            text.append(f"{head}: its interval would exclude 0 at about {g['units_needed']} units "
                        f"({g['more_units']} more) if the gain holds.")
    return text


def _num(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and math.isfinite(x) else None
