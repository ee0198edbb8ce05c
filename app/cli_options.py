"""argparse types for numeric and spec options: bad values are refused before any work (exit 2, naming the option).

argparse reports a failed `type=` as `concord CMD: error: argument --bootstrap: ...` with status 2, so nothing is
embedded or written when an option is out of range.
"""
from __future__ import annotations

import argparse


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def non_negative_int(text: str) -> int:
    """0, 1, 2, ... (e.g. --bootstrap: 0 turns the intervals off)."""
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {value}")
    return value


def positive_int(text: str) -> int:
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def folds(text: str) -> int:
    """Cross-validation needs at least two folds (one to fit, one held out)."""
    value = _int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be 2 or more (one fold to fit, one held out), got {value}")
    return value


def unit_step(text: str) -> float:
    """A grid step in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {text}")
    return value


def embedding_spec(text: str) -> str:
    """'jaccard' or '<backend>:<model>' with a known backend; the model itself is loaded (and checked) later."""
    from calibration.similarity.embeddings import parse_spec, registered_backends

    try:
        backend, _ = parse_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("embedding: ")) from None
    known = sorted({*registered_backends(), "openai", "jaccard"})  # openai registers itself when first used
    if backend not in known:
        raise argparse.ArgumentTypeError(f"unknown backend {backend!r} in {text!r}; use one of {', '.join(known)}")
    return text.strip()


def scheme_name(text: str) -> str:
    """A registered scheme, matched case-insensitively (`--scheme RGB` is rgb); every command's --scheme uses it, so
    a typo is refused with the valid names instead of silently selecting nothing."""
    from calibration.schemes.base import registry

    names = registry().names()
    wanted = text.strip().casefold()
    for name in names:
        if name.casefold() == wanted:
            return name
    from app.names import terminal_safe

    raise argparse.ArgumentTypeError(f"unknown scheme '{terminal_safe(text)}'; valid: {', '.join(names) or 'none'}")


def annotator(text: str) -> str:
    """One annotator name (app.names: NFC, no control characters), e.g. `gui --annotator`."""
    from app.names import BadNameError, annotator_name

    try:
        return annotator_name(text, "name")
    except BadNameError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("name: ")) from None


def annotators(text: str) -> list[str]:
    """Comma-separated annotator names, each checked as `annotator`; a name listed twice is refused."""
    from app.names import BadNameError, annotator_name, terminal_safe

    names = []
    try:
        names = [annotator_name(a, "name") for a in text.split(",") if a.strip()]
    except BadNameError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("name: ")) from None
    if not names:
        raise argparse.ArgumentTypeError("give at least one name")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise argparse.ArgumentTypeError(f"listed twice: {', '.join(repr(terminal_safe(n)) for n in twice)}")
    return names


def scheme_names(text: str) -> str:
    """Comma-separated schemes (`export --scheme rubric,trace`), each checked as `scheme_name`; the canonical names,
    comma-joined."""
    return ",".join(scheme_name(part) for part in text.split(",") if part.strip())


def add_guideline_version(p: argparse.ArgumentParser) -> None:
    """`--guideline-version N` (issue #29): the figures use the labels valid under that version of each scheme's
    guideline (app/services/guidelines.py `valid_labels`)."""
    p.add_argument("--guideline-version", type=positive_int, metavar="N", default=None,
                   help="use only the labels valid under version N of each scheme's guideline (default: the current "
                        "one; labels a later change of their part left behind are set aside and counted), "
                        "e.g. --guideline-version 2")
