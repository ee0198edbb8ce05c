"""Finds every scheme's app contributions one way, and checks them against app/schemes/contracts.py.

A scheme's app side is described by its `Manifest` (app/schemes/contracts.py). Built-in schemes list theirs in
`BUILTIN` ("module:attr", in the order menus and reports show them); a separately installed package adds one
through the `concord.schemes` entry-point group (`binary = "pkg.manifest:MANIFEST"`; the calibration registry reads
the same group and takes the Scheme from the manifest); tests and notebooks call `register(manifest)`.

Manifests are cheap (strings); a contribution's module is imported the first time generic code asks for it, and
checked then: a missing member is a ContractError naming the scheme and the member ("scheme X: io contribution
lacks `check`"). `check_all()` loads and checks everything at once (the GUI's start, and the tests). Generic code
gets typed parts (`io(name)`, `store(name)`, ...) whose undeclared hooks are None: it never probes a module.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from app.schemes.manifest import Command, ContractError, ImportOption, Manifest

if TYPE_CHECKING:  # imported when a contribution is first loaded: the top-level help reads manifests only
    from app.schemes.contracts import GuidelinePart, IOPart, Part, StorePart

ENTRY_POINT_GROUP = "concord.schemes"
BUILTIN: tuple[str, ...] = (
    "app.schemes.violations:MANIFEST",
    "app.schemes.rubric:MANIFEST",
    "app.schemes.trace:MANIFEST",
    "app.schemes.rgb:MANIFEST",
    "app.schemes.addm:MANIFEST",
    "app.schemes.judge:MANIFEST",
)

_builtin: dict[str, Manifest] = {}
_plugins: dict[str, Manifest] = {}  # entry points and register()
_entry_points_loaded = False
_parts: dict[tuple[str, str], Part | None] = {}


def _object(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _checked(manifest: Any, where: str) -> Manifest:
    """The manifest, checked as declared (kinds, hook names, pairs) before any of its modules is imported."""
    from app.schemes.contracts import problems_of

    if not isinstance(manifest, Manifest):
        raise ContractError(f"{where}: expected an app.schemes.manifest.Manifest, got {type(manifest).__name__}")
    problems = problems_of(manifest)
    if problems:
        raise ContractError("; ".join(problems))
    return manifest


def _typed(manifest: Any, where: str) -> Manifest:
    if not isinstance(manifest, Manifest):
        raise ContractError(f"{where}: expected an app.schemes.manifest.Manifest, got {type(manifest).__name__}")
    return manifest


def builtin() -> dict[str, Manifest]:
    """The built-in manifests (importing only the scheme packages' small __init__ modules; each is checked against
    the contracts when its first contribution is loaded, so the top-level help imports no contract code)."""
    if not _builtin:
        for spec in BUILTIN:
            m = _typed(_object(spec), spec)
            _builtin[m.name] = m
    return _builtin


def _load_entry_points() -> None:
    """Manifests of installed packages (`concord.schemes` entry points whose object is a Manifest; one that names a
    bare Scheme has no app side and is imported, stored and shown generically)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        obj = ep.load()
        if isinstance(obj, Manifest):
            m = _checked(obj, f"entry point {ep.name}")
            if m.name in builtin() or (m.name in _plugins and _plugins[m.name] is not m):
                raise ContractError(f"scheme {m.name}: two manifests (entry point {ep.value})")
            _plugins[m.name] = m


def manifests() -> list[Manifest]:
    """Every manifest: built-ins first, then installed and registered ones."""
    _load_entry_points()
    return [*builtin().values(), *_plugins.values()]


def manifest(name: str) -> Manifest | None:
    found = builtin().get(name) or _plugins.get(name)
    if found is None and not _entry_points_loaded:
        _load_entry_points()
        found = _plugins.get(name)
    return found


def register(m: Manifest, scheme: Any = None, *, replace: bool = False) -> Manifest:
    """Add a scheme's app side (and its Scheme to the calibration registry: `scheme`, else the manifest's)."""
    from calibration.schemes.base import registry

    _checked(m, f"register({m.name!r})")
    if m.name in builtin() and not replace:
        raise ContractError(f"scheme {m.name}: a built-in scheme's manifest cannot be replaced")
    registry().register(scheme if scheme is not None else m.load_scheme(), replace=replace)
    _plugins[m.name] = m
    _forget(m.name)
    return m


def unregister(name: str) -> None:
    from calibration.schemes.base import registry

    _plugins.pop(name, None)
    _forget(name)
    registry().unregister(name)


def _forget(name: str) -> None:
    for key in [k for k in _parts if k[0] == name]:
        del _parts[key]


