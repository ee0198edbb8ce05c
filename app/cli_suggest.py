"""Forgiving the command line's small slips, in one place: a "did you mean" for a mistyped option or command,
`--scheme RGB` read as `rgb`, and a hint when PROJECT and FILE were given the wrong way round.

Nothing here imports a scheme's code: scheme names come from the registry's cheap manifests (as `--help` does).
"""
from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

_NUMBER = re.compile(r"-\d|-\.\d")


def parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    """`parser` and every sub-command's parser below it (depth first)."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases map to the same parser
                yield from parsers(sub)


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted({o for p in parsers(parser) for a in p._actions for o in a.option_strings if o.startswith("--")})


def _unknown_options(tokens: Sequence[str], known: Sequence[str]) -> list[str]:
    """The `--xyz` tokens that name no option (nor abbreviate one, which argparse accepts); stops at `--`."""
    out = []
    for token in tokens:
        if token == "--":
            break
        name = token.split("=", 1)[0]
        if (name.startswith("--") and len(name) > 2 and not _NUMBER.match(name) and name not in out
                and not any(o.startswith(name) for o in known)):
            out.append(name)
    return out


def did_you_mean(parser: argparse.ArgumentParser, message: str, argv: Sequence[str]) -> str:
    """'; did you mean --objective?' for the mistyped options of `argv` (and a mistyped command or choice named in
    argparse's `message`), or '' when nothing is close."""
    pairs: list[tuple[str, str]] = []
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        close = difflib.get_close_matches(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)), n=1)
        pairs += [(choice.group(1), close[0])] if close else []
    known = _options(parser)
    for name in _unknown_options(argv, known):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        if close:
            pairs.append((name, close[0]))
    if not pairs:
        return ""
    if len(pairs) == 1:
        return f"; did you mean {pairs[0][1]}?"
    return "; did you mean " + ", ".join(f"{good} (for {bad})" for bad, good in pairs) + "?"


def scheme_case(args: argparse.Namespace) -> None:
    """`--scheme RGB` (or `--scheme Trace,RUBRIC`) as the registered names `rgb`, `trace,rubric`, for every command
    that has the option; names that match no scheme are left for the command to refuse with its own message."""
    value = getattr(args, "scheme", None)
    if not value:
        return
    from calibration.schemes.base import scheme_infos

    names = {i.name.casefold(): i.name for i in scheme_infos()}

    def fix(text: str) -> str:
        return ",".join(names.get(part.strip().casefold(), part.strip()) for part in text.split(","))

    args.scheme = fix(value) if isinstance(value, str) else [fix(v) if isinstance(v, str) else v for v in value]


def _data_suffixes() -> set[str]:
    from app.cli_help import suffixes

    return {s.lower() for s in suffixes()} | {".json"}


def swapped_hint(args: argparse.Namespace) -> str:
    """A second line for a PROJECT that is not a project when the command also reads a FILE and the two look swapped
    (`concord import data.jsonl proj.concord`): PROJECT ends like a data file, or FILE like a project."""
    project, file = getattr(args, "project", None), getattr(args, "file", None)
    if not isinstance(project, str) or not isinstance(file, str):
        return ""
    suffix = Path(project).suffix.lower()
    if not (suffix in _data_suffixes() or Path(file).suffix.lower() == ".concord"):
        return ""
    command = " ".join(c for c in (args.command, getattr(args, f"{args.command}_command", None)) if c)
    return (f"\nhint: PROJECT and FILE look swapped (the project comes first): "
            f"concord {command} {_quoted(file)} {_quoted(project)}")


def _quoted(path: str) -> str:
    import shlex

    return shlex.quote(path)
