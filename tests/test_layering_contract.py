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


# -- the scheme seam (issues #11, #25): a scheme lives in its two packages; everything else reaches it through the
# registry (calibration/schemes/base.py) and the loader (app/schemes/loader.py) -------------------------------------
SCHEMES = sorted(p.parent.name for p in (ROOT / "calibration" / "schemes").glob("*/scheme.py"))
# The registries' built-in lists ("module:attr" strings): the one place each layer names its built-in schemes.
BUILTIN_LISTS = {"calibration/schemes/base.py", "app/schemes/loader.py"}
RELEASED_MIGRATIONS = {"app/store/schema.py"}  # a released migration keeps the tables it created, named


def scheme_refs(path: Path) -> set[str]:
    """The schemes whose modules `path` imports (`calibration.schemes.X...`, `app.schemes.X...`, `from
    calibration.schemes import X`, `from app.schemes import X`, at any depth: a lazy import is still a dependency) or
    names as a module path in a string (an importlib lookup: "app.schemes.X.io", "calibration.schemes.X.scheme:S")."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and " " not in node.value:
            names = [node.value.partition(":")[0]]
        for name in names:
            parts = name.split(".")
            if parts[0] in ("app", "calibration") and parts[1:2] == ["schemes"] and len(parts) > 2 and parts[2] in SCHEMES:
                out.add(parts[2])
    return out


def owner(rel: str) -> str | None:
    """The scheme whose package holds `rel` (app/schemes/<scheme>/... or calibration/schemes/<scheme>/...)."""
    parts = rel.split("/")
    return parts[2] if len(parts) > 3 and parts[1] == "schemes" else None


def test_outside_its_packages_no_module_imports_a_scheme() -> None:
    """Outside app/schemes/<name>/ and calibration/schemes/<name>/ (and the built-in lists and released
    migrations), no module imports a scheme's module or looks one up by name; nor does one scheme import another."""
    assert {"violations", "rubric", "trace", "rgb", "addm"} <= set(SCHEMES)
    bad = []
    for top in ("app", "calibration"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in BUILTIN_LISTS | RELEASED_MIGRATIONS:
                continue
            bad += [f"{rel} names {s}" for s in sorted(scheme_refs(path) - {owner(rel)})]
    assert bad == []


def test_every_app_scheme_package_has_a_library_package_and_a_manifest() -> None:
    from app.schemes import loader

    packages = sorted(p.parent.name for p in (ROOT / "app" / "schemes").glob("*/__init__.py"))
    assert packages == sorted(loader.builtin()) and set(packages) <= set(SCHEMES)


def test_the_seam_checker_finds_a_planted_scheme_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from calibration.schemes import rubric\nfrom calibration.schemes.base import registry\n"
                   "def f():\n    from calibration.schemes.violations.config import PRESETS\n"
                   "    from app.schemes.trace import views\n"
                   "    importlib.import_module('app.schemes.rgb.io')\n"
                   "    registry_of('calibration.schemes.addm.scheme:SCHEME')\n")
    assert scheme_refs(bad) == {"rubric", "violations", "trace", "rgb", "addm"}
    assert owner("app/schemes/violations/store_configs.py") == "violations"
    assert owner("calibration/schemes/rubric/traits.py") == "rubric"
    assert owner("app/schemes/loader.py") is None and owner("calibration/schemes/base.py") is None
    assert scheme_part("app/schemes/violations/views_calibration.py") == "views"
    assert scheme_part("app/schemes/rubric/store.py") == "store" and scheme_part("app/gui/views/base.py") is None


# -- no scheme named as a string in generic code (issue #25 item 2) -------------------------------------------------
# (file, literal) -> why that string may stay. Exactly these: a new literal fails, and so does removing one without
# removing it here.
NAMED_ALLOWED: dict[tuple[str, str], str] = {
    ("app/commands/calibrate.py", "judge"): "the key of the `--judge NAME` calibrate option (a judge model, read by "
                                            "trace and judge), not the scheme",
}


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string statements (docstrings, and bare strings used as comments): prose, not code."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for st in body if isinstance(body, list) else ():  # (a lambda's body is one expression)
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                out.add(id(st.value))
    return out


