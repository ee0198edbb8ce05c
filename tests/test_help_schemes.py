"""Help texts take their nouns from the scheme registry (issue #25 item 2): `import`, `export`, `assign` and `demo
--help` name every registered scheme and what it accepts, read from the schemes' cheap manifests."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.cli import build_parser
from calibration.schemes.base import COMMON_KINDS, GENERIC_SUFFIXES, info, registry, scheme_infos

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "pandas", "scipy", "sklearn", "torch", "PySide6", "pyarrow", "openai")


def help_text(command: str) -> str:
    parser = build_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return " ".join(sub.choices[command].format_help().split())  # one line: wrapping may split any phrase


def flat(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Toy:
    """A plug-in scheme as a test module would define it: only what help texts read is needed here."""

    name: str = "toyscheme"
    title: str = "Toy"
    unit_noun: str = "grader"
    accepts: str = "toy records: a prompt and each grader's confidence"
    file_suffixes: tuple[str, ...] = (*GENERIC_SUFFIXES, ".toy")
    llm_run: str = "toy grades from a chat model"
    label_kinds = COMMON_KINDS


@dataclass(frozen=True)
class Older:
    """A plug-in written before `accepts`, `file_suffixes` and `llm_run` were declared."""

    name: str = "olderscheme"
    title: str = "Older Toy"
    unit_noun: str = "judge"
    label_kinds = COMMON_KINDS


@pytest.fixture
def plugins() -> Iterator[list[object]]:
    added = [registry().register(Toy()), registry().register(Older())]
    yield added
    for s in added:
        registry().unregister(s.name)


def test_every_registered_scheme_is_named_with_what_it_accepts(plugins: list[object]) -> None:
    import_help, export_help, assign_help = help_text("import"), help_text("export"), help_text("assign")
    for s in (info(x) for x in registry()):
        for text in (import_help, export_help):
            assert s.name in text and flat(s.accepts) in text, (s.name, text)
        for suffix in s.file_suffixes:
            assert suffix in import_help
        # listed as "NAME: what it assigns" (a bare substring would find `judge` in the `--judge` flag)
        assert (f" {s.name}: " in f" {assign_help}" and flat(s.llm_run) in assign_help) == bool(s.llm_run), s.name
    assert "Older Toy records" in import_help  # described from its title
    assert ".toy" in import_help


def test_help_names_every_built_in_scheme() -> None:
    """In this process every built-in is registered: the four texts say what each one is."""
    demo = help_text("demo")
    for s in (info(x) for x in registry()):
        assert s.name in demo  # the demo holds every built-in scheme's samples
        assert flat(s.accepts) in help_text("import")
    assert "violations or rubric" not in help_text("import")
    assert any(i.name == "rgb" and ".json" in i.file_suffixes for i in scheme_infos())
    assert ".json" in help_text("import")  # RGB's and ADDM's own files


def test_manifests_match_the_schemes_and_load_nothing_heavy() -> None:
    """Before the registry loads, the built-ins' manifests describe them exactly as the loaded schemes do, and
    reading them (and building `concord import --help`) imports no numpy, pandas or scipy."""
    code = ("import json, sys\nfrom dataclasses import asdict\n"
            "from calibration.schemes.base import scheme_infos, registry, info\n"
            "from app.cli import main\n"
            "try:\n    main(['import', '--help'])\nexcept SystemExit:\n    pass\n"
            "early = [asdict(i) for i in scheme_infos()]\n"
            f"heavy = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
            "late = [asdict(info(s)) for s in registry()]\n"
            "print(json.dumps([early, late, heavy], default=list))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    early, late, heavy = json.loads(out.stdout.strip().splitlines()[-1])
    assert heavy == []
    assert early == late and [i["name"] for i in early] == registry().names()[:len(early)]
