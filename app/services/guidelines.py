"""Guideline versions (issue #29 item 1): splitting a guideline into parts, and which labels a change left behind.

A guideline is text (Markdown): lines starting with `## ` begin a part named by the rest of the line (`## rule R7`,
`## trait clarity`); text before the first heading is the part `preamble`, which concerns every unit. A scheme's
guideline contribution (app/schemes/contracts.py `GuidelinePart`) may check the headings (`split`, usually through
`split_sections` with its own heading rule) and say which units a part affects (`affected`); without one, any
heading names a part and a change to any part affects every unit of the scheme.

A label is *stale* under version N when it was given under version k < N and a part that affects its unit changed
in a version in (k, N] ("labeled under v2; rule R7 changed in v3"), or when it was given under a version after N.
Labels from before versioning (event version NULL) are compared with the first stored version: that version is
taken to write down the guideline people followed before it was stored. Nothing here names a scheme.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from app.errors import UsageError
from app.schemes import loader

PREAMBLE = "preamble"


def split_sections(text: str, name_part: Callable[[str], str] | None = None) -> dict[str, str]:
    """part -> its text (heading line included, so the parts joined in order give the text back), in order.
    `name_part(heading)` turns a heading into a part name or raises ValueError saying what a heading must be;
    ValueError names the line of a bad or repeated heading, or says the text is empty."""
    if not text.strip():
        raise ValueError("the guideline is empty")
    parts: dict[str, list[str]] = {}
    current = PREAMBLE
    for number, line in enumerate(text.splitlines(keepends=True), 1):
        if line.startswith("## "):
            heading = " ".join(line[3:].split())
            try:
                current = name_part(heading) if name_part is not None else heading
            except ValueError as exc:
                raise ValueError(f"line {number}: {exc}") from None
            if not current:
                raise ValueError(f"line {number}: a `## ` heading needs a name")
            if current in parts:
                raise ValueError(f"line {number}: part {current!r} appears twice")
        parts.setdefault(current, []).append(line)
    out = {p: "".join(lines) for p, lines in parts.items()}
    if PREAMBLE in out and not out[PREAMBLE].strip():
        del out[PREAMBLE]  # blank lines before the first heading
    return out


def split(scheme: str, text: str) -> dict[str, str]:
    """The parts of a scheme's guideline text (its own rule, else `split_sections`)."""
    hook = loader.guideline(scheme).split
    return hook(text) if hook is not None else split_sections(text)


def affected(project: Any, scheme: str, parts: Collection[str]) -> set[tuple[str, str]]:
    """(sample, unit) the given parts affect: every unit of the scheme for the preamble or a scheme that does not
    say, else the scheme's `affected`."""
    hook = loader.guideline(scheme).affected
    if hook is None or PREAMBLE in parts:
        return project.guidelines.scheme_unit_keys(scheme)
    return set(hook(project, parts))


def version_name(version: int | None) -> str:
    return "before versioning" if version is None else f"v{version}"


def changes(history: Sequence[Mapping[str, Any]]) -> dict[int, list[str]]:
    """version -> the parts it added, removed or changed against the version before it (versions from 2)."""
    out: dict[int, list[str]] = {}
    for before, after in pairwise(history):
        a, b = before["parts"], after["parts"]
        out[after["version"]] = [p for p in dict.fromkeys([*a, *b]) if a.get(p) != b.get(p)]
    return out


@dataclass(frozen=True)
class Stale:
    """Why a label is not valid under a version: given under `labeled` (None: before versioning) and `part` changed
    in `changed` (or, with `part` None, given under a version after the one asked for)."""

    labeled: int | None
    part: str | None
    changed: int

    def reason(self) -> str:
        under = "labeled before versioning" if self.labeled is None else f"labeled under v{self.labeled}"
        if self.part is None:
            return f"{under}, after v{self.changed}"
        return f"{under}; {self.part} changed in v{self.changed}"


def stale_labels(project: Any, scheme: str, at: int | None = None) -> dict[tuple[str, str, str], Stale]:
    """(sample, unit, annotator) -> why that annotator's labels of the unit are not valid under version `at`
    (default: the current one); {} when the scheme has no guideline."""
    history = project.guidelines.guideline_history(scheme)
    if not history:
        return {}
    at = history[-1]["version"] if at is None else at
    changed = changes(history)
    units_of: dict[str, set[tuple[str, str]]] = {}
    samples_of: dict[str, set[str]] = {}

    def touched(part: str) -> tuple[set[tuple[str, str]], set[str]]:
        if part not in units_of:
            units_of[part] = affected(project, scheme, [part])
            samples_of[part] = {s for s, _ in units_of[part]}
        return units_of[part], samples_of[part]

    first = history[0]["version"]
    out: dict[tuple[str, str, str], Stale] = {}
    for sid, unit, kind, annotator, version in project.guidelines.label_guideline_versions(scheme):
        key = (sid, unit, annotator)
        if key in out or kind == "note":  # a note is free text, not a judgement under the guideline
            continue
        k = first if version is None else version
        if k > at:
            out[key] = Stale(version, None, at)
            continue
        for m in range(k + 1, at + 1):
            hit = next((p for p in changed.get(m, ()) if (sid in touched(p)[1] if unit == ""
                                                           else (sid, unit) in touched(p)[0])), None)
            if hit is not None:
                out[key] = Stale(version, hit, m)
                break
    return out