def named_schemes(path: Path, schemes: tuple[str, ...] | list[str]) -> list[tuple[int, str]]:
    """(line, name) of each string literal in `path`'s code that is exactly a scheme's name (docstrings aside;
    comments are not in the AST)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    prose = _docstrings(tree)
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and type(node.value) is str and node.value in schemes
                  and id(node) not in prose)


def test_outside_its_packages_no_module_names_a_scheme_in_a_string() -> None:
    """Generic code asks the registry and the contributions; it never says "violations" or "rubric" itself (the
    schemes' own packages, the registries' built-in lists and the released migrations aside)."""
    assert {"violations", "rubric", "trace", "rgb", "addm", "judge"} <= set(SCHEMES)
    found: dict[tuple[str, str], list[int]] = {}
    for top in ("app", "calibration"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if owner(rel) is not None or rel in BUILTIN_LISTS | RELEASED_MIGRATIONS:
                continue
            for line, name in named_schemes(path, SCHEMES):
                found.setdefault((rel, name), []).append(line)
    bad = [f"{rel}:{lines[0]} names {name!r}" for (rel, name), lines in sorted(found.items())
           if (rel, name) not in NAMED_ALLOWED]
    assert bad == []
    assert sorted(set(NAMED_ALLOWED) - set(found)) == []  # an allowance no longer needed is removed


def test_the_named_scheme_checker_finds_planted_names(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text('"""Counts violations and rubric samples."""\nTRAITS = "rubric"  # violations\n'
                   'def f(report):\n    """The violations."""\n    return report["violations"], "trace samples"\n')
    assert named_schemes(bad, SCHEMES) == [(2, "rubric"), (5, "violations")]


# -- no private name taken from another module (issue #25 item 3) --------------------------------------------------
def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(roots: tuple[str, ...] = ("app", "calibration"), base: Path = ROOT) -> list[str]:
    """`file:line name` for each `from X import _name` and `X._name` (X a project module bound by an import) where X
    is another module: a name one module shares with others is public, so renaming a private one breaks nothing."""
    paths = {module_name(p, base): p for r in roots for p in (base / r).rglob("*.py")}
    bad = []
    for mod, path in sorted(paths.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        rel = path.relative_to(base).as_posix()
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        bound: set[str] = set()  # local names of imported project modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                src = node.module or ""
                if node.level:
                    src = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                if _top(src) not in roots:
                    continue
                bad += [f"{rel}:{node.lineno} {src}.{a.name}" for a in node.names if _private(a.name) and src != mod]
                bound.update(a.asname or a.name for a in node.names if f"{src}.{a.name}" in paths)
            elif isinstance(node, ast.Import):
                bound.update(a.asname or _top(a.name) for a in node.names if _top(a.name) in roots)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _private(node.attr):
                root = node.value
                while isinstance(root, ast.Attribute):
                    root = root.value
                if isinstance(root, ast.Name) and root.id in bound:
                    bad.append(f"{rel}:{node.lineno} {ast.unparse(node)}")
    return bad


def test_no_module_takes_another_modules_private_names() -> None:
    assert private_uses() == []


def test_the_private_name_checker_finds_planted_uses(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def _helper(): pass\ndef __getattr__(n): pass\ndef f():\n    from pkg.a import _helper\n")
    (pkg / "b.py").write_text("from pkg.a import _helper, __getattr__\nimport pkg.a\nfrom pkg import a\n"
                              "def f(self):\n    from . import a as other\n    return other._helper, pkg.a._helper, "
                              "a._helper, self._x\n")
    assert private_uses(("pkg",), tmp_path) == ["pkg/b.py:1 pkg.a._helper", "pkg/b.py:6 other._helper",
                                                "pkg/b.py:6 pkg.a._helper", "pkg/b.py:6 a._helper"]


# -- no import cycle, counting imports inside functions (issue #25) -------------------------------------------------
def module_name(path: Path, base: Path = ROOT) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """Nodes under `if TYPE_CHECKING:` (annotations only: never run, so no runtime dependency)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            out.update(id(k) for stmt in node.body for k in ast.walk(stmt))
    return out


def import_graph(roots: tuple[str, ...] = ("app", "calibration"), base: Path = ROOT) -> dict[str, set[str]]:
    """module -> the project modules it imports: at module level or inside functions (TYPE_CHECKING blocks aside).
    `from pkg import name` depends on pkg.name when that is a module, else on pkg; importing a.b.c also runs the
    packages a.b (unless the importer is inside it: then it is already running)."""
    paths = {module_name(p, base): p for r in roots for p in (base / r).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in paths}
    for mod, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        skip = _type_checking_nodes(tree)
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                src = node.module or ""
                if node.level:
                    src = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in paths else src for a in node.names]
            for target in targets:
                if target not in paths:
                    continue
                parts = target.split(".")
                parents = [".".join(parts[:i]) for i in range(1, len(parts))]
                graph[mod].update(t for t in (target, *parents)
                                  if t in paths and t != mod and not mod.startswith(t + "."))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return sorted(out)


def test_no_import_cycle_even_inside_functions() -> None:
    assert cycles(import_graph()) == []


