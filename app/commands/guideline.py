"""`concord guideline PROJECT --scheme S show|set FILE|history`: a scheme's labeling guideline as numbered versions.

set: store FILE (Markdown, UTF-8) as the scheme's next version, split into parts by its `## ` headings (violations:
`## rule ID`, `## category NAME`; rubric: `## trait NAME`; judge: `## level NAME`; other schemes: any heading; text
before the first heading is the preamble, which concerns every unit). Units labeled under an older version whose
relevant part changed go back to `concord queue`, marked "labeled under v2; rule R7 changed in v3". A file equal to
the current version adds none. show: the current version's text (or --version N's). history: every version, with the parts it
added, changed or removed. Every human decision records the version in force when it was made.
"""
from __future__ import annotations

import argparse

from app.cli_options import positive_int, scheme_name

ACTIONS = ("show", "set", "history")

EPILOG = """examples:
  concord guideline brand.concord --scheme violations set guideline.md
  concord guideline brand.concord --scheme violations show --version 1
  concord guideline brand.concord --scheme rubric history

A violations guideline (guideline.md):
  How to judge a brand text.
  ## rule R7
  Claims about prices need a source.
  ## category Style
  Tone and wording, not facts.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("guideline", help="a scheme's labeling guideline as numbered versions: show, set, history",
                              description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--scheme", metavar="NAME", required=True, type=scheme_name,
                   help="the scheme whose guideline this is (e.g. violations)")
    p.add_argument("action", choices=ACTIONS, metavar="show|set|history",
                   help="show the text, set FILE as the next version, or list the versions")
    p.add_argument("file", nargs="?", metavar="FILE", help="with set: the guideline (Markdown, UTF-8)")
    p.add_argument("--version", type=positive_int, metavar="N", dest="guideline_version",
                   help="with show: that version instead of the current one (e.g. --version 1)")
    p.set_defaults(func=run)


def _read(path: str) -> str:
    from app.errors import UsageError
    from app.files import regular_file

    found = regular_file(path, "guideline file")
    try:
        return found.read_bytes().decode("utf-8")  # type: ignore[union-attr]
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start})") from None


def run(args: argparse.Namespace) -> int:
    from app.errors import UsageError

    if (args.action == "set") != (args.file is not None):
        raise UsageError("set takes FILE; show and history take none" if args.file else "set needs FILE")
    if args.guideline_version is not None and args.action != "show":
        raise UsageError("--version goes with show")
    if args.action == "set":
        return _set(args, _read(args.file))
    from app.store import Project

    with Project.open(args.project) as project:
        if args.action == "show":
            return _show(project, args)
        history = project.guidelines.guideline_history(args.scheme)
    _print_history(args.scheme, history)
    return 0


def _set(args: argparse.Namespace, text: str) -> int:
    from app.errors import UsageError
    from app.names import terminal_safe
    from app.services import guidelines
    from app.store import Project

    try:
        parts = guidelines.split(args.scheme, text)
    except ValueError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    with Project.open(args.project) as project:
        before = project.guidelines.guideline_version(args.scheme)
        version = project.guidelines.add_guideline_version(args.scheme, parts)
        if version is None:
            print(f"{args.scheme}: the guideline equals v{before}; no version added")
            return 0
        changed = guidelines.changes(project.guidelines.guideline_history(args.scheme)).get(version, [])
        requeued = guidelines.stale_units(project, [args.scheme])
    print(f"{args.scheme}: guideline v{version} stored ({len(parts)} parts"
          + (f"; changed: {', '.join(terminal_safe(p) for p in changed)}" if changed else "") + ")")
    if before is not None:
        print(f"{len(requeued)} labeled units back in `concord queue {args.project}` (their labels predate a change "
              "of a part that affects them)")
    return 0


def _show(project: object, args: argparse.Namespace) -> int:
    from app.errors import UsageError
    from app.names import terminal_safe

    current = project.guidelines.guideline_version(args.scheme)  # type: ignore[attr-defined]
    if current is None:
        raise UsageError(f"scheme {args.scheme} has no guideline yet; store one with "
                         f"`concord guideline {args.project} --scheme {args.scheme} set FILE`")
    version = args.guideline_version or current
    if version > current:
        raise UsageError(f"--version: scheme {args.scheme} has guideline versions 1 to {current}, not {version}")
    parts = project.guidelines.guideline_parts(args.scheme, version)  # type: ignore[attr-defined]
    print(f"# {args.scheme} guideline v{version}" + (" (current)" if version == current else ""))
    print("\n".join(terminal_safe(line) for line in "".join(parts.values()).splitlines()))
    return 0


def _print_history(scheme: str, history: list[dict]) -> None:
    from app.names import terminal_safe
    from app.services.guidelines import changes

    if not history:
        print(f"scheme {scheme} has no guideline yet")
        return
    changed = changes(history)
    previous: dict[str, str] = {}
    for h in history:
        parts = h["parts"]
        what = [f"+{p}" for p in parts if p not in previous] + [f"-{p}" for p in previous if p not in parts] + [
            f"~{p}" for p in changed.get(h["version"], []) if p in parts and p in previous]
        print(f"v{h['version']}  {h['created_at']}  {len(parts)} parts  "
              + terminal_safe(", ".join(what) if h["version"] > 1 else "first version"))
        previous = parts
