"""Calibration runs and exported splits: what the project produced. (A scheme's applied parameters are kept by
the generic store, app/store/samples.py, or by its store adapter in app/schemes/<name>/store.py.)"""
from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING, Any

from app.store.parts import ProjectPart
from app.store.project import dumps, now

if TYPE_CHECKING:  # imported where used: pandas is slow to load for `concord status`
    import pandas as pd


class ArtifactsPart(ProjectPart):
    """`project.artifacts`: calibration runs and exported splits."""

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