def is_command_module(mod: str) -> bool:
    """A CLI module: app.commands.*, app.cli*, or a scheme's own commands (app.schemes.<name>.commands)."""
    parts = mod.split(".")
    return (parts[:2] == ["app", "commands"] or (len(parts) == 2 and parts[0] == "app" and parts[1].startswith("cli"))
            or (len(parts) == 4 and parts[:2] == ["app", "schemes"] and parts[3] == "commands"))


def command_imports(graph: dict[str, set[str]]) -> list[str]:
    """`X imports app.commands...` for every module outside the CLI that imports a command module: commands sit on
    top (they parse arguments and run console loops); what they share lives below them (app/cli_*.py, services)."""
    return sorted(f"{mod} imports {t}" for mod, targets in graph.items() if not is_command_module(mod)
                  for t in targets if t == "app.commands" or t.startswith("app.commands."))


def test_only_the_cli_imports_command_modules() -> None:
    assert command_imports(import_graph()) == []


def test_the_command_checker_finds_a_planted_import(tmp_path: Path) -> None:
    for rel, text in {"app/__init__.py": "", "app/commands/__init__.py": "", "app/commands/assign.py": "",
                      "app/cli_progress.py": "from app.commands import assign\n",
                      "app/schemes/__init__.py": "", "app/schemes/toy/__init__.py": "",
                      "app/schemes/toy/commands.py": "from app.commands.assign import x\n",
                      "app/schemes/toy/llm.py": "def f():\n    from app.commands.assign import x\n"}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    graph = import_graph(("app",), tmp_path)
    assert command_imports(graph) == ["app.schemes.toy.llm imports app.commands",
                                      "app.schemes.toy.llm imports app.commands.assign"]


def test_the_cycle_checker_finds_a_planted_cycle_inside_a_function(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (pkg / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    from pkg import b\ndef g():\n    from . import a\n")
    (pkg / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n")
    graph = import_graph(("pkg",), tmp_path)
    assert graph["pkg.c"] == {"pkg.a"} and graph["pkg.d"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


# -- the project is composed of parts, not mixins (issue #25 item 3) ------------------------------------------------
def _part_names() -> dict[str, type]:
    from functools import cached_property

    from app.store import Project

    return {name: attr.func for name, attr in vars(Project).items() if isinstance(attr, cached_property)}


def test_project_inherits_only_project_base_and_lists_its_parts() -> None:
    from app.store import Project
    from app.store.parts import ProjectPart
    from app.store.project import ProjectBase

    assert Project.__bases__ == (ProjectBase,) and Project.__mro__ == (Project, ProjectBase, object)
    parts = _part_names()
    assert {"samples", "scheme_data", "counts", "decisions", "units", "assignments", "reveals", "guidelines", "caches",
            "artifacts", "bulk"} <= set(parts)
    assert all(isinstance(cls, type) and issubclass(cls, ProjectPart) for cls in parts.values()), parts
    # a part's name is no attribute of the base, and no part has a method of that name (`project.<part>.<method>`
    # reads one way); no two parts have a public method of the same name
    assert not set(parts) & set(dir(ProjectBase))
    owners: dict[str, list[str]] = {}
    for name, cls in parts.items():
        for method in vars(cls):
            if not method.startswith("_"):
                owners.setdefault(method, []).append(name)
    assert not set(parts) & set(owners)
    assert {m: o for m, o in owners.items() if len(o) > 1} == {}


def test_no_mixin_class_is_left_in_the_store() -> None:
    from app.store.project import ProjectBase

    found = [f"{path.relative_to(ROOT).as_posix()}:{node.lineno} {node.name}"
             for path in sorted((ROOT / "app" / "store").glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.ClassDef) and (node.name.endswith("Mixin") or any(
                 ast.unparse(b) == ProjectBase.__name__ for b in node.bases) and node.name != "Project")]
    assert found == []


def test_each_part_is_built_once_and_writes_in_the_callers_transaction(tmp_path: Path) -> None:
    import pytest

    from app.store import Project
    from app.store.parts import ProjectPart

    with Project.create(tmp_path / "p.concord") as project:
        for name in _part_names():
            part = getattr(project, name)
            assert isinstance(part, ProjectPart) and part.project is project and getattr(project, name) is part
        with pytest.raises(RuntimeError), project.transaction():
            project.decisions.ensure_annotator("ana")
            project.assignments.set_blind(True)
            raise RuntimeError("the caller's transaction fails")
        assert project.decisions.annotators() == [] and project.get_meta("blind") is None
        project.decisions.ensure_annotator("ana")
        assert project.decisions.annotators() == ["ana"]
