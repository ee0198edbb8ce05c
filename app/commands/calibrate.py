"""`concord calibrate PROJECT [--scheme S]`: search a scheme's parameters so its metric agrees with the humans,
scored on held-out folds (grouped by sample) next to the scheme's presets. Default scheme: the first registered
scheme with samples (violations: the match weights and thresholds); any scheme with parameters to calibrate can be
named."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli_options import add_guideline_version, embedding_spec, folds, non_negative_int, positive_int, scheme_name, unit_step
from app.cli_tables import print_table
from app.json_outputs import dumps

EPILOG = """examples:
  concord calibrate demo/demo.concord
  concord calibrate demo/demo.concord --objective f1 --step 0.1 --folds 5 --apply calibrated
  concord calibrate demo/demo.concord --components overlap,rule --match 0.3,0.4,0.5,0.6 --json
  concord calibrate demo/demo.concord --fix overlap=0.3 --group-by checker
  concord calibrate project.concord --scheme trace --objective auroc
  concord calibrate brand.concord --scheme violations --guideline-version 2
  concord calibrate project.concord --scheme trace --reference annotator
  concord calibrate project.concord --scheme judge --judge gpt-4o --guarantee 0.9 --delta 0.05
"""


def _share(text: str) -> float:
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}") from None
    if not 0 < x < 1:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1), got {text!r}")
    return x


def _floats(text: str) -> list[float]:
    try:
        return [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _fixes(text: str) -> dict[str, float]:
    out = {}
    for part in text.split(","):
        k, sep, v = part.partition("=")
        if not sep or not k.strip():
            raise argparse.ArgumentTypeError(f"expected COMPONENT=WEIGHT[,...], got {text!r}")
        try:
            out[k.strip()] = float(v)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{k.strip()}: the weight {v.strip()!r} is not a number") from None
    return out


# the scheme's names for the parts of its search space (SpaceError messages start with them) -> this command's options
SPACE_OPTIONS = {"components": "--components", "step": "--step", "fixed_weights": "--fix", "matching": "--matching",
                 "thresholds.overlap": "--overlap", "thresholds.rule": "--rule", "thresholds.match": "--match"}


def _named_option(message: str) -> str:
    """'fixed_weights.bogus: not an active component' -> '--fix bogus: not an active component'."""
    head, sep, rest = message.partition(":")
    for part, flag in SPACE_OPTIONS.items():
        if head == part or head.startswith(part + "."):
            detail = head[len(part) + 1:]
            return f"{flag} {detail}:{rest}" if detail else f"{flag}:{rest}"
    return message


def _objectives() -> tuple[str, ...]:
    """The objectives' names, from their registry (calibration.search.objectives), for --objective's choices."""
    from calibration.search.objectives import OBJECTIVES

    return OBJECTIVES


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("calibrate", help="fit a scheme's parameters to human decisions (cross-validated)",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--scheme", metavar="NAME", default=None, type=scheme_name,
                   help="the scheme to calibrate (default: the first registered scheme with samples)")
    p.add_argument("--objective", default=None, choices=_objectives(), metavar="NAME",
                   help=f"what to optimise: {', '.join(_objectives())} (default: the scheme's suggestion, else kappa)")
    p.add_argument("--folds", type=folds, default=5, help="cross-validation folds, grouped by sample (default 5)")
    p.add_argument("--group-by", default=None, metavar="NOUN",
                   help="'sample' (grouped k-fold, default) or the scheme's unit noun for leave-one-out, e.g. 'checker'")
    p.add_argument("--seed", type=int, default=0, help="seed of the folds' shuffling and of the bootstrap (default 0)")
    p.add_argument("--bootstrap", type=non_negative_int, default=1000, metavar="N", help="bootstrap replicates for the 95%% interval")
    p.add_argument("--apply", metavar="NAME", default=None,
                   help="save the best parameters as NAME@<next version>; only when they are better than the "
                        "scheme's default on held-out data (the gain's 95%% interval above 0), unless --force")
    p.add_argument("--force", action="store_true",
                   help="with --apply: save the parameters even when they are no better than the default "
                        "(recorded as forced)")
    p.add_argument("--top", type=positive_int, default=10, help="rows of the top-configs table")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--curve", action="store_true",
                   help="also the learning curve (held-out score on the first n labeled units, in labeling order) "
                        "and how many more labels should bring the interval's half-width under --curve-target")
    p.add_argument("--curve-target", type=float, default=0.05, metavar="H",
                   help="half-width of the held-out interval to aim for with --curve (default 0.05)")
    p.add_argument("--engine", choices=["local", "dask"], default="local",
                   help="where the grid runs: local (this machine's cores, default) or dask (a Dask cluster; "
                        "pip install 'concord[dask]'); same results on both")
    p.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="with --engine dask: the scheduler, e.g. tcp://10.0.0.5:8786 (default: a local cluster "
                        "started for the run)")
    p.add_argument("--reference", metavar="NAME", default=None,
                   help="the reference the metric is calibrated against, for schemes that offer a choice (trace: "
                        "human (default) or annotator, the records' released annotator labels, so no human label is "
                        "needed; judge: any (default), majority or adjudicated)")
    g = p.add_argument_group("guaranteed agreement (schemes that decide by a threshold on a score: judge, trace)")
    g.add_argument("--guarantee", type=_share, default=None, metavar="T",
                   help="also find the band of scores where the machine must defer to a human so that it agrees "
                        "with the humans on at least T of the units it decides, with probability >= 1 - delta "
                        "(Learn-then-Test on a calibration split the search never sees)")
    g.add_argument("--delta", type=_share, default=None, help="with --guarantee: the risk of the bound (default 0.05)")
    g.add_argument("--guarantee-share", type=_share, default=None, metavar="S",
                   help="with --guarantee: the share of labeled samples kept for the bound (default 0.5)")
    g.add_argument("--sides", choices=["both", "any"], default=None,
                   help="with --guarantee: both (the machine decides both kinds of call, default) or any (also try "
                        "letting it make only its positive or only its negative calls, each at delta/3)")
    p.add_argument("--target", metavar="NAME", default=None,
                   help="what to calibrate when a scheme offers several (addm: verdict, the policy's points and "
                        "thresholds (default), or process_weights, against per-method quality ratings)")
    v = p.add_argument_group("violations options")
    v.add_argument("--components", default="std", help="weights to search: std (overlap,rule; default), ha (all five) or a list")
    v.add_argument("--step", type=unit_step, default=0.1, help="simplex grid step for the weights (default 0.1)")
    v.add_argument("--fix", type=_fixes, default={}, metavar="C=W", help="fix weights, e.g. overlap=0.3,rule=0.3")
    v.add_argument("--overlap", type=_floats, default=None, metavar="T,..", help="overlap thresholds (strict >)")
    v.add_argument("--rule", type=_floats, default=None, metavar="T,..", help="rule-similarity thresholds")
    v.add_argument("--match", type=_floats, default=None, metavar="T,..", help="match-score thresholds")
    v.add_argument("--matching", choices=["greedy", "optimal"], default="greedy",
                   help="one-to-one matching of predicted and ground-truth violations (default greedy)")
    v.add_argument("--embedding", type=embedding_spec, default=None, metavar="SPEC",
                   help="similarity backend for rule/explanation/correction (default sentence-transformers)")
    j = p.add_argument_group("judge options")
    j.add_argument("--judge", metavar="NAME", default=None,
                   help="calibrate this judge's threshold alone (default: one threshold shared by every judge; "
                        "--target vote: a weighted vote of the judges)")
    add_guideline_version(p)
    p.set_defaults(func=run)


def _fmt(x: Any) -> str:
    return "–" if x is None else f"{x:.3f}"


def run(args: argparse.Namespace) -> int:
    from app.cli_progress import rich_progress
    from app.errors import UsageError
    from app.services.missing import no_samples, units_missing
    from app.services.promotion import apply_gate
    from app.services.schemes import apply_params, calibrate, check_options, labeled_units, present
    from app.store import Project

    thresholds = {k: getattr(args, k) for k in ("overlap", "rule", "match") if getattr(args, k) is not None}
    options = {"components": args.components, "step": args.step, "fix": args.fix, "thresholds": thresholds,
               "matching": args.matching, "embedding": args.embedding, "target": args.target, "judge": args.judge,
               "reference": args.reference}
    if args.force and not args.apply:
        raise UsageError("--force: only with --apply NAME (it applies a config that is no better than the default)")
    given = [f for f, v in (("--delta", args.delta), ("--guarantee-share", args.guarantee_share),
                            ("--sides", args.sides)) if v is not None]
    if args.guarantee is None and given:
        raise UsageError(f"{given[0]}: only with --guarantee T (the agreement target of the band)")
    guarantee = None if args.guarantee is None else {
        "target": args.guarantee, "delta": 0.05 if args.delta is None else args.delta,
        "share": 0.5 if args.guarantee_share is None else args.guarantee_share,
        "sides": ("both", "positive", "negative") if args.sides == "any" else ("both",)}
    from contextlib import ExitStack

    from app.services.guidelines import notes, valid_labels

    with Project.open(args.project) as project, ExitStack() as stack:
        scheme = present(project, [args.scheme] if args.scheme else None)
        if not scheme:
            raise no_samples("calibrate", args.project)
        scheme = scheme[0]
        # the labels valid under the guideline version asked for (default: the current one), issue #29
        guide = stack.enter_context(valid_labels(project, [scheme.name], args.guideline_version))
        try:  # the options, in the order given, before the labels: a bad --fix is named as itself (issue #24)
            check_options(scheme, options)
        except UsageError as exc:
            raise UsageError(_named_option(str(exc))) from None
        missing = units_missing(project, scheme)
        if missing:
            raise UsageError(f"nothing to calibrate: {missing}")
        gate: dict[str, Any] = {}

        def accept(cal: Any) -> dict[str, Any]:  # an unpromoted --apply is refused before the run is stored
            gate.update(apply_gate(cal.gain_dict(), args.apply, args.force, cal.objective) if args.apply else {})
            # the stored run says which guideline version its labels were valid under (issue #29)
            return {**gate, **({"guideline": guide[scheme.name]} if scheme.name in guide else {})}

        kw = dict(objective=args.objective, folds=args.folds, group_by=args.group_by, seed=args.seed,
                  n_boot=args.bootstrap, engine=args.engine, scheduler=args.scheduler, accept=accept)
        with rich_progress(enabled=sys.stderr.isatty()) as bar:
            if guarantee is None:
                cal, run_id = calibrate(project, scheme, options, progress=bar, **kw)
            else:
                from app.services.guarantee import guaranteed

                cal, run_id, band = guaranteed(project, scheme, options, progress=bar, **guarantee, **kw)
        result = cal.to_dict() | {"run_id": run_id}
        if guarantee is not None:
            result["guarantee"] = band
        if args.reference:
            result["reference"] = args.reference
        # the review units humans labeled, counted as `concord status` counts them (n_units: the search's own units)
        result["labeled_units"] = labeled_units(project, scheme)
        if args.apply:
            project.backup_before("before-calibrate-apply")
            forced = bool(gate.get("forced"))
            result["applied"] = apply_params(project, scheme, args.apply, cal.best_params_,
                                             origin="calibration (forced)" if forced else "calibration")
            result["forced"] = forced
        if args.curve:  # issue #16: the same search on growing prefixes of the labeled units
            from app.services.learning import learning_curve

            result["curve"] = learning_curve(project, scheme, options, objective=args.objective, folds=args.folds,
                                             group_by=args.group_by, seed=args.seed, n_boot=args.bootstrap,
                                             target=args.curve_target)
        from app.commands.evaluate import print_ceilings
        from app.services.ceiling import human_ceilings

        ceilings = human_ceilings(project, [scheme.name], args.bootstrap, args.seed)  # issue #15
        if ceilings:
            result["human_ceiling"] = ceilings[scheme.name]
        if scheme.name in guide:
            result["guideline"] = guide[scheme.name]
    if args.json:
        print(dumps("calibrate", result, indent=2, sort_keys=True, default=float))
        return 0
    for line in notes(guide):
        print(f"note: {line}")
    _print(args, scheme, cal, result)
    if args.curve:
        _print_curve(result["curve"])
    if ceilings:
        from rich.console import Console

        print_ceilings(ceilings, Console(width=None if sys.stdout.isatty() else 140))
    return 0


def _print(args: argparse.Namespace, scheme: Any, cal: Any, result: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 140)
    for w in result["warnings"]:
        console.print(f"[yellow]warning:[/] {w}", highlight=False)
    best = result["best"]
    from calibration.search import report

    console.print(f"[bold]{scheme.title}[/]: objective {result['objective']}, {result['n_configs']:,} configs, "
                  f"{cal.grouping_}, {result['labeled_units']} labeled "
                  f"{scheme.unit_noun}s ({result['n_units']} search units), "
                  f"{result['n_items']} human decisions (run #{result['run_id']})", highlight=False)
    from calibration.search.gain import sentence

    gain = result.get("gain")
    console.print(sentence(gain, result["objective"]), style="bold", markup=False, highlight=False)  # verdict first
    first = cal.cv_results_.iloc[0] if len(cal.cv_results_) else None  # the chosen config leads its rank
    for line in (report.headline(result | {"grouping": cal.grouping_}),
                 report.other_figures(result, None if first is None else first["mean_test_score"],
                                      None if first is None else first["std_test_score"]),
                 cal.weights_meaning_):
        if line:
            console.print(line, markup=False, highlight=False)
    if "guarantee" in result:
        _print_guarantee(console, result["guarantee"], scheme)
    t = Table(title="Held-out score (pooled over folds, 95% bootstrap interval); gain = calibrated minus the preset, "
                    "paired interval")
    for col in ("config", "held-out", "95% CI", "gain", "gain 95% CI"):
        t.add_column(col)
    lo, hi = result["heldout"]["ci"]
    t.add_row("calibrated", _fmt(result["heldout"]["score"]), f"[{_fmt(lo)}, {_fmt(hi)}]", "", "")
    per = (gain or {}).get("baselines") or {}
    for name, score in result["baselines"].items():
        dlo, dhi = result["baselines_ci"][name]
        g = per.get(name) or {}
        glo, ghi = g.get("ci") or (None, None)
        t.add_row(name + (" (default)" if gain and name == gain.get("baseline") else ""), _fmt(score),
                  f"[{_fmt(dlo)}, {_fmt(dhi)}]", "–" if g.get("estimate") is None else f"{g['estimate']:+.3f}", f"[{_fmt(glo)}, {_fmt(ghi)}]")
    print_table(console, t)
    if best.get("n_tied", 1) > 1:
        console.print(f"{best['n_tied']:,} configs tie at the best score; chose the one closest to "
                      f"{best['tie_anchor']} (then the lowest config id)", markup=False)
    console.print("best: " + ", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k} {v}"
                                       for k, v in best["config"].items()), markup=False, highlight=False)
    dims = list(best["config"])
    top = cal.cv_results_.head(args.top)
    tt = Table(title=f"Top {len(top)} of {result['n_configs']:,} configs (ranked {report.IN_SAMPLE}; "
                     "'=': tied with the row above)")
    for col in ("rank", "config (" + " ".join(dims) + ")", report.IN_SAMPLE, report.CROSS_VALIDATED + " ± sd"):
        tt.add_column(col, justify="right")
    for pos, (_, row) in zip(report.rank_positions(top["rank"].tolist()), top.iterrows()):
        cfg = " ".join(f"{row[d]:.2f}" if isinstance(row[d], float) else str(row[d]) for d in dims)
        tt.add_row(pos, cfg, _fmt(row["score"]),
                   f"{_fmt(row['mean_test_score'])} ± {_fmt(row['std_test_score'])}")
    print_table(console, tt)
    if args.apply:
        if result.get("forced"):
            console.print("applied with --force although no better than the default (recorded as forced)",
                          markup=False, highlight=False)
        console.print(f"saved as [bold]{result['applied']}[/]: use it with "
                      f"`concord evaluate {args.project} --scheme {scheme.name} --use {result['applied']}`")


def _print_guarantee(console: Any, g: dict[str, Any], scheme: Any) -> None:
    """The guaranteed mode's sentence (capitalised) and how it was obtained."""
    text = g["sentence"]
    console.print(text[:1].upper() + text[1:] + ".", style="bold", markup=False, highlight=False)
    band = g.get("band")
    where = ""
    if g["certified"] and band is not None:
        lo, hi = ("-inf" if band[0] is None else f"{band[0]:.4g}"), ("inf" if band[1] is None else f"{band[1]:.4g}")
        where = f"it defers to a human on scores in ({lo}, {hi}) around the threshold {g['threshold']:.4g}; "
    agreement = "–" if g["agreement"] is None else f"{g['agreement']:.3f}"
    console.print(f"Guarantee: {where}certified on a calibration split of {g['calibration_samples']} labeled samples "
                  f"({g['n']} {scheme.unit_noun} units) the search never saw: {g['n_decided']} decided, agreement "
                  f"{agreement}, {g['errors']} disagreements; Learn-then-Test ({g['method']}), target "
                  f"{g['target']:g}, delta {g['delta']:g}, seed {g['seed']}. `concord queue --order deferred` lists "
                  "the unlabeled units it defers.", markup=False, highlight=False, soft_wrap=True)


def _print_curve(curve: dict[str, Any]) -> None:
    """The learning curve table and the stopping rule's sentence (issue #16)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 140)
    t = Table(title="Learning curve: held-out score on the first n labeled units (labeling order)")
    for col in ("labeled units", "held-out", "95% CI", "half-width"):
        t.add_column(col, justify="right")
    for p in curve["points"]:
        t.add_row(str(p["n"]), _fmt(p["score"]), f"[{_fmt(p['lo'])}, {_fmt(p['hi'])}]" if p["lo"] is not None else
                  (p["note"] or "–"), _fmt(p["half_width"]))
    print_table(console, t)
    console.print(curve["stopping"]["message"], markup=False, highlight=False)
