"""Which samples a curated split contains: each scheme's part offers the units a human decided on, one draw picks
the samples, each part writes their records (app/io/export_parts.py has the hooks; app/schemes/<name>/io.py
`EXPORT` a scheme's own curated export, app/io/export_generic.py the registry's).

A unit is selected when its status is one of the requested statuses (None: any unit with a human decision), its
unit name (checker, trait, judge, ...) passes the filter, and a human decision exists for it (what counts as one
is the part's rule). A sample is in the split when at least one of its units is; --sample N draws N of those
samples of every part, proportionally within strata (--stratify category|split|unit: each part says what a sample's
stratum is; `unit` groups samples decided on the same units), reproducibly with --seed; --scheme keeps only the
named schemes' parts.

Each part whose export documents parameters (export_parts.SchemeExport.params_name) gets a ref chosen through the
registry: `config_ref` (`--config`, the app's config box) for app.services.configs.config_scheme(), every other
scheme its default (app.services.configs.default_params_ref); its adapter checks it (`Filters.params`).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from app.errors import UsageError
from app.io.export_parts import NO_SPLIT, Part, SchemeExport
from app.progress import Progress, check
from app.store import STATUSES, Project

STRATIFY_KEYS = ("category", "split", "unit")
__all__ = ["NO_SPLIT", "STRATIFY_KEYS", "Filters", "Selection", "allocate", "choose_params", "export_adapters",
           "normalize_filters", "resolve_prefix", "select", "stratified_sample", "unit_wanted"]


@dataclass(frozen=True)
class Filters:
    """What the user asked for; recorded in the manifest so a split says how it was made."""

    statuses: tuple[str, ...] | None = ("accepted", "corrected")
    checkers: tuple[str, ...] | None = None  # checkers and/or traits; None = all
    stratify: str | None = None
    sample: int | None = None
    seed: int = 0
    config_ref: str | None = None  # parameters of config_scheme() (--config); None: its default
    schemes: tuple[str, ...] | None = None  # only these schemes' parts; None = every scheme
    # scheme -> the exact ref of the parameters its part is documented with (set by normalize_filters); each
    # adapter records its own in the manifest (manifest_params), so the filters do not repeat them
    params: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("statuses", "checkers", "schemes"):
            d[k] = None if d[k] is None else list(d[k])
        if d["schemes"] is None:  # recorded only when given, so a split made before --scheme existed is unchanged
            del d["schemes"]
        del d["params"]
        return d

    def params_ref(self, scheme: str) -> str | None:
        """The ref of `scheme`'s parameters the split is documented with (None: its export names none)."""
        return dict(self.params).get(scheme)


@dataclass
class Selection:
    """The split's content: each scheme's part, the datasets ready to serialise, what the manifest needs."""

    parts: list[Part]
    datasets: dict[str, list[dict[str, Any]]]
    skipped: dict[str, int]
    strata: dict[str, dict[str, int]]  # stratum -> {"available", "selected"}
    sample_ids: set[str] = field(default_factory=set)
    columns: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dataset -> fixed tabular columns

    @property
    def empty(self) -> bool:
        return not any(p.records for p in self.parts)


def resolve_prefix(value: str, known: set[str]) -> str:
    """`value` itself if known, else the one known name starting with it (checker ids are long:
    `prompt-baseline` stands for `prompt-baseline@1.1.0|gpt-3.5-turbo-0613`). An ambiguous prefix is a UsageError
    listing the candidates; an unknown one is returned as is for the caller to report."""
    if value in known:
        return value
    hits = sorted(k for k in known if k.startswith(value))
    if len(hits) > 1:
        raise UsageError(f"--checker: {value!r} is ambiguous; it starts {len(hits)} names: {', '.join(hits)}")
    return hits[0] if hits else value


def normalize_filters(project: Project, f: Filters) -> Filters:
    """Check every filter against the project; a bad value is a UsageError naming the option."""
    statuses = f.statuses
    if statuses is not None:
        statuses = tuple(dict.fromkeys(s.strip() for s in statuses if s.strip()))
        bad = [s for s in statuses if s not in STATUSES]
        if bad or not statuses:
            raise UsageError(f"--status: unknown status {', '.join(bad) or '(empty)'}; choose from {', '.join(STATUSES)}")
    checkers = f.checkers
    if checkers is not None:
        known = {unit for _, unit in project.units.unit_names() if unit}
        checkers = tuple(dict.fromkeys(resolve_prefix(c.strip(), known) for c in checkers if c.strip()))
        bad = [c for c in checkers if c not in known]
        if bad or not checkers:
            raise UsageError(
                f"--checker: no checker or trait named {', '.join(map(repr, bad)) or '(empty)'} in this project; "
                f"known: {', '.join(sorted(known)) or 'none'}"
            )
    if f.stratify is not None and f.stratify not in STRATIFY_KEYS:
        raise UsageError(f"--stratify: must be one of {', '.join(STRATIFY_KEYS)}, got {f.stratify!r}")
    if f.sample is not None and (isinstance(f.sample, bool) or not isinstance(f.sample, int) or f.sample < 1):
        raise UsageError(f"--sample: must be a positive number of samples, got {f.sample!r}")
    if isinstance(f.seed, bool) or not isinstance(f.seed, int) or f.seed < 0:
        raise UsageError(f"--seed: must be a non-negative integer, got {f.seed!r}")
    schemes = f.schemes
    if schemes is not None:
        from calibration.schemes.base import registry

        schemes = tuple(dict.fromkeys(s.strip() for s in schemes if s.strip()))
        bad = [s for s in schemes if s not in registry()]
        if bad or not schemes:
            raise UsageError(f"--scheme: unknown scheme {', '.join(map(repr, bad)) or '(empty)'}; "
                             f"known: {', '.join(registry().names())}")
    config_ref, params = choose_params(project, f.config_ref, schemes)
    return Filters(statuses, checkers, f.stratify, f.sample, f.seed, config_ref, schemes, params)


