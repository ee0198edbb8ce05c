"""`concord gui [PROJECT]`: open the desktop app on a project (Qt is imported only here, on demand)."""
from __future__ import annotations

import argparse

from app.cli_options import annotator


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "gui",
        help="open the desktop app on a project",
        description="Open the Concord window on PROJECT. With --screenshot, render the main window offscreen to "
        "a PNG and exit (for docs and smoke tests).",
        epilog="examples:\n  concord gui demo/demo.concord\n"
        "  QT_QPA_PLATFORM=offscreen concord gui demo/demo.concord --screenshot window.png",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", nargs="?", help="the .concord project file (optional: open one later)")
    p.add_argument("--screenshot", metavar="FILE.png", help="save a screenshot of the window and exit")
    p.add_argument("--annotator", metavar="NAME", type=annotator, help="record decisions under this name (default: asked or remembered)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.store import Project

    if args.project is not None:
        with Project.open(args.project) as project:  # a bad path is a clear message (exit 2) before any window appears
            known = project.decisions.annotators()
        if args.annotator:
            import sys

            from app.names import case_twins, case_warning

            warning = case_warning(case_twins([args.annotator], known))
            if warning:
                print(f"warning: {warning}", file=sys.stderr)
    from app.gui.main import run_gui  # PySide6 loads only for this command

    extra = {"annotator": args.annotator} if args.annotator else {}
    return int(run_gui(args.project, screenshot=args.screenshot, **extra) or 0)
