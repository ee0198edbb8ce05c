"""Each scheme's app side, one package per scheme (`app/schemes/<name>/`: io, store, services, views, llm,
commands), beside its pure library package `calibration/schemes/<name>/`. Generic code reaches a scheme's parts
through `part(scheme, kind)`, never by importing a scheme module."""
from __future__ import annotations

import importlib
from types import ModuleType


def _find(module: str) -> ModuleType | None:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name is not None and module.startswith(exc.name) and exc.name.startswith("app."):
            return None  # the module, or its scheme package, does not exist
        raise


def part(scheme: str, kind: str) -> ModuleType | None:
    """The module `kind` (io, store, views, llm, ...) of `scheme`'s app package, or None when it has none."""
    if not scheme.isidentifier():
        return None
    return _find(f"{__name__}.{scheme}.{kind}")