def choose_params(project: Project, config_ref: str | None, schemes: tuple[str, ...] | None
                  ) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """(`config_ref` made exact, (scheme, ref) for each exported scheme whose export documents parameters).

    `config_ref` names the parameters of app.services.configs.config_scheme(); that scheme's adapter checks it
    (None: its default) even when `schemes` leaves the scheme out, so the filters record the same ref either way
    and a bad --config is always an error. Every other exported scheme gets its default (newest applied, else first
    preset) through the registry. An unknown ref is a UsageError."""
    from app.services.configs import config_scheme, default_params_ref
    from calibration.schemes.base import get

    try:
        named: str | None = config_scheme().name
    except LookupError:  # no registered scheme has presets: --config names nothing
        named = None
    refs: dict[str, str] = {}
    for a in export_adapters(project):
        if a.params_name is None or (a.scheme != named and schemes is not None and a.scheme not in schemes):
            continue
        given = config_ref if a.scheme == named else None
        ref = given if given is not None else default_params_ref(project, get(a.scheme))
        if ref is not None:
            refs[a.scheme] = a.params_ref(project, ref)
    if named is not None and named in refs:
        config_ref = refs[named]
    params = tuple((k, v) for k, v in refs.items() if schemes is None or k in schemes)
    return config_ref, params


def unit_wanted(status: Any, unit: str, f: Filters) -> bool:
    """The unit passes --checker and --status (statuses None: any status)."""
    if f.checkers is not None and unit not in f.checkers:
        return False
    if f.statuses is None:
        return True
    return status in f.statuses


def allocate(sizes: Mapping[str, int], n: int) -> dict[str, int]:
    """Proportional allocation of n over strata by largest remainder (ties: larger stratum, then name)."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    quotas = {k: sizes[k] * n / total for k in sizes}
    alloc = {k: int(np.floor(q)) for k, q in quotas.items()}
    left = n - sum(alloc.values())
    order = sorted(sizes, key=lambda k: (-(quotas[k] - alloc[k]), -sizes[k], k))
    for k in order[:left]:
        alloc[k] += 1
    return alloc


def stratified_sample(strata: Mapping[str, Sequence[str]], n: int | None, seed: int) -> dict[str, list[str]]:
    """Deterministic: strata in name order, ids sorted, one numpy Generator(seed) drawing without replacement."""
    ordered = {k: sorted(strata[k]) for k in sorted(strata)}
    if n is None:
        return ordered
    alloc = allocate({k: len(v) for k, v in ordered.items()}, n)
    rng = np.random.default_rng(seed)
    out: dict[str, list[str]] = {}
    for k, ids in ordered.items():
        take = alloc[k]
        if take >= len(ids):
            out[k] = ids
        else:
            picked = rng.permutation(len(ids))[:take]
            out[k] = sorted(ids[i] for i in picked)
    return out


def export_adapters(project: Project) -> list[SchemeExport]:
    """Every registered scheme's own export adapter (`EXPORT` of app/schemes/<name>/io.py), in registry order,
    then the registry's generic export for each other scheme with samples in the project, in import order."""
    from app.io.export_generic import GenericExport
    from app.io.records import io_adapter
    from calibration.schemes.base import registry

    own = {s.name: adapter for s in registry() if (adapter := io_adapter(s.name).export) is not None}
    return [*own.values(), *(GenericExport(name) for name in project.counts.sample_counts() if name not in own)]


def _merge(datasets: dict[str, list[dict[str, Any]]], more: Mapping[str, list[dict[str, Any]]]) -> None:
    """Add a part's datasets; a dataset two parts write is merged in sample order (each part sorts its own)."""
    for name, records in more.items():
        if name in datasets:
            datasets[name] = sorted([*datasets[name], *records], key=lambda r: str(r.get("sample", r.get("id"))))
        else:
            datasets[name] = list(records)


def select(project: Project, f: Filters, progress: Progress | None = None) -> Selection:
    """Build the split's records for already-normalised filters (see `normalize_filters`)."""
    skipped: Counter[str] = Counter()
    adapters = [a for a in export_adapters(project) if f.schemes is None or a.scheme in f.schemes]
    parts = [a.candidates(project, f, skipped, progress) for a in adapters]
    check(progress)
    strata: dict[str, list[str]] = {}
    for p in parts:  # one draw over every part's samples (sample ids are unique across schemes)
        for sid, key in p.strata.items():
            strata.setdefault(key, []).append(sid)
    picked = stratified_sample(strata, f.sample, f.seed)
    keep = {sid for ids in picked.values() for sid in ids}
    strata_counts = {k: {"available": len(strata[k]), "selected": len(picked[k])} for k in sorted(strata)}
    datasets: dict[str, list[dict[str, Any]]] = {}
    for p in parts:
        check(progress)
        p.adapter.export_rows(project, p, keep)
        _merge(datasets, p.datasets)
    for p in parts:  # labeled units among those written, by the rule every surface counts with
        if p.unit_keys:
            decided = project.counts.decided_units(p.scheme)
            p.n_labeled = sum(1 for k in p.unit_keys if decided.get(k, (False, False))[1])
    ids = {str(r["id"]) for p in parts for r in p.records}
    columns = {name: cols for p in parts for name, cols in p.adapter.columns.items()}
    return Selection(parts, datasets, dict(sorted(skipped.items())), strata_counts, ids, columns)
