"""One-time export of a sentence-transformers model to ONNX, kept in the user's cache beside other models.

The export needs torch and sentence-transformers, which are imported here only, and only when no exported
file exists yet: the ONNX backend that reads the file needs neither. What is written, per model, into
`<cache>/onnx/<model name>-<fingerprint>/`:

- `model.onnx`: the transformer (token embeddings out; pooling and normalisation are done in numpy), with
  ONNX Runtime's BERT fusions applied offline (fused attention, skip layer norm, bias GELU: ~1.4x faster on CPU);
- `model-int8.onnx`: the same transformer with weights dynamically quantised to int8, per channel (only when an
  `onnx-int8:` spec asks for it);
- `meta.json`: versions, and the smallest cosine between ONNX and sentence-transformers vectors on a fixed probe
  set of texts (short, long past the 256-token truncation, non-ASCII, empty).

`<cache>` is `$CONCORD_CACHE`, else `$XDG_CACHE_HOME/concord`, else `~/.cache/concord`. The fingerprint hashes the
export recipe version, the model's config files and its weight files (size plus the first and last 4 MiB), so
a changed model gets a new directory and never an old export. Files are written to a temporary name and renamed,
under a lock file, so concurrent processes export once and never read a half-written file.

An fp32 export is kept only if every probe vector has cosine >= `MIN_COSINE` to sentence-transformers' own output;
otherwise `OnnxExportError` says so and nothing is kept.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

RECIPE = 2  # bump when the export recipe changes: exports made by an older recipe are not reused
MIN_COSINE = 0.9999
FP32, INT8 = "model.onnx", "model-int8.onnx"
_CONFIG_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json",
                 "tokenizer.json")
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_EDGE = 4 << 20

TORCH_HINT = (
    "the first use of an ONNX embedding backend exports the model once with torch and sentence-transformers, "
    "which are not installed here: `make install`, or `pip install sentence-transformers torch` "
    "(CPU build: pip install torch --index-url https://download.pytorch.org/whl/cpu)"
)


class OnnxExportError(RuntimeError):
    """The model could not be exported (torch missing, or ONNX output differs from sentence-transformers)."""


def cache_root() -> Path:
    """`$CONCORD_CACHE`, else `$XDG_CACHE_HOME/concord`, else `~/.cache/concord`."""
    env = os.environ.get("CONCORD_CACHE")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "concord"


def fingerprint(model_dir: str | os.PathLike[str]) -> str:
    """sha256 of the recipe, the model's config files and its weights (size + first/last 4 MiB), 16 hex digits."""
    root = Path(model_dir)
    h = hashlib.sha256(f"concord-onnx-recipe-{RECIPE}".encode())
    for name in _CONFIG_FILES:
        p = root / name
        if p.is_file():
            h.update(name.encode() + b"\0" + p.read_bytes())
    weights = [root / n for n in _WEIGHT_FILES if (root / n).is_file()]
    if not weights:
        raise OnnxExportError(f"{root}: no model.safetensors or pytorch_model.bin: not a sentence-transformers model")
    for p in weights:
        size = p.stat().st_size
        h.update(f"{p.name}\0{size}".encode())
        with open(p, "rb") as f:
            h.update(f.read(_EDGE))
            if size > _EDGE:
                f.seek(max(_EDGE, size - _EDGE))
                h.update(f.read(_EDGE))
    return h.hexdigest()[:16]


def export_dir(model_dir: str | os.PathLike[str], name: str | None = None) -> Path:
    """`<cache>/onnx/<name>-<fingerprint>`; `name` defaults to the directory's name ("/" becomes "--")."""
    root = Path(model_dir)
    label = (name or root.name).strip("/").replace("/", "--") or "model"
    return cache_root() / "onnx" / f"{label}-{fingerprint(root)}"


class Encoder(Protocol):
    def encode(self, texts: Sequence[str]) -> Any: ...


# (model directory, exported file) -> an encoder over that file: the caller's backend (onnx_backend passes
# OnnxEmbedder.from_files), so the export checks its file with the backend without importing it (no import cycle)
OpenFile = Callable[[str, str], Encoder]


def ensure_onnx(model_dir: str | os.PathLike[str], int8: bool = False, name: str | None = None, *,
                open_file: OpenFile) -> Path:
    """The exported `.onnx` file for a sentence-transformers model directory; exported on first call and checked
    against sentence-transformers with `open_file` (the backend that will run it)."""
    target = export_dir(model_dir, name) / (INT8 if int8 else FP32)
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with _locked(target.parent / ".lock"):
        if not target.is_file():  # another process may have exported while we waited for the lock
            _export(Path(model_dir), target.parent, int8, open_file)
    return target


def read_meta(directory: Path) -> dict[str, Any]:
    p = directory / "meta.json"
    return json.loads(p.read_text()) if p.is_file() else {}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    import fcntl  # POSIX; the lock only serialises exports, reads need none (files appear by rename)

    with open(path, "a+") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def probe_texts() -> list[str]:
    """Fixed texts the export is verified on: short rules, sentences, long (truncated) text, non-ASCII, empty."""
    words = ("never target minors with alcohol ads; the trademark symbol ® is required in every slogan and "
             "caption. Jägermeister naïve café 🍺 über 東京 — drink responsibly, don't imply health benefits").split()
    out = ["", " ", "x", "Do not mention alcohol to minors", "Never target underage drinkers",
           "Use the registered trademark symbol", "  leading and trailing spaces  ", "UPPER case Text",
           "\ttabs\nand newlines\n", "Jägermeister® 🍺 東京 naïve", " ".join(words * 20)]
    for i in range(120):
        n = 1 + (i * 7) % 40
        out.append(" ".join(words[(i + j * 3) % len(words)] for j in range(n)))
    return out


