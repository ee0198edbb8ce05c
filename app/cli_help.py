"""Help-text pieces taken from the scheme registry (issue #25 item 2), so that `--help` names every registered scheme
and what it accepts instead of a hard-coded two. They read `calibration.schemes.base.scheme_infos()`: the built-in
schemes' manifests, which import nothing heavy, so building a command's help stays fast."""
from __future__ import annotations

import textwrap
from collections.abc import Collection

from calibration.schemes.base import SchemeInfo, scheme_infos

WIDTH = 116


def fill(text: str) -> str:
    """A description wrapped for the commands whose help keeps its own line breaks (RawDescriptionHelpFormatter)."""
    return textwrap.fill(text, WIDTH, break_on_hyphens=False)


def names(among: Collection[str] | None = None) -> str:
    """'violations, rubric, trace, rgb and addm': the registered schemes (those in `among` only, when given)."""
    found = [i.name for i in scheme_infos() if among is None or i.name in among]
    return found[0] if len(found) == 1 else f"{', '.join(found[:-1])} and {found[-1]}" if found else "none registered"


def suffixes() -> list[str]:
    """Every file name ending some registered scheme's import reads, in registry order."""
    return list(dict.fromkeys(s for i in scheme_infos() for s in i.file_suffixes))


def suffix_list() -> str:
    found = suffixes()
    return found[0] if len(found) == 1 else f"{', '.join(found[:-1])} or {found[-1]}"


def _item(head: str, text: str) -> str:
    return textwrap.fill(text, WIDTH, initial_indent=f"  {head}: ", subsequent_indent="      ", break_on_hyphens=False)


def accepts_block(title: str = "what each registered scheme's import reads:") -> str:
    """One paragraph per scheme: its name, what it accepts and the file endings."""
    return "\n".join([title, *(_item(i.name, f"{i.accepts} ({', '.join(i.file_suffixes)})") for i in scheme_infos())])


def llm_runs() -> list[SchemeInfo]:
    """The schemes that declare an LLM run (`concord assign --scheme NAME`)."""
    return [i for i in scheme_infos() if i.llm_run]


def llm_block() -> str:
    return "\n".join(["LLM runs of the registered schemes (--scheme NAME):",
                      *(_item(i.name, i.llm_run) for i in llm_runs())])
