"""Calibrate any scheme of a project through the registry: records and human labels from the store, the scheme's
`search_problem` hook, the generic Calibrator; the schemes present and the options every hook gets (evaluation:
app/services/evaluation.py). Nothing here names a scheme; a scheme's own services sit beside it
(app/schemes/<scheme>/services.py).

Side effects a scheme may need come in `options` (see base.Scheme.evaluate): `cache` (the project's embedding
cache, `project.caches`), `machine_labels_of(scheme, source_prefix)` (the machine labels stored in the project:
`project.samples.machine_labels`), `progress`, and `save_scores(config_ref, rows)` (per-unit figures for the review
list).
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from app.errors import UsageError
from app.progress import Progress
from app.store import Project
from calibration.schemes.base import Reference, Scheme, SchemeError, capabilities, info, registry

NOT_LABELS = ("status", "note")  # kinds that say nothing a metric can be calibrated on


def present(project: Project, wanted: Sequence[str] | None = None) -> list[Scheme]:
    """The registered schemes with samples in the project, in registry order; `wanted` names some (each must be
    registered; one without samples is refused, so a typo is never a silent no-op)."""
    counts = project.counts.sample_counts()
    reg = registry()
    if wanted:
        out = []
        for name in dict.fromkeys(wanted):
            try:
                scheme = reg.get(name)
            except SchemeError as exc:
                raise UsageError(f"--scheme: {exc}") from None
            if not counts.get(name):
                raise UsageError(f"--scheme {name}: the project has no {name} samples "
                                 f"(it has: {', '.join(counts) or 'none'})")
            out.append(scheme)
        return out
    unknown = [n for n in counts if n not in reg]
    if unknown:
        raise UsageError(f"the project holds samples of schemes that are not registered: {', '.join(unknown)}")
    return [s for s in reg if counts.get(s.name)]


def _save_scores(project: Project) -> Any:
    def save(config_ref: str, rows: Sequence[tuple[Any, ...]]) -> None:
        project.units.set_machine_scores(config_ref, rows)

    return save


def scheme_options(project: Project, scheme: Scheme, options: Mapping[str, Any],
                   progress: Progress | None = None) -> dict[str, Any]:
    """The options a hook gets: the caller's, with `params` for `use` refs resolved from the project and the
    side-effect services. Presets the scheme does not have are dropped (a preset names one scheme's parameters)."""
    import app.llm.openai_embedder  # noqa: F401  registers the "openai" embedding backend a scheme may use

    out = {k: v for k, v in options.items() if v is not None}
    if "presets" in out:
        out["presets"] = [p for p in out["presets"] if p in scheme.presets()]
    if out.get("use"):
        try:
            out["params"] = [project.scheme_data.load_params(scheme.name, ref) for ref in out.pop("use")]
        except (KeyError, UsageError) as exc:
            raise UsageError(f"--use: {scheme.name}: no stored parameters {exc}") from None
    out.update(cache=project.caches, machine_labels_of=project.samples.machine_labels, progress=progress,
               save_scores=_save_scores(project))
    if "annotator_labels" in _inputs(scheme.name) and "annotator_labels" not in out:
        out["annotator_labels"] = annotator_labels(project, scheme.name)
    return out


def _inputs(name: str) -> frozenset[str]:
    """What the scheme's manifest declares it reads from the project (app/schemes/manifest.py `inputs`)."""
    from app.schemes import loader

    m = loader.manifest(name)
    return m.inputs if m is not None else frozenset()


def annotator_labels(project: Project, scheme_name: str) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """Annotator -> their own labels of the scheme ((sample, unit) -> kind -> value), for every annotator with any."""
    by = project.scheme_data.labels_by_annotator(scheme_name)  # one read of the labels, not one per annotator
    return {a: by[a] for a in project.decisions.annotators() if by.get(a)}


# -- calibration ------------------------------------------------------------------------------------------------
def check_options(scheme: Scheme, options: Mapping[str, Any]) -> None:
    """The scheme's optional `check_options(options)` hook (its search space from the caller's words), before any
    label is read: a bad option is reported as itself, not as a shortage of labels it never got to."""
    hook = capabilities(scheme).check_options
    if hook is None:
        return
    try:
        hook(options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def check_reference(scheme: Scheme, name: str | None) -> Reference | None:
    """The reference `--reference NAME` names among those the scheme declares (SchemeInfo.references); None when
    none is asked for. A scheme that declares none, or a name it does not offer, is refused (exit 2)."""
    if not name:
        return None
    offered = info(scheme).references
    if not offered:
        raise UsageError(f"--reference {name}: the {scheme.title} scheme offers no choice of reference (it is "
                         "measured against the resolved human labels); leave --reference out")
    for ref in offered:
        if ref.name == name:
            return ref
    raise UsageError(f"--reference {name}: the {scheme.title} scheme offers "
                     + ", ".join(f"{r.name} ({r.description})" for r in offered))


def labeled_units(project: Project, scheme: Scheme) -> int:
    """The scheme's labeled review units, as `concord status` counts them (a search problem's own units, its
    `n_units`, may be finer: a sample's sentences, a unit's metrics)."""
    return int(project.counts.unit_counts()["schemes"].get(scheme.name, {}).get("labeled", 0))


def check_enough_labels(scheme: Scheme, labels: Mapping[tuple[str, str], Mapping[str, Any]], folds: int,
                        group_by: str) -> None:
    """Refuse early, from the labels alone (before a scheme embeds anything): no decisions, or fewer labeled
    samples than folds (or fewer than two labeled units names for leave-one-out)."""
    labeled = [k for k, kinds in labels.items() if any(v is not None for kind, v in kinds.items() if kind not in NOT_LABELS)]
    if not labeled:
        raise UsageError(f"no human decisions yet for the {scheme.name} scheme: label some units in the app, "
                         "or `concord labels import`, then calibrate")
    if group_by in ("stratum", scheme.unit_noun):
        n = len({unit for _, unit in labeled if unit})
        if n < 2:
            raise UsageError(f"--group-by {group_by}: only {n} labeled {scheme.unit_noun}; "
                             f"leave-one-{scheme.unit_noun}-out needs 2 or more")
    else:
        n = len({sid for sid, _ in labeled})
        if n < folds:
            raise UsageError(f"--folds {folds}: only {n} labeled sample{'s' if n != 1 else ''}; "
                             "use fewer folds or label more")


def calibrate(project: Project, scheme: Scheme, options: Mapping[str, Any], *, objective: str | None = None,
              folds: int = 5, group_by: str | None = None, seed: int = 0, n_boot: int = 1000,
              progress: Progress | None = None, engine: str = "local", scheduler: str | None = None,
              accept: Callable[[Any], Mapping[str, Any] | None] | None = None,
              hold_out: Collection[str] = ()) -> tuple[Any, int]:
    """Fit the generic Calibrator on the scheme's search problem; the run is stored (with the scheme's name) and
    its id returned. `objective` None: the problem's suggested `objective`, else kappa. `engine` / `scheduler`:
    where the grid's chunks run (calibration.search.engines; identical results on every engine). `accept(cal)`
    runs after the search and before anything is stored: it may refuse (raise UsageError: the project is
    unchanged) or return entries stored with the run (e.g. that an apply was forced). `options["reference"]`: one
    of the scheme's declared references (check_reference); a released one needs no human label. `hold_out`: sample
    ids the search never sees (the guaranteed mode's calibration split, app/services/guarantee.py)."""
    from calibration.search.engine import Calibrator
    from calibration.search.engines import check_engine

    from calibration.search.objectives import get as objective_named
    from calibration.search.problem import suggested_objective

    if objective is not None:
        try:
            objective_named(objective)  # refused before any work
        except (KeyError, ValueError) as exc:
            raise UsageError(f"--objective: {exc}") from None
    try:
        check_engine(engine, scheduler)  # refused before any work (Dask missing: says how to install it)
    except ValueError as exc:
        raise UsageError(f"--engine: {exc}") from None
    group_by = group_by or "group"
    check_options(scheme, options)
    reference = check_reference(scheme, options.get("reference"))
    labels = project.scheme_data.scheme_labels(scheme.name)
    if hold_out:
        labels = {k: v for k, v in labels.items() if k[0] not in hold_out}
    if reference is None or not reference.released:  # a released reference is in the records, not the labels
        check_enough_labels(scheme, labels, folds, group_by)
    opts = scheme_options(project, scheme, options, progress)
    records = project.scheme_data.scheme_records(scheme.name)
    if hold_out:
        records = [r for r in records if scheme.record_id(r) not in hold_out]
    try:
        problem = scheme.search_problem(records, labels, opts)
    except ValueError as exc:
        raise UsageError(f"{scheme.name}: {exc}") from None
    if problem is None and reference is not None and reference.released:
        raise UsageError(f"{scheme.title}: nothing to calibrate against --reference {reference.name}: no record "
                         f"carries it next to a machine output ({reference.description})")
    if problem is None:
        n = labeled_units(project, scheme)
        raise UsageError(f"{scheme.title}: nothing to calibrate (either its metric has no parameters to fit, or none "
                         f"of the {n} labeled {scheme.unit_noun}s has a machine output the metric scores)")
    objective = objective or suggested_objective(problem)
    try:
        cal = Calibrator(objective=objective, folds=folds, group_by=group_by, seed=seed, n_boot=n_boot,
                         engine=engine, scheduler=scheduler)
        cal.fit(problem, progress=progress)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    result = cal.to_dict() | {"grouping": cal.grouping_, "weights_meaning": cal.weights_meaning_} | dict((accept(cal) if accept is not None else None) or {})
    params = {"scheme": scheme.name, "objective": objective, "folds": folds, "group_by": group_by, "seed": seed,
              "options": {k: v for k, v in options.items() if isinstance(v, (str, int, float, bool, list, dict))}}
    run_id = project.artifacts.save_calibration_run(objective, params, result, cal.cv_results_)
    return cal, run_id


def apply_params(project: Project, scheme: Scheme, name: str, params: Mapping[str, Any],
                 origin: str = "calibration") -> str:
    """Save the best parameters as the next version of `name` for the scheme; returns `name@version`. `origin`
    says where they came from ("calibration (forced)": applied although no better than the default)."""
    try:
        return project.scheme_data.save_params(scheme.name, name, dict(params), origin=origin)
    except ValueError as exc:
        raise UsageError(f"--apply {name!r}: {exc}") from None
