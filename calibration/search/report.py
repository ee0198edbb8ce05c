"""The words for a calibration run's figures, shared by `concord calibrate` and the app's calibration panel, so
both say the same thing the same way (issue #27 item 4).

A run has three scores for the chosen config, and a reader must know which is which:
- held-out: each fold's config chosen on the other folds, scored on that fold, pooled -- the honest estimate for
  new data, the one to act on (it has a 95% interval);
- all labeled units, in-sample: the chosen config on every labeled unit, the data that chose it -- optimistic;
- cross-validated: the chosen config's score on each fold's test part, averaged (± their standard deviation) -- it
  was chosen with every fold in view, so it is optimistic too.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

HELD_OUT = "held-out"
IN_SAMPLE = "all labeled units, in-sample"
CROSS_VALIDATED = "cross-validated"
HELD_OUT_TIP = ("each fold's config chosen on the other folds and scored on that fold, pooled: the estimate for "
                "new data")
IN_SAMPLE_TIP = "the config on every labeled unit, the data the search chose it on: optimistic; the rows are ranked by it"
CROSS_VALIDATED_TIP = ("the config's mean score over the folds' test parts (± their standard deviation); it was "
                       "chosen with every fold in view, so this is optimistic too")


def fmt(x: Any, digits: int = 3) -> str:
    """A score, or "–" when there is none (undefined objective, no replicate)."""
    if x is None:
        return "–"
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    return "–" if not math.isfinite(f) else f"{f:.{digits}f}"


def fmt_interval(ci: Sequence[Any] | None) -> str:
    lo, hi = (list(ci or []) + [None, None])[:2]
    return "no interval" if lo is None or hi is None else f"[{fmt(lo)}, {fmt(hi)}]"


def grouping_words(folds: int, group_by: str, group_noun: str = "group", stratum_noun: str = "stratum") -> str:
    """'5 folds grouped by sample' or 'leave one checker out (4 folds)', in the problem's own nouns (`group_by`
    "group" / "stratum" are the engine's generic names for them)."""
    if group_by in ("stratum", stratum_noun) and group_by != group_noun:
        return f"leave one {stratum_noun if group_by == 'stratum' else group_by} out ({folds} folds)"
    noun = group_noun if group_by == "group" else group_by
    return f"{folds} folds grouped by {noun}"


def grouping_of(result: Mapping[str, Any]) -> str:
    """The run's fold scheme in words: stored with the run (`grouping`), else from its folds and group_by (runs
    stored before the words were)."""
    if result.get("grouping"):
        return str(result["grouping"])
    by = str(result.get("group_by") or "group")
    return grouping_words(int(result.get("folds") or 0), by, "CV group" if by == "group" else by)


def headline(result: Mapping[str, Any]) -> str:
    """The figure to act on, first: the held-out score with its interval and how it was obtained."""
    h = result.get("heldout") or {}
    return (f"Held-out {result.get('objective') or 'score'} of the calibrated config: {fmt(h.get('score'))}, "
            f"95% CI {fmt_interval(h.get('ci'))}, the estimate for new data ({grouping_of(result)}, each scored "
            "with the config chosen on the others).")


def other_figures(result: Mapping[str, Any], cv_mean: Any = None, cv_sd: Any = None) -> str:
    """The chosen config's other two scores, each named, and why they read higher than the held-out one."""
    best = (result.get("best") or {}).get("score")
    text = f"Optimistic, for comparison (the config was chosen on these units): {IN_SAMPLE} {fmt(best, 4)}"
    if cv_mean is not None:
        text += f" · {CROSS_VALIDATED} {fmt(cv_mean, 4)}" + (f" ± {fmt(cv_sd, 4)}" if cv_sd is not None else "")
    return text


def weight_title(name: str) -> str:
    """A parameter's words ("w_span_overlap" -> "span overlap"); any other name (a judge's, from the data) as it is."""
    return name[2:].replace("_", " ") if name.startswith("w_") else name


def _names(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def weights_sentence(config: Mapping[str, Any], space: Mapping[str, Any] | None,
                     titles: Mapping[str, str] | None = None, decides: str = "the decision") -> str:
    """What the chosen weights mean, in a sentence per weight group of the space (its simplex dimensions):
    'span overlap has weight 0: the match relies on rule similarity alone.' Empty when the space has no weights.
    Weights the space keeps fixed at 0 (not searched) are left out."""
    titles = titles or {}
    out = []
    for dim in (space or {}).get("dims") or []:
        if dim.get("type") != "simplex":
            continue
        fixed = dim.get("fixed") or {}
        names = [n for n in dim.get("names") or [] if n in config and not (n in fixed and not fixed[n])]
        if len(names) < 2:
            continue
        title = {n: titles.get(n) or weight_title(n) for n in names}
        worded = names[0] in titles or names[0].startswith("w_")  # else a name from the data: never recapitalised
        zero = [title[n] for n in names if not float(config[n])]
        used = [n for n in names if float(config[n])]
        shares = _names([f"{title[n]} ({float(config[n]):g})" for n in used]) if used else ""
        if not zero:
            out.append((f"Weights: {shares}; every part counts, in these proportions.", True))
        elif len(used) == 1:
            verb = "has" if len(zero) == 1 else "have"
            out.append((f"{_names(zero)} {verb} weight 0: {decides} relies on {title[used[0]]} alone.", worded))
        else:
            verb = "has" if len(zero) == 1 else "have"
            out.append((f"{_names(zero)} {verb} weight 0 and play{'s' if len(zero) == 1 else ''} no part: "
                        f"{decides} rests on {shares}.", worded))
    return " ".join(s[:1].upper() + s[1:] if cap else s for s, cap in out)


def rank_positions(ranks: Sequence[Any]) -> list[str]:
    """The '#' column of a top-configs table sorted by rank: each row's position (1, 2, 3, ...), marked '=' when it
    ties with the row above (the engine gives tied configs one rank, which read as 1 on every row)."""
    out = []
    for i, r in enumerate(ranks):
        tied = i > 0 and r is not None and r == ranks[i - 1]
        out.append(f"{i + 1}=" if tied else str(i + 1))
    return out
