"""`concord export PROJECT --name NAME --version X.Y.Z --out DIR`: write a curated, versioned evaluation split.

The split lands in DIR/NAME@X.Y.Z/ (data files, manifest.json, README.md) and is recorded in the project; a
recorded version cannot change content later (bump the version). --dry-run prints the counts only.
"""
from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table

from app import cli_help
from app.cli_options import add_guideline_version, scheme_names
from app.cli_progress import RichBar
from app.cli_tables import print_table
from app.errors import UsageError
from app.io.export import export_split, preview_split
from app.io.export_select import export_adapters
from app.io.export_write import FORMATS
from app.json_outputs import dumps
from app.store import STATUSES, Project
from calibration.schemes.base import Table as SchemeTable

EXAMPLES = """\
examples:
  concord export brand.concord --name brand_compliance --version 1.0.0 --out splits/
  concord export brand.concord --name brand_compliance --version 1.0.0 --dry-run
  concord export brand.concord --name rag_eval --version 0.2.0 --out splits/ --scheme trace,rgb --format parquet
  concord export brand.concord --name sample --version 0.1.0 --out splits/ --sample 50 --stratify category --seed 1
  concord export brand.concord --name brand_compliance --version 1.1.0 --out splits/ --guideline-version 2
  concord export brand.concord --name brand_compliance --version 1.0.1 --out splits/ --dry-run --json | jq .counts.samples
  concord export brand.concord --format labelstudio --out tasks.json"""
LABELSTUDIO = "labelstudio"


