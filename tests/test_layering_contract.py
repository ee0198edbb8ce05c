"""The layering rules, checked over the AST of every module (issue #11 item 6): calibration/ imports no app, Qt,
SQL or openai; SQL (sqlite3, sqlite_utils) only in app/store/; Qt (PySide6) only in app/gui/. Imports inside
functions count too: a lazy import is still a dependency."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QT = ("PySide6", "shiboken6")
SQL = ("sqlite3", "sqlite_utils")


def imports(path: Path) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
    return out


def _top(name: str) -> str:
    return name.split(".")[0]


def scheme_part(rel: str) -> str | None:
    """`views`, `store`, ... for app/schemes/<scheme>/<part>[_more].py (a scheme's own module of that part), else None."""
    parts = rel.split("/")
    if len(parts) == 4 and parts[:2] == ["app", "schemes"]:
        return parts[3].removesuffix(".py").split("_")[0]
    return None


def violations_of(package: str, allowed: dict[str, str], forbidden: tuple[str, ...]) -> list[str]:
    """`file:line imports X` for each forbidden top-level package imported outside the folder allowed for it (or,
    for Qt and SQL, outside a scheme's own views / store modules: app/schemes/<scheme>/views*.py, store*.py)."""
    bad = []
    own = {**{m: "views" for m in QT}, **{m: "store" for m in SQL}}
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        for line, name in imports(path):
            top = _top(name)
            if top in own and scheme_part(rel) == own[top]:
                continue
            if top in forbidden and not rel.startswith(allowed.get(top, "\0")):
                bad.append(f"{rel}:{line} imports {name}")
    return bad


def test_calibration_imports_no_app_qt_sql_or_openai() -> None:
    assert violations_of("calibration", {}, ("app", "openai", *QT, *SQL)) == []


# Known, reported breaches (exactly these: a new one fails, and so does fixing one without removing it here).
KNOWN: list[str] = []


def test_sql_only_in_the_store_and_qt_only_in_the_gui() -> None:
    allowed = {**{m: "app/store/" for m in SQL}, **{m: "app/gui/" for m in QT}}
    assert violations_of("app", allowed, (*QT, *SQL)) == KNOWN


def test_the_checker_finds_a_planted_violation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    import sqlite3\n    from PySide6.QtCore import Qt\n")
    assert imports(bad) == [(2, "sqlite3"), (3, "PySide6.QtCore")]


# -- the scheme seam (issue #11): generic app modules reach a scheme through the registry ------------------------
SCHEMES = sorted(p.parent.name for p in (ROOT / "calibration" / "schemes").glob("*/scheme.py"))
# Commands that are one scheme's own, with the reason in their docstring.
SCHEME_COMMANDS: set[str] = set()
# Generic modules still importing a scheme while their owners move the code (may only shrink).
PENDING = {"app/io/parallel.py", "app/io/records.py"}


def scheme_imports(path: Path) -> set[str]:
    """The schemes whose calibration package `path` imports (`calibration.schemes.X...` or `from calibration.schemes
    import X`)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[:2] == ["calibration", "schemes"] and len(parts) > 2 and parts[2] in SCHEMES:
                out.add(parts[2])
    return out


def is_adapter(rel: str, scheme: str) -> bool:
    """app/<layer>/schemes/<scheme>*.py or app/llm/<scheme>*.py: a module named after the scheme it adapts."""
    parts = rel.split("/")
    if parts[:3] == ["app", "schemes", scheme]:
        return True
    named = parts[-1].startswith(scheme)
    return named and (parts[-2] == "schemes" or parts[:2] == ["app", "llm"])


def test_generic_app_modules_import_no_scheme() -> None:
    assert {"violations", "rubric"} <= set(SCHEMES)
    bad = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("app/gui/") or rel in SCHEME_COMMANDS or rel in PENDING:
            continue
        bad += [f"{rel} imports calibration.schemes.{s}" for s in sorted(scheme_imports(path)) if not is_adapter(rel, s)]
    assert bad == []


def is_view(rel: str, scheme: str) -> bool:
    """app/gui/views/<scheme>*.py: the scheme's view and the modules it owns (scoring, calibration page, tables)."""
    parts = rel.split("/")
    if parts[:3] == ["app", "schemes", scheme]:
        return scheme_part(rel) == "views"
    return parts[:3] == ["app", "gui", "views"] and len(parts) == 4 and parts[3].startswith(scheme)


def test_generic_gui_modules_import_no_scheme() -> None:
    """The window, panels and embedding helper reach a scheme through the view registry's hooks (config_choice,
    calibration_page, score_task, ...); only a scheme's own view modules import its calibration package."""
    assert is_view("app/schemes/violations/views_calibration.py", "violations")
    assert is_view("app/schemes/rubric/views.py", "rubric")
    assert not is_view("app/gui/calibration_panel.py", "violations") and not is_view("app/gui/views/base.py", "rubric")
    bad = []
    for path in sorted((ROOT / "app" / "gui").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        bad += [f"{rel} imports calibration.schemes.{s}" for s in sorted(scheme_imports(path)) if not is_view(rel, s)]
    assert bad == []


def test_the_seam_checker_finds_a_planted_scheme_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from calibration.schemes import rubric\nfrom calibration.schemes.base import registry\n"
                   "def f():\n    from calibration.schemes.violations.config import PRESETS\n")
    assert scheme_imports(bad) == {"rubric", "violations"}
    assert is_adapter("app/schemes/violations/store_configs.py", "violations")
    assert is_adapter("app/schemes/rubric/llm_assigner.py", "rubric")
    assert not is_adapter("app/llm/assigner.py", "rubric") and not is_adapter("app/io/demo.py", "violations")
