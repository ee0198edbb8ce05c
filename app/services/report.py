"""What `concord report` shows, gathered once: per scheme the counts `concord status` gives, the evaluation report
with the human ceiling (the same service `concord evaluate` runs), and the newest stored calibration run (its
held-out score, the gain over the default with its interval and verdict). No HTML here (app/io/report_html.py) and
nothing scheme-specific: every part comes from the registry and the store."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from app.progress import Progress
from app.services.ceiling import evaluate_with_ceilings
from app.services.evaluation import Evaluated
from app.services.queue import last_run
from app.services.schemes import present
from app.store import Project


@dataclass
class SchemePart:
    """One scheme's section of the report."""

    name: str
    title: str
    unit_noun: str
    counts: Mapping[str, Any]
    evaluated: Evaluated | None
    ceiling: Mapping[str, Any] | None
    run: Mapping[str, Any] | None  # the newest stored calibration run ({id, created_at, objective, params, result})


@dataclass
class ProjectReport:
    path: str
    project_id: str
    made_at: str
    schemes: list[SchemePart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def build(project: Project, wanted: Sequence[str] | None = None, *, n_boot: int = 1000, seed: int = 0,
          progress: Progress | None = None) -> ProjectReport:
    """Every scheme present (or the `wanted` ones) with its figures; a scheme without a report or a run is listed
    with a note saying what to do, never left out silently."""
    schemes = present(project, wanted)
    counts = project.counts.unit_counts()
    report = ProjectReport(path=str(project.path), project_id=project.project_id,
                           made_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    results, ceilings = evaluate_with_ceilings(project, schemes, {"n_boot": n_boot, "seed": seed}, progress)
    by_name = {r.scheme.name: r for r in results}
    for scheme in schemes:
        evaluated = by_name.get(scheme.name)
        report.schemes.append(SchemePart(
            name=scheme.name, title=scheme.title, unit_noun=scheme.unit_noun,
            counts=(counts.get("schemes") or {}).get(scheme.name, {}), evaluated=evaluated,
            ceiling=ceilings.get(scheme.name), run=last_run(project, scheme.name)))
    return report
