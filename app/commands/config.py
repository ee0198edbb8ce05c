"""`concord config PROJECT [--resolution majority|newest] [--blind on|off]`: project settings kept in the file.

--resolution: how a unit labeled by several annotators resolves when nobody adjudicated (an adjudicated label
always wins): 'majority' (the value most annotators gave, else the newest) or 'newest'. Every resolved label is
recomputed at once; calibration, evaluation and export read the resolved label.
--blind: in blind mode the app shows an annotator only their own labels and queue (on by default once work is
assigned with `concord assign-work`). Without options, prints the settings.
"""
from __future__ import annotations

import argparse

from app.json_outputs import dumps


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "config", help="project settings: label resolution policy, blind mode",
        description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  concord config brand.concord --resolution newest\n  concord config brand.concord --blind off")
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--resolution", choices=("majority", "newest"), help="resolution policy")
    p.add_argument("--blind", choices=("on", "off"), help="blind mode for the app")
    p.add_argument("--json", action="store_true", help="print the settings as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.store import Project

    with Project.open(args.project) as project:
        if args.resolution is not None:
            project.set_resolution_policy(args.resolution)
        if args.blind is not None:
            project.set_blind(args.blind == "on")
        settings = {"resolution": project.resolution_policy(), "blind": project.blind()}
    if args.json:
        print(dumps("config", settings))
    else:
        print(f"resolution\t{settings['resolution']}\nblind\t{'on' if settings['blind'] else 'off'}")
    return 0
