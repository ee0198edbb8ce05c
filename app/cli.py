"""The `concord` command. Subcommands live in app/commands/*.py, each with `register(subparsers)`; a scheme's own
commands come from its manifest (app/schemes/loader.py: listed by name and help, registered by its commands module).

Only the module that defines the requested command is imported. `concord --help`, `concord --version` and a
mistyped command import none of them: the command list (names and one-line help) is read from the modules'
source with `ast`, so the top-level help never loads pandas, numpy, scipy, scikit-learn, openai, torch or Qt.
"""
from __future__ import annotations

import argparse
import ast
import functools
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

COMMANDS_DIR = Path(__file__).resolve().parent / "commands"
DESCRIPTION = "Review LLM-assigned labels, record human decisions, calibrate metrics, export curated splits."
EPILOG = """\
examples: a first session (after `make run`; `source .venv/bin/activate` puts `concord` on the PATH):
  concord demo demo/demo.concord
  concord evaluate demo/demo.concord
  concord calibrate demo/demo.concord
  concord gui demo/demo.concord

`concord COMMAND --help` shows a command's options and examples."""


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("concord")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "unknown"


@functools.lru_cache(maxsize=1)
def command_index() -> dict[str, tuple[str, str]]:
    """{command: (module, one-line help)} from the `subparsers.add_parser("name", help=...)` calls in each module's
    `register(subparsers)`, read statically, and the built-in schemes' commands from their manifests; nested
    sub-commands (e.g. `labels import`) are not listed."""
    from app.schemes import loader

    out: dict[str, tuple[str, str]] = {}
    for path in sorted(COMMANDS_DIR.glob("*.py")):
        if path.name.startswith("_"):
            continue
        module = f"app.commands.{path.stem}"
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for fn in tree.body:
            if not (isinstance(fn, ast.FunctionDef) and fn.name == "register" and fn.args.args):
                continue
            receiver = fn.args.args[0].arg
            for node in ast.walk(fn):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "add_parser" and isinstance(node.func.value, ast.Name)
                        and node.func.value.id == receiver and node.args
                        and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                    help_text = next((kw.value.value for kw in node.keywords if kw.arg == "help"
                                      and isinstance(kw.value, ast.Constant)), "")
                    out[node.args[0].value] = (module, str(help_text))
    out.update({name: (module, c.help) for name, (module, c) in loader.commands().items()})
    return out


def register_module(module: str, sub: argparse._SubParsersAction) -> None:
    if module.startswith("app.commands."):
        importlib.import_module(module).register(sub)
    else:
        from app.schemes import loader

        loader.register_commands(module, sub)


class _VersionAction(argparse.Action):
    """Like action="version", but the version is looked up only when asked for (importlib.metadata scans
    site-packages, a noticeable part of `concord --help` otherwise)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"concord {version()}")
        parser.exit()


class Parser(argparse.ArgumentParser):
    """argparse with a "did you mean" for a mistyped option or command (3.11's argparse has none). Sub-commands'
    parsers are of this class too (add_subparsers makes them of the parent's class)."""

    argv: Sequence[str] = ()  # the command line being parsed, set by `main` on every parser of the tree

    def error(self, message: str) -> NoReturn:  # type: ignore[override]
        from app.cli_suggest import did_you_mean

        super().error(message + did_you_mean(self, message, self.argv))


def _base_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = Parser(prog="concord", description=DESCRIPTION, epilog=EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the installed version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    return parser, sub


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with `command`'s module imported (every module when `command` is None or unknown)."""
    index = _index_with_plugins(command)
    parser, sub = _base_parser()
    modules = [index[command][0]] if command in index else sorted({m for m, _ in index.values()})
    for name in modules:
        register_module(name, sub)
    return parser


def _index_with_plugins(command: str | None) -> dict[str, tuple[str, str]]:
    """The command index, plus installed schemes' commands when `command` is not a built-in one (reading entry
    points scans site-packages, so `concord --help` and the built-in commands do not)."""
    index = command_index()
    if command is None or command in index:
        return index
    from app.schemes import loader

    return {**index, **{name: (module, c.help) for name, (module, c) in loader.commands(plugins=True).items()}}


def light_parser() -> argparse.ArgumentParser:
    """Every command with its one-line help and no options: enough for `concord --help` and typos, imports nothing."""
    parser, sub = _base_parser()
    for name, (_, help_text) in sorted(command_index().items()):
        sub.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and not argv[0].startswith("-") else None
    parser = build_parser(command) if command in _index_with_plugins(command) else light_parser()
    from app.cli_suggest import parsers, scheme_case

    for p in parsers(parser):
        p.argv = argv
    args = parser.parse_args(argv)
    scheme_case(args)
    from app.errors import UsageError

    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        from app.cli_suggest import swapped_hint

        hint = swapped_hint(args)
        print(f"concord {args.command}: {exc}{hint}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_gone()
    except Exception as exc:
        message = explain(exc, getattr(args, "project", None))
        if message is None:
            raise
        print(f"concord {args.command}: {message}", file=sys.stderr)
        return 2


def _reader_gone() -> int:
    """The output was piped into a command that stopped reading (`| head`): not an error of ours, no traceback.
    stdout goes to /dev/null so that the interpreter's final flush does not fail again (Python's documented way)."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def explain(exc: BaseException, project: object = None) -> str | None:
    """One sentence for what the user can act on (a damaged page found while the command ran, a full disk, a
    read-only place, a busy project): file-system errors from app.errors, the database's (full, busy, read-only,
    unopenable, damaged) from the store, where SQL lives; None: a bug, show the traceback."""
    from app.errors import os_error_message

    if isinstance(exc, OSError):
        return os_error_message(exc, project)
    from app.store.failures import store_error_message

    return store_error_message(exc, project)


if __name__ == "__main__":
    sys.exit(main())