def _csv_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "export",
        help="export a curated, versioned evaluation split (NAME@X.Y.Z) of human-validated samples",
        description=cli_help.fill(
            f"Write DIR/NAME@X.Y.Z/ with the human-validated data of every registered scheme in the project "
            f"({cli_help.names()}): each scheme's samples as `concord import` reads them and every annotator's "
            "labels, manifest.json (counts, sha256 of every file, filters, annotators, agreement) and a README.md "
            "data card. The same selection always gives byte-identical data files; a recorded NAME@X.Y.Z never "
            "changes content."),
        epilog=EXAMPLES + "\n\n" + cli_help.accepts_block("the schemes and their samples:"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--name", help="split name: letters, digits, '_' and '-' (e.g. brand_compliance); required except "
                   "with --format labelstudio")
    p.add_argument("--version", metavar="X.Y.Z", help="semantic version of this split, e.g. 0.3.2; required except "
                   "with --format labelstudio")
    p.add_argument("--out", metavar="DIR", help="directory to write NAME@X.Y.Z/ into (required unless --dry-run); "
                   "with --format labelstudio the file to write")
    p.add_argument("--format", choices=(*FORMATS, LABELSTUDIO), default="jsonl", dest="fmt",
                   help="data file format (default jsonl); labelstudio: every violations and judge sample with each "
                   "annotator's labels and the predictions as Label Studio tasks in one JSON file (no split is "
                   "recorded; --scheme applies, the other selection options do not)")
    p.add_argument("--status", default="accepted,corrected", metavar="LIST",
                   help=f"comma-separated unit statuses to include, from {', '.join(STATUSES)}; 'any' for every unit "
                   "with a human decision (default: accepted,corrected)")
    p.add_argument("--checker", action="append", metavar="NAME",
                   help="only these units: checkers, traits, judges, ... (repeat or comma-separate; a unique prefix such as "
                   "'prompt-baseline' is enough; default: all)")
    p.add_argument("--scheme", action="append", metavar="NAME", type=scheme_names,
                   help=f"only these schemes, of {cli_help.names()} (repeat or comma-separate; default: every scheme "
                   "in the project)")
    p.add_argument("--stratify", choices=("category", "split", "unit"),
                   help="sample proportionally within these strata (unit: samples decided on the same checkers, "
                   "traits, judges, ... together; category: a scheme without categories is one stratum)")
    p.add_argument("--sample", type=int, metavar="N", help="draw N samples (reproducibly, with --seed)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="random seed for --sample (default 0)")
    p.add_argument("--config", default=None, metavar="REF",
                   help="parameters name@version the split is documented with, of the scheme the app's config box "
                   "names (the violations match config; default: the newest saved in the project by calibrate "
                   "--apply or the app, as the app uses; else the scheme's first preset, std_match@1.0.0); every "
                   "other scheme's export uses its default")
    p.add_argument("--force", action="store_true", help="replace an existing DIR/NAME@X.Y.Z directory")
    p.add_argument("--dry-run", action="store_true", help="print what would be exported; write nothing")
    p.add_argument("--json", action="store_true", help="print the counts and files as JSON instead of tables (with "
                   "--dry-run: what would be written; docs/json.md)")
    add_guideline_version(p)
    p.set_defaults(func=run)


def _rich(table: SchemeTable) -> Table:
    t = Table(title=table.title)
    for i, col in enumerate(table.columns):
        t.add_column(col, justify="left" if i == 0 else "right")
    for row in table.rows:
        t.add_row(*(str(x) for x in row))
    return t


def counts_tables(counts: dict[str, Any], adapters: list[Any]) -> list[Table]:
    """Rich tables of the counts (shared by --dry-run and the summary after an export), the same for every scheme
    (app/io/export_manifest.counts); `adapters`: the schemes' export adapters, each adding its own rows and tables."""
    schemes = counts.get("schemes") or {}
    overview = Table(title="split", show_header=False)
    for name, v in schemes.items():
        overview.add_row(f"{name} samples", str(v["samples"]))
    for a in adapters:
        for label, value in a.overview_rows(counts):
            overview.add_row(label, value)
    overview.add_row("labels (every annotator's)", str(counts["labels"]))
    for reason, n in counts["skipped_units"].items():
        overview.add_row(f"units skipped: {reason}", str(n))
    tables = [overview]
    splits = Table(title="per split")
    for col in ("split", *schemes):
        splits.add_column(col, justify="left" if col == "split" else "right")
    for k, v in counts["by_split"].items():
        splits.add_row(k, *(str(v.get(name, 0)) for name in schemes))
    tables.append(splits)
    for a in adapters:
        tables.extend(_rich(t) for t in a.count_tables(counts))
    if schemes:
        t = Table(title="per scheme (records, units, labeled units and every annotator's labels)")
        for col in ("scheme", "samples", "units", "labeled units", "labels"):
            t.add_column(col, justify="left" if col == "scheme" else "right")
        for k, v in schemes.items():
            t.add_row(k, str(v["samples"]), str(v["units"]), str(v.get("labeled", "")), str(v["labels"]))
        tables.append(t)
    if len(counts["strata"]) > 1:
        t = Table(title="strata")
        for col in ("stratum", "available", "selected"):
            t.add_column(col, justify="left" if col == "stratum" else "right")
        for k, v in counts["strata"].items():
            t.add_row(k, str(v["available"]), str(v["selected"]))
        tables.append(t)
    return tables


def _adapters(project: Project, schemes: list[str] | None) -> list[Any]:
    return [a for a in export_adapters(project) if schemes is None or a.scheme in schemes]


def _json(args: argparse.Namespace, dry_run: bool, counts: dict[str, Any], content: str, data_files: list[str],
          filters: dict[str, Any], problems: list[str], **extra: Any) -> str:
    """`export --json` (kind "export" in app/json_outputs.py): the same keys with and without --dry-run."""
    files = [*data_files, "manifest.json", "README.md"]
    return dumps("export", {"dry_run": dry_run, "split": f"{args.name}@{args.version}", "format": args.fmt,
                            "out": args.out, "files": files, "content_sha256": content, "counts": counts,
                            "filters": filters, "problems": problems, **extra}, indent=2, ensure_ascii=False)


def run(args: argparse.Namespace) -> int:
    console = Console(stderr=args.json)  # --json: stdout holds the JSON only (the progress bar goes to stderr)
    statuses = None if args.status.strip().lower() == "any" else _csv_list(args.status)
    checkers = None if not args.checker else [c for item in args.checker for c in _csv_list(item)]
    schemes = None if not args.scheme else [c for item in args.scheme for c in _csv_list(item)]
    if args.fmt == LABELSTUDIO:
        return _labelstudio(args, schemes)
    missing = [f"--{k}" for k in ("name", "version") if not getattr(args, k)]
    if missing:
        raise UsageError(f"the following arguments are required: {', '.join(missing)}")
    if not args.dry_run and not args.out:
        raise UsageError("--out: the output directory is required (or use --dry-run)")
    from app.services.guidelines import notes

    with Project.open(args.project) as project:
        options = dict(statuses=statuses, checkers=checkers, stratify=args.stratify, sample=args.sample,
                       seed=args.seed, config_ref=args.config, schemes=schemes,
                       guideline_version=args.guideline_version)
        if args.dry_run:
            pv = preview_split(project, name=args.name, version=args.version, out_dir=args.out, force=args.force,
                               **options)
            if args.json:
                print(_json(args, True, pv["counts"], pv["content_sha256"], [f"{d}.{args.fmt}" for d in pv["datasets"]],
                            pv["filters"], pv["problems"], guideline=pv.get("guideline", {})))
                return 2 if pv["problems"] else 0
            for table in counts_tables(pv["counts"], _adapters(project, schemes)):
                print_table(console, table)
            console.print(f"content sha256: {pv['content_sha256']}")
            for line in notes(pv.get("guideline") or {}):
                console.print(f"note: {line}", markup=False, soft_wrap=True)
            for problem in pv["problems"]:
                console.print(f"problem: {problem}", style="red", markup=False)
            console.print("dry run: nothing written")
            return 2 if pv["problems"] else 0
        adapters = _adapters(project, schemes)
        with RichBar(console, label="exporting") as bar:
            res = export_split(project, args.name, args.version, args.out, fmt=args.fmt, force=args.force,
                               progress=bar, **options)
    if args.json:
        print(_json(args, False, res.counts, res.content_sha256, sorted(res.files), res.manifest.get("filters", {}), [],
                    unchanged=res.unchanged, params=res.params, guideline=res.manifest.get("guideline", {})))
        return 0
    documenting = [(a, ref) for a in adapters if (ref := res.params.get(a.scheme)) is not None]
    if res.unchanged:
        console.print(f"{res.ref}: {res.path} already holds this exact data; nothing written", markup=False,
                      soft_wrap=True)
        for a, ref in documenting:
            documented = a.documented_ref(res.manifest)
            if documented != ref:
                console.print(f"note: its manifest documents {a.params_name} {documented}, not {ref}; export under "
                              f"a new version to document it with {ref}", markup=False, soft_wrap=True)
        console.print(f"content sha256: {res.content_sha256}")
        return 0
    for table in counts_tables(res.counts, adapters):
        print_table(console, table)
    for a, ref in documenting:
        console.print(f"{a.params_name}: {ref}", markup=False, soft_wrap=True)
    for line in notes(res.manifest.get("guideline") or {}):
        console.print(f"note: {line}", markup=False, soft_wrap=True)
    note = " (same content as the recorded version)" if res.already_recorded else ""
    console.print(f"wrote [bold]{res.ref}[/] to {res.path}{note}", soft_wrap=True)
    console.print(f"content sha256: {res.content_sha256}")
    return 0


def _labelstudio(args: argparse.Namespace, schemes: list[str] | None) -> int:
    """`--format labelstudio --out FILE`: Label Studio tasks (app/io/export_labelstudio.py), not a split."""
    from app.io.export_labelstudio import export_labelstudio

    if args.dry_run or args.json or args.name or args.version:
        raise UsageError("--format labelstudio writes one tasks file, not a split: leave out --name, --version, "
                         "--dry-run and --json")
    if not args.out:
        raise UsageError("--out: the file to write is required (e.g. --out tasks.json)")
    with Project.open(args.project) as project:
        res = export_labelstudio(project, args.out, schemes)
    print(res.summary())
    return 0
