"""`concord config PROJECT [--resolution majority|newest] [--blind on|off] [--hide-machine on|off]`: project
settings kept in the file.

--resolution: how a unit labeled by several annotators resolves when nobody adjudicated (an adjudicated label
always wins): 'majority' (the value most annotators gave, else the newest) or 'newest'. Every resolved label is
recomputed at once; calibration, evaluation and export read the resolved label.
--blind: in blind mode the app shows an annotator only their own labels and queue (on by default once work is
assigned with `concord assign-work`).
--hide-machine: the app hides the machine's labels and scores of a unit from an annotator until they commit their
own decision (A), then shows them for comparison, so the machine does not anchor them; every decision records
whether they were visible. On by default in blind mode. Without options, prints the settings.
"""
from __future__ import annotations

import argparse

from app.json_outputs import dumps


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "config", help="project settings: label resolution policy, blind mode, hiding machine labels",
        description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  concord config brand.concord --resolution newest\n  concord config brand.concord --blind off\n"
               "  concord config brand.concord --hide-machine on")
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--resolution", choices=("majority", "newest"), help="resolution policy")
    p.add_argument("--blind", choices=("on", "off"), help="blind mode for the app")
    p.add_argument("--hide-machine", choices=("on", "off"),
                   help="hide machine labels in the app until the annotator's own decision (default: as blind mode)")
    p.add_argument("--json", action="store_true", help="print the settings as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.store import Project

    with Project.open(args.project) as project:
        if args.resolution is not None:
            project.decisions.set_resolution_policy(args.resolution)
        if args.blind is not None:
            project.assignments.set_blind(args.blind == "on")
        if args.hide_machine is not None:
            project.reveals.set_hide_machine(args.hide_machine == "on")
        settings = {"resolution": project.decisions.resolution_policy(), "blind": project.assignments.blind(),
                    "hide_machine": project.reveals.hide_machine()}
    if args.json:
        print(dumps("config", settings))
    else:
        print(f"resolution\t{settings['resolution']}\nblind\t{'on' if settings['blind'] else 'off'}\n"
              f"hide_machine\t{'on' if settings['hide_machine'] else 'off'}")
    return 0
