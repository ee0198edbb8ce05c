"""`concord traits import PROJECT FILE`: add metric trait definitions, e.g. Karenina `MetricRubricTrait` JSON as is.

A command of the `rubric` scheme's own (so it imports calibration.schemes.rubric): metric traits are the rubric's
definitions, stored project-wide in the rubric store adapter's `traits` table before any sample names them, and
Karenina's trait files are a format only that scheme reads. No other scheme has a catalogue of this kind to import.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.errors import UsageError
from app.files import regular_file

EXAMPLES = """\
examples:
  concord traits import brand.concord karenina_traits.json
  concord traits list brand.concord

FILE holds Karenina MetricRubricTrait JSON exactly as Karenina writes it (trait.model_dump_json()): one object,
a JSON array of them, one per line (JSONL), or a whole Karenina Rubric ({"metric_traits": [...], ...}; its
LLM, regex and callable traits are skipped with a warning). Fields: name, description, evaluation_mode
(tp_only | full_matrix), metrics, tp_instructions, tn_instructions, repeated_extraction; Karenina's rules apply
(TP instructions required; specificity and accuracy only in full_matrix, which needs TN instructions; a metric
named twice is accepted with a warning). Any problem: nothing is stored, every problem is listed, exit 2. A trait
already in the project must have the same definition."""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("traits", help="metric traits: `concord traits import PROJECT FILE` (Karenina JSON)",
                              description="Work with the project's rubric metric traits.",
                              epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="traits_command", metavar="ACTION")
    sub.required = True
    imp = sub.add_parser("import", help="add trait definitions from a Karenina trait JSON/JSONL file",
                         description="Validate every trait of FILE, then store them all (or none).", epilog=EXAMPLES,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    imp.add_argument("project", metavar="PROJECT", help="the .concord project file")
    imp.add_argument("file", metavar="FILE", help="Karenina MetricRubricTrait JSON, a JSON array, JSONL or a Rubric")
    imp.set_defaults(func=run_import)
    ls = sub.add_parser("list", help="print the project's trait definitions as JSON (Karenina's field names)",
                        epilog="examples:\n  concord traits list brand.concord\n"
                        "  concord traits list brand.concord | jq '.[].name'",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    ls.add_argument("project", metavar="PROJECT", help="the .concord project file")
    ls.set_defaults(func=run_list)


def run_import(args: argparse.Namespace) -> int:
    from app.schemes.rubric.store import store_of
    from app.store import Project
    from calibration.jsontext import MAX_RECORD_BYTES, encoding_problem, size_text
    from calibration.schemes.rubric import MetricTrait, TraitError
    from calibration.schemes.rubric.karenina import parse_trait_file

    path = Path(args.file)
    regular_file(path, "trait file")  # a FIFO would block read_text
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror or exc}") from None
    unreadable = encoding_problem(data[:4])
    if unreadable is None and len(data) > MAX_RECORD_BYTES:
        unreadable = f"{size_text(len(data))}, more than a trait file may hold ({size_text(MAX_RECORD_BYTES)})"
    if unreadable is not None:
        raise UsageError(f"{path}: {unreadable}")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UsageError(f"{path}:{line}: not valid UTF-8 (byte 0x{data[exc.start]:02x}); save it as UTF-8") from None
    parsed = parse_trait_file(text)
    messages = [f"{path}:{p}" for p in parsed.problems]
    with Project.open(args.project) as project:
        store = store_of(project)
        new = []
        for t in parsed.traits:
            stored = store.get_trait(t.name)
            if stored is None:
                new.append(t)
                continue
            try:
                same = MetricTrait.from_dict(stored, strict=False).to_dict() == t.to_dict()
            except TraitError:
                same = False
            if not same:
                messages.append(f"{path}: trait {t.name!r} is already defined differently in {args.project}")
        if messages:
            lines = "\n".join(f"  {m}" for m in messages)
            raise UsageError(f"{path}: {len(messages)} problem(s) found, nothing was imported:\n{lines}")
        for w in parsed.warnings:
            print(f"warning: {path}:{w}", file=sys.stderr)
        store.write_traits([t.to_dict() for t in new])
    kept = len(parsed.traits) - len(new)
    print(f"{path}: {len(new)} trait(s) added, {kept} already in the project"
          + (f": {', '.join(t.name for t in new)}" if new else ""))
    return 0


def run_list(args: argparse.Namespace) -> int:
    import json

    from app.schemes.rubric.store import store_of
    from app.store import Project

    with Project.open(args.project) as project:
        print(json.dumps(store_of(project).traits(), indent=2, ensure_ascii=False))
    return 0
