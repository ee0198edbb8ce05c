"""`concord init PROJECT`: create an empty project file."""
from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "init",
        help="create an empty project file",
        description="Create an empty Concord project (one SQLite file). Running it on an existing project only "
        "upgrades its schema if needed; any other existing file is refused.",
        epilog="examples:\n  concord init brand.concord\n  concord import brand.concord checks.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="path of the project file to create (e.g. brand.concord)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.store import Project

    path = Path(args.project)
    existed = path.exists() and path.stat().st_size > 0
    with Project(path, create=True) as project:  # an existing non-project file raises NotAProjectError
        version = project.schema_version
    if existed:
        print(f"{path}: already a Concord project (schema {version}); nothing to do")
    else:
        print(f"created {path} (schema {version}); next: concord import {path} FILE")
    return 0
