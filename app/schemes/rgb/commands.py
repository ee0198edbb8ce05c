"""`concord generate PROJECT --model M`: answer the project's RGB queries with a model through an OpenAI-compatible
endpoint, on passages assembled exactly as RGB's processdata does (seeded), one new unit per model.

Import RGB's data files first (`concord import PROJECT en.json`). Each answer is saved as it arrives and cached
in the project; queries the model has already answered at this noise rate are skipped, so an interrupted run
continues where it stopped. The API key comes from OPENAI_API_KEY only and is never stored.

A command of the `rgb` scheme's own (it runs the scheme's LLM module): generating answers on RGB's noise-controlled passage
sets is what RGB's benchmark measures; no other scheme produces its machine output inside Concord, so this is not a
registry hook. LLM runs that label existing samples go through the generic `concord assign --scheme NAME`.
"""
from __future__ import annotations

import argparse

from rich.console import Console

from app.cli_options import positive_int
from app.cli_progress import RichBar, sigint_cancels
from app.errors import UsageError

EPILOG = """examples:
  concord import rgb.concord en.json
  concord generate rgb.concord --model gpt-4o-mini --noise-rate 0.4
  concord generate rgb.concord --model llama3 --base-url http://localhost:11434/v1 --noise-rate 1 --limit 50
"""


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be from 0 to 1, got {text}")
    return value


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "generate", help="generate RGB responses with an OpenAI-compatible model (passages as RGB assembles them)",
        description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("project", metavar="PROJECT", help="the .concord project file")
    p.add_argument("--model", required=True, help="chat model to answer with (its name becomes the unit)")
    p.add_argument("--noise-rate", type=_rate, default=0.0, metavar="R", help="share of noise passages (default 0; "
                   "1 is RGB's negative-rejection setting)")
    p.add_argument("--passages", type=_non_negative, default=5, metavar="N", help="passages per prompt (default 5)")
    p.add_argument("--correct-rate", type=_rate, default=0.0, metavar="C",
                   help="counterfactual data: share of correct passages beside the wrong ones (default 0)")
    p.add_argument("--seed", type=int, default=2333, metavar="S", help="passage sampling seed (default 2333, RGB's)")
    p.add_argument("--base-url", default=None, metavar="URL", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N", help="only the first N queries")
    p.add_argument("--temperature", type=float, default=0.0, metavar="T", help="sampling temperature (default 0)")
    p.add_argument("--concurrency", type=positive_int, default=4, metavar="K", help="parallel requests (default 4)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="S", help="seconds per request (default 60)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from app.llm.report import finish_run
    from app.schemes.rgb.llm import SCHEME, awaiting, generate
    from app.llm.settings import LLMConfigError, LLMSettings
    from app.store import Project

    if not 0.0 <= args.temperature <= 2.0:
        raise UsageError(f"--temperature: must be between 0 and 2, got {args.temperature}")
    if args.timeout <= 0:
        raise UsageError(f"--timeout: must be positive, got {args.timeout}")
    console = Console(stderr=True)
    try:
        settings = LLMSettings(model=args.model, base_url=args.base_url, temperature=args.temperature,
                               concurrency=args.concurrency, timeout=args.timeout, json_output=False)
    except LLMConfigError as exc:
        raise UsageError(str(exc)) from None
    with Project.open(args.project) as project:
        if not any(awaiting(r) for r in project.samples.records(SCHEME)):
            raise UsageError(f"{args.project}: no RGB queries to answer; import RGB data files first "
                             "(concord import PROJECT en.json)")
        with sigint_cancels(console) as cancel, RichBar(console, label="generating", cancel=cancel, transient=False) as bar:
            try:
                summary, skipped = generate(project, settings, noise_rate=args.noise_rate, passages=args.passages,
                                            seed=args.seed, correct_rate=args.correct_rate, limit=args.limit,
                                            progress=bar, cancel=cancel)
            except LLMConfigError as exc:
                raise UsageError(str(exc)) from None
    console.print(f"{args.model} at noise rate {args.noise_rate:g}: {summary.succeeded} generated "
                  f"({summary.from_cache} from cache), {summary.failed} failed, {skipped} already done, "
                  f"{summary.requests} requests", soft_wrap=True)
    return finish_run(console, summary, unit="queries", name=lambda key: str(key[1]))
