"""Store adapter of the `violations` scheme, part two: its named, versioned match configs (the `match_configs`
table). Kept beside app/schemes/violations/store.py (samples, violations, counts) so that file stays about samples;
that adapter's `param_refs` / `save_params` / `load_params` hooks store a scheme's applied parameters here, and the
app's config box, `concord export --config` and the demo read them through these methods of the scheme's store part
(`project.store("violations")`, app/schemes/violations/store.py).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from app.errors import UsageError
from app.store.parts import ProjectPart
from app.store.project import dumps, now

if TYPE_CHECKING:  # imported where used: the matching package is slow to load for `concord status`
    from calibration.schemes.violations.config import MatchConfig


class MatchConfigs(ProjectPart):
    """The match configs of the violations store part (its base: the configs are a table of their own)."""

    def save_match_config(self, config: MatchConfig, origin: str = "user") -> str:
        """Store `name@version`; the same name and version with different content is refused (bump the version)."""
        data = dumps(config.to_dict())
        old = self.scalar("SELECT config FROM match_configs WHERE name = ? AND version = ?", (config.name, config.version))
        if old is not None:
            if old != data:
                raise UsageError(f"match config {config.ref} already exists with different settings; bump the version")
            return config.ref
        with self.transaction() as c:
            c.execute("INSERT INTO match_configs VALUES (?, ?, ?, ?, ?)", (config.name, config.version, data, origin, now()))
        return config.ref

    def match_config(self, ref: str) -> MatchConfig:
        """`name@version`, or `name` for its newest version; the presets are always available."""
        from calibration.schemes.violations.config import PRESETS, MatchConfig

        name, _, version = ref.partition("@")
        if version:
            row = self.scalar("SELECT config FROM match_configs WHERE name = ? AND version = ?", (name, version))
        else:
            rows = self.query("SELECT version, config FROM match_configs WHERE name = ?", (name,))
            rows.sort(key=lambda r: tuple(int(x) if x.isdigit() else 0 for x in r["version"].split(".")))
            row = rows[-1]["config"] if rows else None
        if row is None:
            if name in PRESETS and (not version or version == PRESETS[name].version):
                return PRESETS[name]
            raise UsageError(f"no match config {ref!r} in this project (known: {', '.join(self.match_config_refs())})")
        return MatchConfig.from_dict(json.loads(row), source=ref)

    def match_config_refs(self) -> list[str]:
        """The presets not stored in the project first, then the stored configs, oldest first."""
        from calibration.schemes.violations.config import PRESETS

        stored = [f"{n}@{v}" for n, v in self.conn.execute("SELECT name, version FROM match_configs ORDER BY created_at")]
        return [c.ref for c in PRESETS.values() if c.ref not in stored] + stored
