"""The scheme contracts and loader (issue #25 item 1): every built-in scheme's contributions load and satisfy their
contracts; a contribution missing a member, defining an undeclared hook or declaring an unknown one is refused with
a message naming the scheme and the member; manifests come from entry points like built-ins."""
from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from app.schemes import contracts, loader
from app.schemes.contracts import Contribution, ContractError, IOPart, Manifest, StorePart
from calibration.schemes import base
from calibration.schemes.base import registry


def test_every_builtin_contribution_satisfies_its_contract() -> None:
    loader.check_all()
    assert [m.name for m in loader.builtin().values()] == [n for n in registry().names() if n in loader.builtin()]
    assert loader.io("violations").prepare is not None and loader.io("trace").prepare is None
    assert loader.io("rgb").read_file is not None and loader.io("trace").default_dataset is not None
    rgb = loader.store("rgb")  # stored generically (no tables, no part), read back by its own reader
    assert rgb.load_records is not None and rgb.part is None and rgb == StorePart("rgb", module=rgb.module,
                                                                                 load_records=rgb.load_records)
    assert loader.store("trace").item_records is not None and loader.store("trace").part is None  # one read only
    assert loader.store("violations").load_params is not None
    assert loader.assigner("addm") is None and loader.assigner("rubric") is not None
    assert {"traits", "generate"} <= set(loader.commands())


def _module(monkeypatch: pytest.MonkeyPatch, name: str, **members: object) -> str:
    module = ModuleType(name)
    vars(module).update(members)
    monkeypatch.setitem(sys.modules, name, module)
    return name


def _noop(*args: object) -> None:
    return None


def _build(monkeypatch: pytest.MonkeyPatch, provides: set[str], **members: object) -> IOPart:
    name = _module(monkeypatch, "toy_contract_io", **members)
    m = Manifest("toy_contract", "toy_contract_scheme:SCHEME", {"io": Contribution(name, provides)})
    assert contracts.problems_of(m) == []
    part = contracts.build_part(m, "io", sys.modules[name])
    assert isinstance(part, IOPart)
    return part


def test_a_missing_required_member_names_the_scheme_and_member(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ContractError, match=r"scheme toy_contract: io contribution \(toy_contract_io\) lacks `check`"):
        _build(monkeypatch, set(), collect=_noop)


def test_a_declared_hook_must_exist_and_an_undeclared_one_must_not(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ContractError, match="lacks `read_file`"):
        _build(monkeypatch, {"read_file"}, check=_noop, collect=_noop)
    with pytest.raises(ContractError, match="defines `read_file` but its manifest does not declare it"):
        _build(monkeypatch, set(), check=_noop, collect=_noop, read_file=_noop)
    part = _build(monkeypatch, {"read_file", "export"}, check=_noop, collect=_noop, read_file=_noop, EXPORT="toys")
    assert part.read_file is _noop and part.export == "toys" and part.prepare is None


def test_manifest_problems_are_found_before_anything_is_imported() -> None:
    m = Manifest("toy", "toy:SCHEME", {"io": Contribution("no.such.module", {"prepare", "teleport"}),
                                       "gadgets": Contribution("no.such.module")})
    problems = contracts.problems_of(m)
    assert any("declares unknown hooks `teleport`" in p for p in problems)
    assert any("declares `prepare` without `write_prepared`" in p for p in problems)
    assert any("unknown contribution 'gadgets'" in p for p in problems)
    with pytest.raises(ContractError, match="teleport"):
        loader.register(m)
    # no scheme mixes classes into Project any more (issue #25 item 3): `mixins` is no hook of the contract
    mixed = Manifest("toy", "toy:SCHEME", {"store": Contribution("no.such.module", {"mixins"})})
    assert any("declares unknown hooks `mixins`" in p for p in contracts.problems_of(mixed))
    with pytest.raises(ContractError, match="mixins"):
        loader.register(mixed)


