"""Evaluate any scheme of a project through the registry (`concord evaluate`): what its store adapter reads for
evaluation, its human labels, its `evaluate` hook under the options of app/services/schemes. Nothing here names a
scheme: a scheme's own services for its view sit in app/schemes/<scheme>/services.py."""
from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from app.errors import UsageError
from app.progress import Progress
from app.services.missing import has_human_labels, units_missing
from app.services.schemes import scheme_options
from app.store import Project
from app.store.samples import store_adapter
from calibration.schemes.base import Report, Scheme, capabilities


@dataclass
class Evaluated:
    scheme: Scheme
    report: Report | None  # None: the scheme has no evaluate hook yet, or its samples have no units (`note` says)
    note: str = ""
    human_labels: bool = True  # False: no human label yet, so every figure against humans is empty


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while a scheme's records are loaded and evaluated: a million small, acyclic objects
    (violations, per-unit score dicts) make every full collection rescan them all, which was a third of
    `concord evaluate` at 100k samples (as in app.io.imports). Restored afterwards; cycles made meanwhile are
    collected then."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def evaluation_records(project: Project, scheme: Scheme) -> Any:
    """What a scheme's evaluate hook reads: its store adapter's `evaluation_records(project)` when it has a lighter
    form than the records (violations: columns straight from SQL, no object per violation), else the records."""
    loader = store_adapter(scheme.name).evaluation_records
    return loader(project) if loader is not None else project.scheme_records(scheme.name)


def evaluate(project: Project, schemes: Sequence[Scheme], options: Mapping[str, Any],
             progress: Progress | None = None) -> list[Evaluated]:
    """Each scheme's report under `options`; a scheme without an `evaluate` hook is skipped with a note."""
    if options.get("presets") and not any(p in s.presets() for s in schemes for p in options["presets"]):
        known = sorted({p for s in schemes for p in s.presets()})
        raise UsageError(f"--preset {', '.join(options['presets'])}: no such preset (known: {', '.join(known) or 'none'})")
    out = []
    for scheme in schemes:
        hook = capabilities(scheme).evaluate
        if hook is None:
            out.append(Evaluated(scheme, None, f"{scheme.name}: this scheme has no evaluation yet; skipped"))
            continue
        missing = units_missing(project, scheme)
        if missing:  # its tables would all be empty: say what is missing instead
            out.append(Evaluated(scheme, None, missing))
            continue
        try:
            opts = scheme_options(project, scheme, options, progress)
        except UsageError as exc:  # --use NAME: parameters of one scheme
            if len(schemes) == 1:
                raise
            out.append(Evaluated(scheme, None, f"{exc}; skipped"))
            continue
        if options.get("presets") and not opts["presets"]:
            out.append(Evaluated(scheme, None, f"{scheme.name}: no preset {', '.join(options['presets'])}; skipped"))
            continue
        with gc_paused():
            records = evaluation_records(project, scheme)
            labels = project.scheme_labels(scheme.name)
            try:
                report = hook(records, labels, opts)
            except (ValueError, OSError) as exc:  # a bad config file, an unknown preset: the scheme says which
                raise UsageError(f"{scheme.name}: {exc}") from None
        out.append(Evaluated(scheme, report, human_labels=has_human_labels(labels)))
    if options.get("use") and out and all(e.report is None for e in out):
        raise UsageError("; ".join(e.note for e in out))
    return out