def _export(model_dir: Path, directory: Path, int8: bool, open_file: OpenFile) -> None:
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise OnnxExportError(f"{TORCH_HINT} ({exc})") from None
    import onnxruntime

    t0 = time.perf_counter()
    st = SentenceTransformer(str(model_dir), device="cpu")
    raw = _tmp_name(directory, "raw.onnx")
    try:
        _export_raw(st, torch, raw)
        meta = read_meta(directory)
        if not (directory / FP32).is_file():
            meta["fp32_min_cosine"] = _fp32(st, raw, model_dir, directory / FP32, open_file)
        if int8:
            meta["int8_min_cosine"] = _int8(st, raw, model_dir, directory / INT8, open_file)
    finally:
        raw.unlink(missing_ok=True)
    meta.update({"recipe": RECIPE, "model_dir": str(model_dir), "probe_texts": len(probe_texts()),
                 "torch": torch.__version__, "onnxruntime": onnxruntime.__version__,
                 "seconds": round(time.perf_counter() - t0, 1)})
    _write_atomic(directory / "meta.json", json.dumps(meta, indent=2).encode())


def _export_raw(st: Any, torch: Any, raw: Path) -> None:
    """The transformer as traced by torch's TorchScript exporter: ids, mask, type ids in; token embeddings out."""

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.m(input_ids=input_ids, attention_mask=attention_mask,
                          token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    dummy = tuple(torch.ones((2, 8), dtype=torch.long) for _ in names)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tracer warnings about Python-side shape checks: the output is verified
        torch.onnx.export(
            TokenEmbeddings(st[0].auto_model.eval()), dummy, str(raw), input_names=names,
            output_names=["token_embeddings"], opset_version=17, dynamo=False,
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "token_embeddings"]},
        )


def _fp32(st: Any, raw: Path, model_dir: Path, target: Path, open_file: OpenFile) -> float:
    """BERT fusions applied offline (~1.4x faster), verified against sentence-transformers, then renamed in place."""
    from onnxruntime.transformers.optimizer import optimize_model

    cfg = st[0].auto_model.config
    tmp = _tmp_name(target.parent, target.name)
    try:
        if getattr(cfg, "model_type", "") in {"bert", "roberta", "xlm-roberta"}:
            opt = optimize_model(str(raw), model_type="bert", num_heads=int(cfg.num_attention_heads),
                                 hidden_size=int(cfg.hidden_size), opt_level=0)
            opt.save_model_to_file(str(tmp))
        else:
            tmp.write_bytes(raw.read_bytes())
        cos = _min_cosine(st, tmp, model_dir, open_file)
        if cos < MIN_COSINE:
            raise OnnxExportError(f"ONNX export differs from sentence-transformers (min cosine {cos:.6f} < "
                                  f"{MIN_COSINE}); use the torch backend (torch:<model>) for this model")
        os.replace(tmp, target)
        return cos
    finally:
        tmp.unlink(missing_ok=True)


def _int8(st: Any, raw: Path, model_dir: Path, target: Path, open_file: OpenFile) -> float:
    """Dynamic int8 quantisation, per channel, of the unfused graph (measured: closer to fp32 than per-tensor,
    median cosine 0.992 vs 0.965, and faster than quantising the fused graph); its min cosine is recorded."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    tmp = _tmp_name(target.parent, target.name)
    try:
        logging.disable(logging.WARNING)  # its advice to pre-process is for static quantisation
        try:
            quantize_dynamic(str(raw), str(tmp), weight_type=QuantType.QInt8, per_channel=True,
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
        finally:
            logging.disable(logging.NOTSET)
        cos = _min_cosine(st, tmp, model_dir, open_file)
        os.replace(tmp, target)
        return cos
    finally:
        tmp.unlink(missing_ok=True)


def _min_cosine(st: Any, onnx_path: Path, model_dir: Path, open_file: OpenFile) -> float:
    """Smallest cosine between the ONNX backend's and sentence-transformers' vectors on `probe_texts()`."""
    import numpy as np

    texts = probe_texts()
    want = st.encode(texts, batch_size=32, convert_to_numpy=True, normalize_embeddings=True)
    want = want / np.linalg.norm(want, axis=1, keepdims=True)
    got = np.asarray(open_file(str(model_dir), str(onnx_path)).encode(texts))
    return float(np.min(np.sum(got.astype(np.float64) * want.astype(np.float64), axis=1)))


def _tmp_name(directory: Path, name: str) -> Path:
    fd, p = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=directory)
    os.fchmod(fd, 0o644)  # readable like any cache file (mkstemp makes 0600)
    os.close(fd)
    return Path(p)


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = _tmp_name(path.parent, path.name)
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