def test_a_manifest_from_an_entry_point_is_found_like_a_builtin(monkeypatch: pytest.MonkeyPatch) -> None:
    toy_scheme = SimpleNamespace(name="toy_ep")
    _module(monkeypatch, "toy_ep_scheme", SCHEME=toy_scheme)
    io = _module(monkeypatch, "toy_ep_io", check=_noop, collect=_noop)
    manifest = Manifest("toy_ep", "toy_ep_scheme:SCHEME", {"io": Contribution(io)})
    ep = SimpleNamespace(name="toy_ep", value="toy_ep_manifest:MANIFEST", load=lambda: manifest)
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [ep] if group == loader.ENTRY_POINT_GROUP else [])
    monkeypatch.setattr(loader, "_entry_points_loaded", False)
    monkeypatch.setattr(loader, "_plugins", {})
    monkeypatch.setattr(loader, "_parts", {})
    assert loader.manifest("toy_ep") is manifest
    assert loader.io("toy_ep").check is _noop
    assert loader.has("toy_ep", "io") and not loader.has("toy_ep", "views")
    # the calibration registry takes the Scheme from the manifest an entry point names
    assert isinstance(manifest, base.SchemeSource) and manifest.load_scheme() is toy_scheme


def test_project_inherits_no_scheme_class_and_composes_their_stores(tmp_path: Path) -> None:
    """Issue #25 item 3: a scheme's store is a part built with the project (`project.store(name)`), once per project;
    it reads on a project opened read-only (a backup), where no write transaction may be opened."""
    from app.store import Project

    assert [c for c in Project.__mro__ if c.__module__.startswith("app.schemes.")] == []
    stored = [name for name in loader.builtin() if loader.store(name).part is not None]
    assert {"violations", "rubric"} <= set(stored)
    with Project.create(tmp_path / "p.concord") as p:
        for name in stored:
            part = p.store(name)
            assert isinstance(part, loader.store(name).part) and part.project is p and p.store(name) is part
        p.store("rubric").write_traits([{"name": "dose", "metrics": ["recall"]}])
        backup = p.backup("test")
    with Project.open(backup) as old:
        assert old.readonly
        assert old.store("rubric").get_trait("dose") == {"name": "dose", "metrics": ["recall"]}
        assert old.store("violations").violation_samples() == []
    with Project.create(tmp_path / "q.concord") as q, pytest.raises(KeyError, match="keeps no tables of its own"):
        q.store("trace")


def test_optional_scheme_members_are_declared_capabilities() -> None:
    """Issue #25 item 1: a scheme's optional members (evaluate, search_problem, calibrates, check_options) are read
    in one place, `base.capabilities`, with their declared defaults; a wrong type is refused at registration."""
    can = {name: base.capabilities(registry().get(name)) for name in registry().names()}
    assert can["rubric"].calibrates is False and can["trace"].calibrates is True
    assert can["violations"].check_options is not None and can["trace"].check_options is None
    assert all(c.evaluate is not None and c.search_problem is not None for c in can.values())
    bare = base.capabilities(SimpleNamespace(name="bare"))  # type: ignore[arg-type]
    assert bare == base.Capabilities() and bare.calibrates and bare.evaluate is None
    with pytest.raises(base.SchemeError, match="`calibrates` must be True or False"):
        base.register(SimpleNamespace(name="odd", calibrates="no"))  # type: ignore[arg-type]
    with pytest.raises(base.SchemeError, match="`check_options` must be callable"):
        base.register(SimpleNamespace(name="odd", check_options="yes"))  # type: ignore[arg-type]
    assert "odd" not in registry()


def test_no_generic_module_probes_a_scheme_or_problem_for_an_optional_member() -> None:
    """`getattr(x, "evaluate"|"search_problem"|"calibrates"|"check_options"|"objective", ...)` only where the
    contract declares those members (calibration/schemes/base.py, calibration/search/problem.py)."""
    import ast

    root = Path(__file__).resolve().parent.parent
    names = {*base.OPTIONAL_MEMBERS, "objective"}
    declared = {"calibration/schemes/base.py", "calibration/search/problem.py"}
    found = []
    for path in sorted((root / "app").rglob("*.py")) + sorted((root / "calibration").rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and node.args[1].value in names
                    and rel not in declared):
                found.append(f"{rel}:{node.lineno}")
    assert found == []