def part(name: str, kind: str) -> Part | None:
    """The checked contribution `kind` of scheme `name`, or None when it declares none (imported on first use)."""
    key = (name, kind)
    if key not in _parts:
        from app.schemes.contracts import build_part

        m = manifest(name)
        contribution = m.contributions.get(kind) if m is not None else None
        if m is None or contribution is None:
            _parts[key] = None
        else:
            _checked(m, f"scheme {name}")
            module, _, attr = contribution.module.partition(":")
            found = importlib.import_module(module)
            if attr and attr not in vars(found):
                raise ContractError(f"scheme {name}: {kind} contribution: {module} has no `{attr}`")
            _parts[key] = build_part(m, kind, vars(found)[attr] if attr else found)
    return _parts[key]


def io(name: str) -> IOPart:
    """The scheme's import rules; a scheme without any is imported generically (every hook None)."""
    from app.schemes.contracts import IOPart

    found = part(name, "io")
    return found if isinstance(found, IOPart) else IOPart(name)


def store(name: str) -> StorePart:
    """What the scheme keeps in tables of its own; every hook None for a scheme stored generically."""
    from app.schemes.contracts import StorePart

    found = part(name, "store")
    return found if isinstance(found, StorePart) else StorePart(name)


def bulk_tables() -> tuple[str, ...]:
    """Every scheme's tables a bulk import fills (its store contribution's BULK_TABLES), for app/store/bulk.py."""
    return tuple(t for m in manifests() for t in store(m.name).bulk_tables)


def view(name: str) -> type | None:
    from app.schemes.contracts import ViewPart

    found = part(name, "views")
    return found.view if isinstance(found, ViewPart) else None


def assigner(name: str) -> Any:
    """`assign_cli` of the scheme's LLM run, or None."""
    from app.schemes.contracts import LLMPart

    found = part(name, "llm")
    return found.assign_cli if isinstance(found, LLMPart) else None


def guideline(name: str) -> GuidelinePart:
    """How the scheme splits its guideline and which units a part affects; every hook None for a scheme with none
    (app/services/guidelines.py then splits on headings and lets every part affect every unit)."""
    from app.schemes.contracts import GuidelinePart

    found = part(name, "guideline")
    return found if isinstance(found, GuidelinePart) else GuidelinePart(name)


def has(name: str, kind: str) -> bool:
    """Whether the scheme declares a contribution of `kind` (nothing is imported)."""
    m = manifest(name)
    return m is not None and kind in m.contributions


def commands(plugins: bool = False) -> dict[str, tuple[str, Command]]:
    """{command: (module, Command)} of the schemes' own commands, from the manifests alone (no import). Built-ins
    only unless `plugins` (reading entry points costs a scan of site-packages: done when a command is not found)."""
    found = manifests() if plugins else list(builtin().values())
    return {c.name: (m.contributions["commands"].module, c) for m in found for c in m.commands}


def import_options(names: Any = None) -> dict[str, ImportOption]:
    """{name: option} of the import options the schemes' io contributions declare (all schemes, or those in `names`),
    from the manifests alone (no import); the first scheme declaring a name gives its help and refusal."""
    out: dict[str, ImportOption] = {}
    for m in manifests():
        io_part = m.contributions.get("io")
        if io_part is not None and (names is None or m.name in names):
            for o in io_part.options:
                out.setdefault(o.name, o)
    return out


def register_commands(module: str, subparsers: Any) -> None:
    """Register the commands of a scheme's commands module, checked against its contract."""
    for m in [*builtin().values(), *manifests()]:
        c = m.contributions.get("commands")
        if c is not None and c.module == module:
            from app.schemes.contracts import CommandsPart

            found = part(m.name, "commands")
            assert isinstance(found, CommandsPart) and found.register is not None  # build_part checked it
            found.register(subparsers)
            return
    raise ContractError(f"{module}: not the commands contribution of any scheme")


def check_all() -> None:
    """Load every contribution of every manifest and check it (ContractError listing every problem), and that
    every manifest's scheme is registered under the manifest's name."""
    from calibration.schemes.base import registry

    problems = []
    for m in manifests():
        try:
            _checked(m, f"scheme {m.name}")
        except ContractError as exc:
            problems.append(str(exc))
            continue
        if m.name not in registry():
            problems.append(f"scheme {m.name}: has a manifest but no registered Scheme")
        for kind in m.contributions:
            try:
                part(m.name, kind)
            except (ContractError, ImportError) as exc:
                problems.append(str(exc))
    if problems:
        raise ContractError("; ".join(problems))