def stale_units(project: Any, schemes: Sequence[str]) -> dict[tuple[str, str], str]:
    """(sample, unit) -> why it is back in the queue (its labels predate a change of a part that affects it), over
    the current guideline of each scheme; a stale per-sample label (unit '', e.g. a curated ground truth) brings
    back the units of its sample that the changed part affects."""
    out: dict[tuple[str, str], str] = {}
    for scheme in schemes:
        by_part: dict[str, set[tuple[str, str]]] = {}
        for (sid, unit, _a), why in sorted(stale_labels(project, scheme).items()):
            if unit:
                out.setdefault((sid, unit), why.reason())
            elif why.part is not None:
                if why.part not in by_part:
                    by_part[why.part] = affected(project, scheme, [why.part])
                for key in sorted(k for k in by_part[why.part] if k[0] == sid):
                    out.setdefault(key, why.reason())
    return out


def check_version(project: Any, schemes: Sequence[str], version: int | None) -> dict[str, int]:
    """scheme -> the version asked for (default: each one's current) of the schemes that have a guideline;
    UsageError when a scheme lacks the version asked for."""
    out: dict[str, int] = {}
    for scheme in schemes:
        current = project.guidelines.guideline_version(scheme)
        if current is None:
            continue
        if version is not None and not 1 <= version <= current:
            raise UsageError(f"--guideline-version: scheme {scheme} has guideline versions 1 to {current}, "
                             f"not {version} (see `concord guideline PROJECT --scheme {scheme} history`; "
                             "--scheme limits the schemes it applies to)")
        out[scheme] = current if version is None else version
    return out


def under_version(project: Any, schemes: Sequence[str] | None, version: int | None
                  ) -> tuple[set[tuple[str, str, str]], dict[str, dict[str, Any]]]:
    """The (sample, unit, annotator) keys of labels not valid under `version` (default: each scheme's current) of
    the schemes asked for (None: every scheme) and, per scheme with a guideline, what was set aside: the version
    used, the current one, how many labels and the reasons counted, and the versions the labels kept were given
    under. UsageError when `version` is asked for and no such scheme has a guideline, or one lacks it."""
    names = [s for s in project.guidelines.guideline_schemes() if schemes is None or s in schemes]
    if version is not None and not names:
        raise UsageError("--guideline-version: " + ("none of the schemes asked for" if schemes else "no scheme")
                         + " has a guideline yet (store one with `concord guideline PROJECT --scheme S set FILE`)")
    keys: set[tuple[str, str, str]] = set()
    summary: dict[str, dict[str, Any]] = {}
    for scheme, at in check_version(project, names, version).items():
        found = stale_labels(project, scheme, at)
        keys |= set(found)
        reasons: dict[str, int] = defaultdict(int)
        for why in found.values():
            reasons[why.reason()] += 1
        kept = {v for s, u, k, a, v in project.guidelines.label_guideline_versions(scheme) if (s, u, a) not in found}
        summary[scheme] = {"version": at, "current": project.guidelines.guideline_version(scheme), "n_set_aside": len(found),
                           "set_aside": dict(sorted(reasons.items())),
                           "label_versions": [version_name(v) for v in sorted(kept, key=lambda v: v or 0)]}
    return keys, summary


@contextmanager
def valid_labels(project: Any, schemes: Sequence[str] | None, version: int | None
                 ) -> Iterator[dict[str, dict[str, Any]]]:
    """Within the block, the project's label reads give only labels valid under `version` (default: the current
    one of each scheme; `schemes` None: every scheme); yields the summary of `under_version` (for the output's
    `guideline` key)."""
    keys, summary = under_version(project, schemes, version)
    with project.guidelines.excluding_labels(keys):
        yield summary


def notes(summary: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per scheme with a guideline: the version its figures use and the labels set aside."""
    from app.names import terminal_safe  # part names are user text

    out = []
    for scheme, s in summary.items():
        line = f"{scheme}: labels valid under guideline v{s['version']}" + (
            " (current)" if s["version"] == s["current"] else f" (current: v{s['current']})")
        if s["n_set_aside"]:
            line += f"; set aside {s['n_set_aside']} annotator-unit labels: " + "; ".join(
                f"{n} {why}" for why, n in s["set_aside"].items())
        out.append(terminal_safe(line))
    return out
