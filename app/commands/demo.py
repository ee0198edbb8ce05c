"""`concord demo [PATH]`: create the bundled, entirely synthetic demo project (see resources/demo/README.md)."""
from __future__ import annotations

import argparse

from pathlib import Path

from app import cli_help
from app.io.demo import DATASETS, DEFAULT_PATH, SCHEME_DEMOS, DemoReport, create_demo


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "demo",
        help="create the demo project (synthetic samples of every built-in scheme, machine and human labels)",
        description=f"Create a project with the bundled, entirely synthetic demo data: samples of {_schemes()} "
        "with their machine labels (e.g. 60 marketing texts for a fictional herbal liqueur with ground-truth "
        "violations and four checkers' predictions), human decisions on about half of it by one or two annotators "
        "(so calibration and agreement work out of the box), and the schemes' presets saved as parameters. The "
        "data goes through the same importers as `concord import` and `concord labels import`.",
        epilog="examples:\n  concord demo\n  concord demo /tmp/try.concord\n  concord demo demo/demo.concord --force\n"
        "  concord gui demo/demo.concord",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="PATH", nargs="?", default=str(DEFAULT_PATH),
                   help=f"project file to create (default {DEFAULT_PATH})")
    p.add_argument("--force", action="store_true",
                   help="rebuild PATH even if it already holds the demo (decisions made since are dropped)")
    p.set_defaults(func=run)


def _schemes() -> str:
    """The schemes the demo holds (its data files are named after them), in registry order."""
    return cli_help.names({Path(f).stem for f in (*DATASETS, *(records for records, _, _ in SCHEME_DEMOS))})


def _existing_demo(path: Path) -> bool:
    """True if `path` is already a demo project (any other existing file is left to create_demo, which refuses it)."""
    if not path.is_file():
        return False
    from app.errors import NotAProjectError
    from app.store import Project

    try:
        with Project.open(path) as project:
            return all(project.samples.dataset(name) is not None for name in DATASETS.values())
    except NotAProjectError:
        return False  # create_demo refuses it and names --force


def run(args: argparse.Namespace) -> int:
    if not args.force and _existing_demo(Path(args.path)):
        print(f"{args.path}: the demo project is already there; kept as it is "
              f"(--force rebuilds it and drops decisions made since)")
        print(f"open it with: concord gui {args.path}")
        return 0
    report = DemoReport(args.path)
    project = create_demo(args.path, force=args.force, report=report)
    try:
        for line in report.lines:
            print(line)
        counts = project.counts.unit_counts()["schemes"]  # the one definition every surface shows (app/store/counts.py)
        held = "; ".join(f"{name}: {c['samples']} samples, {c['units']} units, {c['labeled']} labeled"
                         for name, c in counts.items())
        print(f"created {args.path}: {held}")
        print(f"open it with: concord gui {args.path}")
    finally:
        project.close()
    return 0
