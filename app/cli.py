"""The `concord` command. Subcommands live in app/commands/*.py, each with `register(subparsers)`."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import app.commands
from app.errors import UsageError


_ADD_PARSER = re.compile(r"""add_parser\(\s*["']([\w-]+)["']""")


def _modules(command: str | None) -> list[str]:
    """The command modules to import: only those defining `command` (found in their source), else all of them.

    Importing every module would load pandas, scipy, scikit-learn and openai on each call; `concord status`
    must answer in well under a second.
    """
    names = sorted(m.name for m in pkgutil.iter_modules(app.commands.__path__))
    if command is None:
        return names
    folder = Path(app.commands.__path__[0])
    hits = [n for n in names if (folder / f"{n}.py").is_file()
            and command in _ADD_PARSER.findall((folder / f"{n}.py").read_text(encoding="utf-8"))]
    return hits or names


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="concord",
        description="Review LLM-assigned labels, record human decisions, calibrate metrics, export curated splits.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _modules(command):
        module = importlib.import_module(f"app.commands.{name}")
        register = getattr(module, "register", None)
        if register is not None:
            register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv and not argv[0].startswith("-") else None)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:
        print(f"concord {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
