"""What a command has nothing to work on, said in a sentence instead of empty tables (evaluate, calibrate, queue).

One rule for every command: a project without samples is refused (exit 2, `no_samples`); a scheme whose samples have
no units yet (RGB queries without model answers) or no human label yet is named with what to do first. Nothing here
names a scheme: the advice for samples without units comes from the scheme's SchemeInfo (`no_units`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.errors import UsageError
from app.store import Project, UnitFilter
from calibration.schemes.base import Scheme, info

NOT_LABELS = ("status", "note")  # kinds that say nothing a metric can be compared with


def no_samples(verb: str, project: str) -> UsageError:
    """The one refusal of a project without samples (`concord evaluate` and `concord calibrate` alike)."""
    return UsageError(f"nothing to {verb}: {project} has no samples yet; add some with `concord import {project} FILE`")


def units_missing(project: Project, scheme: Scheme) -> str | None:
    """'RGB: 12 samples, but none holds a model's answer yet ...' when the scheme has samples and no unit at all and
    declares that it then has nothing to score (SchemeInfo.no_units: its figures would be empty tables); None
    otherwise. A scheme without the declaration may work on its samples alone (ADDM's policy from human verdicts)."""
    advice = info(scheme).no_units
    n = project.counts.sample_counts().get(scheme.name, 0) if advice else 0
    if not n or project.units.count_units(UnitFilter(scheme=scheme.name)) > 0:
        return None
    return f"{scheme.title}: {n} sample{'s' if n != 1 else ''}, but {advice}"


def has_human_labels(labels: Mapping[Any, Mapping[str, Any]]) -> bool:
    """True when some unit carries a human label other than a status or a note."""
    return any(v is not None for kinds in labels.values() for kind, v in kinds.items() if kind not in NOT_LABELS)


def labels_missing(scheme: Scheme, project: str) -> str:
    """What to do when a scheme has no human label: its figures against humans are empty until then."""
    return (f"{scheme.title}: no human labels yet, so no figure here is compared with humans. Label some units first: "
            f"`concord queue {project} --scheme {scheme.name}` lists the ones worth labeling first; label them in "
            f"`concord gui {project}` or record them with `concord labels import {project} FILE`.")
