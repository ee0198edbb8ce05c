"""`concord import PROJECT FILE`: add samples of any registered scheme (JSONL, CSV, Parquet or a scheme's own files),
all or nothing.

The module is not called `import` because that is a Python keyword; the command is.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from app import cli_help
from app.cli_progress import RichBar
from app.io import labelstudio
from app.io.import_summary import summary_text, warning_lines
from app.schemes.loader import import_options

EXAMPLES = """\
examples:
  concord init brand.concord
  concord import brand.concord checks.jsonl
  concord import brand.concord reviews.csv --dataset reviews-2024-06
  concord import brand.concord rubric.parquet
  concord import brand.concord labelstudio-export.json --text-field review

{accepts}

A record names its scheme ("scheme": NAME) or is recognised by its keys. CSV/Parquet: one column per field; list
and object columns hold JSON. Record formats: README.md ("Data formats") and resources/schema/. Any problem:
nothing is imported, every problem is listed (file:line: field: message), exit 2. Importing the same file again
changes nothing. A Label Studio JSON export (a list of tasks) is recognised by its content: span labels become
violations samples with each annotator's ground truth, choices judge samples with each annotator's label, and
predictions checkers or judges (README.md, "Label Studio in and out")."""



def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "import",
        help="import samples (records of any registered scheme) from JSONL, CSV, Parquet or a scheme's own files",
        description=cli_help.fill(
            f"Validate every record of FILE (format by extension: {cli_help.suffix_list()}) and add the samples of "
            f"{cli_help.names()} to the project in one transaction. Quotes without offsets are located in the text "
            "(exact, case-insensitive, then fuzzy); those that cannot be found are kept and flagged as ungrounded."),
        epilog=EXAMPLES.format(accepts=cli_help.accepts_block()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file (create it with `concord init`)")
    p.add_argument("file", metavar="FILE", help=f"the records to import: {cli_help.suffix_list()}")
    p.add_argument("--dataset", metavar="NAME", help="dataset name the samples are filed under (default: the file name "
                   "without extension, or what the scheme suggests: <subset>/test.parquet of RAGBench is <subset>-test)")
    for o in import_options().values():  # what the schemes' own file readers take (their io contributions declare)
        if o.metavar is None:
            p.add_argument(o.flag, action="store_true", help=o.help)
        else:
            p.add_argument(o.flag, metavar=o.metavar, help=o.help)
    p.add_argument("--text-field", metavar="NAME", help="for a Label Studio export: the task's data field holding the "
                   "text (default: 'text', else the first string field)")
    p.add_argument("--levels", metavar="A,B,...", type=_levels, help="for a Label Studio export with choices: the "
                   "choices from most negative to most positive (default: the order they first appear)")
    p.set_defaults(func=run)


def _levels(value: str) -> list[str]:
    levels = [v.strip() for v in value.split(",") if v.strip()]
    if len(levels) < 2 or len(set(levels)) != len(levels):
        raise argparse.ArgumentTypeError("give two or more different choices, comma-separated")
    return levels


def print_warnings(warnings: list[Any]) -> None:
    for line in warning_lines(warnings):
        print(line, file=sys.stderr)


def options_of(args: argparse.Namespace) -> dict[str, Any] | None:
    names = (*import_options(), *labelstudio.OPTIONS)  # what a scheme's (or Label Studio's) reader takes
    return {k: v for k in names if (v := getattr(args, k, None))} or None


def run(args: argparse.Namespace) -> int:
    from app.io.imports import import_file  # heavy imports stay out of `concord --help`
    from app.store import Project

    console = Console(stderr=True)
    with Project.open(args.project) as project, RichBar(console, label="importing") as bar:
        report = import_file(project, args.file, dataset=args.dataset, progress=bar, options=options_of(args))
        counts = project.counts.unit_counts()["schemes"]
    print_warnings(report.warnings)
    print(summary_text(report, counts))
    return 0
