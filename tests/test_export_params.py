"""Issue #11: the parameters a split is documented with are chosen per scheme through the registry, and each
scheme's export adapter says what they mean. The violations adapter documents its match config (the ref `--config`
names); a plug-in scheme's adapter documents its own parameters (its default: the newest applied, else its first
preset); a split without a scheme's part names none of its parameters. Uses the toy `binary` scheme."""
from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from app.errors import UsageError
from app.io import records as io_records
from app.schemes.contracts import IOPart
from app.io.export import export_split, preview_split
from app.io.export_generic import GenericExport
from app.io.export_parts import Part
from app.store import Project
from tests.test_export_generic import _project
from tests.test_scheme_plugin import NAME, binary  # noqa: F401  (fixture)


class ThresholdExport(GenericExport):
    """The toy scheme's registry export, documenting the threshold its machine answers were cut at."""

    params_name = "threshold set"

    def __init__(self) -> None:
        super().__init__(NAME)
        self.agreement_refs: list[str | None] = []

    def params_ref(self, project: Any, ref: str) -> str:
        known = [*SCHEME_PRESETS, *project.scheme_data.param_refs(NAME)]
        if ref not in known:
            raise UsageError(f"no threshold set {ref!r} (known: {', '.join(known)})")
        return ref

    def _settings(self, project: Any, ref: str) -> dict[str, Any]:
        return dict(SCHEME_PRESETS[ref]) if ref in SCHEME_PRESETS else project.scheme_data.load_params(NAME, ref)

    def manifest_params(self, project: Any, ref: str) -> dict[str, Any]:
        return {"threshold_set": {"ref": ref, "settings": self._settings(project, ref)}}

    def documented_ref(self, manifest: Mapping[str, Any]) -> str | None:
        return (manifest.get("threshold_set") or {}).get("ref")

    def manifest_agreement(self, project: Any, part: Part, config_ref: str | None) -> dict[str, Any]:
        self.agreement_refs.append(config_ref)
        return {}

    def card_params(self, manifest: Mapping[str, Any]) -> list[str]:
        return [f"- threshold set: `{manifest['threshold_set']['ref']}`"]


SCHEME_PRESETS = {"default": {"threshold": 0.5}}  # the toy scheme's presets (tests/test_scheme_plugin.py)


@pytest.fixture
def documented(binary: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Path, ThresholdExport]]:
    """A project with violations and toy samples; the toy scheme's io adapter (installed after the import, which
    reads the scheme generically) has an export that documents its parameters."""
    assert binary.presets() == SCHEME_PRESETS
    path, _ = _project(tmp_path, with_violations=True)
    adapter = ThresholdExport()
    monkeypatch.setitem(io_records._ADAPTERS, NAME, IOPart(NAME, export=adapter))
    yield path, adapter


def test_each_scheme_documents_its_own_parameters(documented: tuple[Path, ThresholdExport], tmp_path: Path) -> None:
    path, adapter = documented
    with Project.open(path) as project:
        first = export_split(project, "a", "0.1.0", tmp_path / "out", statuses=None)
        tuned = project.scheme_data.save_params(NAME, "tuned", {"threshold": 0.6})
        second = export_split(project, "b", "0.1.0", tmp_path / "out", statuses=None, config_ref="ha_match")
    m = first.manifest
    assert first.params == {"violations": "std_match@1.0.0", NAME: "default"}
    assert m["match_config"]["ref"] == "std_match@1.0.0" == m["filters"]["config_ref"]
    assert m["threshold_set"] == {"ref": "default", "settings": {"threshold": 0.5}}
    card = (first.path / "README.md").read_text()
    assert "- match config: `std_match@1.0.0`\n" in card and "- threshold set: `default`\n" in card
    # --config names the violations match config (made exact); the toy scheme takes its newest applied parameters
    assert tuned == "tuned@1.0.0"
    assert second.params == {"violations": "ha_match@1.0.0", NAME: tuned}
    assert second.manifest["match_config"]["ref"] == "ha_match@1.0.0" == second.manifest["filters"]["config_ref"]
    assert second.manifest["threshold_set"] == {"ref": tuned, "settings": {"threshold": 0.6}}
    assert second.manifest["agreement"]["violations"]["machine_vs_human_unit_f1"]["config"] == "ha_match@1.0.0"
    assert adapter.agreement_refs == ["default", tuned]  # each part's figures under its own parameters


def test_a_split_names_only_its_parts_parameters(documented: tuple[Path, ThresholdExport], tmp_path: Path) -> None:
    path, _ = documented
    with Project.open(path) as project:
        toy = export_split(project, "toy", "0.1.0", tmp_path / "out", statuses=None, schemes=[NAME])
        only_v = export_split(project, "v", "0.1.0", tmp_path / "out", statuses=None, schemes=["violations"])
        with pytest.raises(UsageError, match="no match config 'nope@1.0.0'"):  # checked even when left out
            preview_split(project, statuses=None, schemes=[NAME], config_ref="nope@1.0.0")
    assert toy.params == {NAME: "default"} and "match_config" not in toy.manifest
    assert toy.manifest["filters"]["config_ref"] == "std_match@1.0.0"  # the filters record what --config meant
    assert "match config" not in (toy.path / "README.md").read_text()
    assert only_v.params == {"violations": "std_match@1.0.0"} and "threshold_set" not in only_v.manifest
    assert "threshold set" not in (only_v.path / "README.md").read_text()


def test_cli_note_names_the_scheme_whose_parameters_differ(documented: tuple[Path, ThresholdExport], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path, _ = documented
    args = ["export", str(path), "--name", "s", "--version", "1.0.0", "--out", str(tmp_path / "o"), "--status", "any"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "match config: std_match@1.0.0" in out and "threshold set: default" in out
    assert main([*args, "--config", "std_match"]) == 0  # the same config by name: nothing to note
    out = capsys.readouterr().out
    assert "already holds this exact data" in out and "note:" not in out
    with Project.open(path) as project:
        project.scheme_data.save_params(NAME, "tuned", {"threshold": 0.6})
    assert main(args) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "note: its manifest documents threshold set default, not tuned@1.0.0" in out
    assert "match config" not in out
    manifest = json.loads((tmp_path / "o" / "s@1.0.0" / "manifest.json").read_text())
    assert manifest["threshold_set"]["ref"] == "default"  # a version is immutable, its documentation too
