"""Named, versioned match configs, calibration runs and exported splits: what the project produced."""
from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

from app.errors import UsageError
from app.store.project import ProjectBase, dumps, now

if TYPE_CHECKING:  # imported where used: pandas and the matching package are slow to load for `concord status`
    import pandas as pd

    from calibration.schemes.violations.config import MatchConfig


class ArtifactsMixin(ProjectBase):
    # -- match configs ---------------------------------------------------------------------------------------------
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
        from calibration.schemes.violations.config import PRESETS

        stored = [f"{n}@{v}" for n, v in self.conn.execute("SELECT name, version FROM match_configs ORDER BY created_at")]
        return [c.ref for c in PRESETS.values() if c.ref not in stored] + stored

    # -- calibration runs ------------------------------------------------------------------------------------------
    def save_calibration_run(self, objective: str, params: dict[str, Any], result: dict[str, Any],
                             cv_results: pd.DataFrame | None = None) -> int:
        blob = None
        if cv_results is not None:
            buf = io.BytesIO()
            cv_results.to_parquet(buf, index=False)
            blob = buf.getvalue()
        with self.transaction() as c:
            cur = c.execute(
                "INSERT INTO calibration_runs (created_at, objective, params, result, cv_results) VALUES (?, ?, ?, ?, ?)",
                (now(), objective, dumps(params), dumps(result), blob),
            )
            return int(cur.lastrowid)

    def calibration_runs(self) -> list[dict[str, Any]]:
        rows = self.query("SELECT id, created_at, objective, params, result FROM calibration_runs ORDER BY id")
        for r in rows:
            r["params"], r["result"] = json.loads(r["params"]), json.loads(r["result"])
        return rows

    def calibration_cv_results(self, run_id: int) -> pd.DataFrame | None:
        import pandas as pd

        blob = self.scalar("SELECT cv_results FROM calibration_runs WHERE id = ?", (run_id,))
        return None if blob is None else pd.read_parquet(io.BytesIO(blob))

    # -- exported splits -------------------------------------------------------------------------------------------
    def split_record(self, name: str, version: str) -> dict[str, Any] | None:
        rows = self.query("SELECT * FROM splits WHERE name = ? AND version = ?", (name, version))
        if not rows:
            return None
        rows[0]["manifest"] = json.loads(rows[0]["manifest"])
        return rows[0]

    def record_split(self, name: str, version: str, content_sha256: str, manifest: dict[str, Any], path: str) -> None:
        with self.transaction() as c:
            c.execute(
                "INSERT INTO splits VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(name, version) DO UPDATE SET path = excluded.path",
                (name, version, now(), content_sha256, dumps(manifest), path),
            )

    def splits(self) -> list[dict[str, Any]]:
        rows = self.query("SELECT name, version, created_at, content_sha256, manifest, path FROM splits ORDER BY created_at")
        for r in rows:
            r["manifest"] = json.loads(r["manifest"])
        return rows
