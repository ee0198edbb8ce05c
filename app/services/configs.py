"""Which parameters a workflow uses when the user names none: the same rule for the CLI and the app, for any
scheme. The scheme's presets come from the registry and its applied parameters from the store (`param_refs`), so
nothing here names a scheme or its config type."""
from __future__ import annotations

from typing import Any

from calibration.schemes.base import Scheme, registry


def preset_ref(name: str, params: dict[str, Any]) -> str:
    """A preset's reference: `name@version` when the preset carries a version (violations' match configs), else
    its name."""
    version = params.get("version")
    return f"{name}@{version}" if version else name


def default_params_ref(project: Any, scheme: Scheme) -> str | None:
    """The newest parameters applied in the project for `scheme` that are not one of its presets (`calibrate
    --apply`, the app's Apply), else its first preset; None when it has neither."""
    presets = scheme.presets()
    stored = [r for r in project.scheme_data.param_refs(scheme.name) if r.split("@", 1)[0] not in presets]
    if stored:
        return stored[-1]
    return next((preset_ref(n, p) for n, p in presets.items()), None)


def config_scheme() -> Scheme:
    """The scheme whose parameters `concord export --config` and the app's config box name: the first registered
    scheme with presets (the registry's order, as `concord assign` picks its default run)."""
    scheme = next((s for s in registry() if s.presets()), None)
    if scheme is None:
        raise LookupError("no registered scheme has presets")
    return scheme


def default_config_ref(project: Any) -> str:
    """The config `concord export` documents a split with and the app opens on when none is named:
    `default_params_ref` of `config_scheme()`."""
    return str(default_params_ref(project, config_scheme()))
