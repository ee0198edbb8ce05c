"""`concord assign PROJECT [--scheme NAME] ...`: start a scheme's LLM run (app/schemes/<scheme>/llm.py `assign_cli`), e.g.
rubric buckets for a trait (`--trait NAME`) or RGB's judged checks (`--scheme rgb --judge`).

This command is generic: it finds the run through the registry and the app/schemes/<scheme>/llm.py lookup below and imports
no scheme's module; only its options' help text says what each scheme's run reads (`--trait`, `--judge`).

Results are saved one by one, and units that already have buckets from the same source are skipped, so a run
that was interrupted (Ctrl-C, crash, network) continues where it stopped; answers are cached in the project, so
asking again costs nothing. The API key comes from OPENAI_API_KEY only (no flag: it would land in shell history).
"""
from __future__ import annotations

import argparse
from typing import Any

from app import cli_help
from app.cli_options import positive_int, scheme_name
from app.errors import UsageError
from app.llm.settings import DEFAULT_MODEL

EXAMPLES = """\
examples:
  export OPENAI_API_KEY=...
  concord assign brand.concord --trait "Product Facts" --limit 20
  concord assign brand.concord --scheme rgb --judge --model gpt-4o-mini
  concord assign brand.concord --scheme trace --base-url http://localhost:8000/v1 --concurrency 8"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "assign",
        help="label units with an OpenAI-compatible LLM: a scheme's LLM run (rubric buckets, ...)",
        description=cli_help.fill("Run a scheme's LLM labeling over the project's units, saved one by one as machine "
                                  "labels. Reads OPENAI_API_KEY (and OPENAI_BASE_URL unless --base-url is given)."),
        epilog=EXAMPLES + "\n\n" + cli_help.llm_block(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--trait", default=None, metavar="NAME", help="name of the metric trait (rubric)")
    p.add_argument("--scheme", default=None, metavar="NAME", type=scheme_name,
                   help=f"the scheme whose LLM run to start, one of {', '.join(i.name for i in cli_help.llm_runs())} "
                   "(listed below; default: the first registered scheme with one)")
    p.add_argument("--judge", action="store_true", help="rgb: RGB's LLM-judged checks (is the question addressed; "
                   "has the model identified the factual errors), stored as machine labels llm_judge:<model>")
    p.add_argument("--model", default=None, help=f"chat model (default: {DEFAULT_MODEL})")
    p.add_argument("--base-url", default=None, metavar="URL", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="only the first N units of the trait")
    p.add_argument("--temperature", type=float, default=0.0, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="K", help="parallel requests (default 4)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per request (default 60)")
    p.add_argument("--source", default=None, help="source id to save under (default: bucket-assigner@VERSION|MODEL; trace: llm:MODEL; "
                   "rgb: llm_judge:MODEL)")
    p.set_defaults(func=run)


def _check_args(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 1:
        raise UsageError(f"--limit: must be a positive number, got {args.limit}")
    if args.concurrency < 1:
        raise UsageError(f"--concurrency: must be at least 1, got {args.concurrency}")
    if not 0.0 <= args.temperature <= 2.0:
        raise UsageError(f"--temperature: must be between 0 and 2, got {args.temperature}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout: must be positive, got {args.timeout}")


def _assigner(name: str) -> Any:
    """`assign_cli` of the scheme's llm contribution (app/schemes/<name>/llm.py), or None when it has no LLM run."""
    from app.schemes import loader

    return loader.assigner(name)


def _scheme_run(args: argparse.Namespace) -> int:
    """A scheme's own LLM run: `assign_cli(args)` of app/schemes/<scheme>/llm.py. Without --scheme: the first registered
    scheme that has one (the registry's order), so `concord assign PROJECT --trait NAME` keeps meaning buckets."""
    from calibration.schemes.base import registry

    if args.scheme is None:
        args.scheme = next((s.name for s in registry() if _assigner(s.name) is not None), None)
        if args.scheme is None:
            raise UsageError("--scheme: no registered scheme has an LLM assignment")
    if args.scheme not in registry():
        raise UsageError(f"--scheme: unknown scheme {args.scheme!r}; known: {', '.join(registry().names())}")
    run_cli = _assigner(args.scheme)
    if run_cli is None:
        raise UsageError(f"--scheme: {args.scheme} has no LLM assignment")
    return int(run_cli(args))


def run(args: argparse.Namespace) -> int:
    _check_args(args)
    return _scheme_run(args)
