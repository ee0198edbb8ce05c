"""sentence-transformers models run by ONNX Runtime: the default backend for the bundled all-MiniLM-L6-v2.

Same vectors as sentence-transformers (cosine >= 0.9999, checked at export and by the tests), about 1.5x its speed on
CPU, 0.2 s to import instead of 6-7 s, and no torch in the process. The steps are sentence-transformers' own:
the model's `tokenizer.json` run by `tokenizers` (truncated at `max_seq_length`, padded to the longest text of a
batch, texts sorted by token count so batches pad little), the transformer in ONNX Runtime, then the pooling of
`1_Pooling/config.json` (mean over the attention mask for MiniLM) and L2 normalisation in float32 numpy.

The `.onnx` file is exported once per model with torch (`calibration.similarity.onnx_export`) into the user's
cache. `onnx-int8` is the same model with int8 weights: ~2-3x faster, but its vectors are not the same (cosine ~0.99 to
fp32), so some "cosine > t" decisions flip: it has its own cache key and warns that configs calibrated on another
backend need recalibrating.

Threads: before every `encode` call, `choose_threads()` gives ONNX Runtime one intra-op thread per free core, free =
usable cores minus the cores other processes keep busy. That is measured, not guessed from the load average:
`/proc/stat`'s busy CPU time over a short window (SAMPLE_SECONDS) less this process's own CPU time in it, reused for
REUSE_SECONDS so repeated encode calls do not pay for sampling. (The 1-minute load average also counts tasks that
barely run: it read ~0.9 on a machine `top` showed idle, and one thread instead of two halved the throughput.)
Where /proc/stat is missing, the load average less this process's own part of it (`own_load`, the same 60 s
exponential average) stands in. At least one thread: two threads on a core another job holds run slower than one,
so a loaded machine gets fewer threads; a session per thread count is kept. `CONCORD_EMBED_THREADS` overrides it.
"""
from __future__ import annotations

import json
import math
import os
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from calibration.similarity.bundled import BUNDLED_ALIASES, BUNDLED_MINILM, resolve_sentence_transformer

INT8_WARNING = ("onnx-int8 embeddings differ from the fp32 model's (cosine ~0.99, not 1.0): some 'cosine > threshold' "
                "decisions flip, so configs calibrated with another embedding backend need recalibrating with this one")
_SUPPORTED_MODULES = {"Transformer", "Pooling", "Normalize"}
# the pooling modes the backend computes: sentence-transformers' present names -> the older config keys' names
_POOLING_NAMES = {"cls": "cls_token", "max": "max_tokens", "mean": "mean_tokens",
                  "mean_sqrt_len_tokens": "mean_sqrt_len_tokens"}


SAMPLE_SECONDS = 0.08  # /proc/stat window: 8 clock ticks per core at 100 Hz, little next to a first encode
REUSE_SECONDS = 10.0  # a measured value is reused this long


def choose_threads(cores: int | None = None, busy: float | None = None, load: float | None = None,
                   own: float | None = None) -> int:
    """One intra-op thread per free core: max(1, cores - round(busy)), at most `cores`.

    `busy`: cores other processes keep busy (default: `other_busy()`, a short /proc/stat sample). Without it --
    no /proc/stat, or `load` given -- busy = load_1min - own, `own` being this process's part of the load average
    (`own_load()`), so our own threads never count as another job's. `CONCORD_EMBED_THREADS` overrides the choice.
    """
    env = os.environ.get("CONCORD_EMBED_THREADS", "").strip()
    if env:
        return max(1, int(env))
    if cores is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if busy is None and load is None:
        busy = other_busy()
    if busy is None:
        if load is None:
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
        if own is None:
            own = own_load()
        busy = load - own
    return max(1, min(cores, cores - round(max(0.0, busy))))


def cpu_snapshot() -> tuple[float, float, float] | None:
    """(monotonic seconds, busy CPU seconds of the whole machine, this process's CPU seconds); None without
    /proc/stat. Busy = every field of its `cpu` line but idle and iowait (steal counts: those cycles are not ours)."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 5 or fields[0] != b"cpu":
        return None
    ticks = [int(x) for x in fields[1:9]]  # user nice system idle iowait irq softirq steal (guest is inside user)
    busy = sum(ticks) - ticks[3] - ticks[4]
    return time.monotonic(), busy / os.sysconf("SC_CLK_TCK"), _cpu_seconds()


def busy_between(before: tuple[float, float, float], after: tuple[float, float, float]) -> float:
    """Cores other processes kept busy between two `cpu_snapshot`s: machine busy time less ours, per second."""
    dt = after[0] - before[0]
    if dt <= 0:
        return 0.0
    return max(0.0, ((after[1] - before[1]) - (after[2] - before[2])) / dt)


class _OtherBusy:
    """`busy_between` over a SAMPLE_SECONDS window, measured at most every REUSE_SECONDS; None without /proc/stat."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.value: float | None = None

    def __call__(self) -> float | None:
        now = time.monotonic()
        if self.at is not None and now - self.at < REUSE_SECONDS:
            return self.value
        before = cpu_snapshot()
        if before is not None:
            time.sleep(SAMPLE_SECONDS)
            after = cpu_snapshot()
            self.value = None if after is None else busy_between(before, after)
        self.at = time.monotonic()
        return self.value


other_busy = _OtherBusy()


class _OwnLoad:
    """This process's CPU use averaged the way the kernel averages the 1-minute load (exponential, 60 s)."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.cpu = 0.0
        self.value = 0.0

    def __call__(self) -> float:
        now, cpu = time.monotonic(), _cpu_seconds()
        if self.at is None:  # first look: the CPU share since the process started, over the part of the
            age = _process_age()  # average that lifetime covers
            self.value = (cpu / age) * (1.0 - math.exp(-age / 60.0)) if age > 0 else 0.0
        else:
            dt = now - self.at
            if dt > 0:
                decay = math.exp(-dt / 60.0)
                self.value = self.value * decay + (cpu - self.cpu) / dt * (1.0 - decay)
        self.at, self.cpu = now, cpu
        return self.value


own_load = _OwnLoad()


def _cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def _process_age() -> float:
    try:  # Linux: start time in clock ticks after boot (field 22 of /proc/self/stat)
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        start = int(fields[19]) / os.sysconf("SC_CLK_TCK")
        uptime = float(Path("/proc/uptime").read_text().split()[0])
        return max(0.0, uptime - start)
    except (OSError, ValueError, IndexError):
        return time.process_time()


class OnnxEmbedder:
    """A sentence-transformers model (name, directory, or exported `.onnx` file) run by ONNX Runtime.

    Construction is cheap (nothing is loaded or exported); the first `encode` exports if needed and loads.
    """

    def __init__(self, model: str = BUNDLED_MINILM, int8: bool = False, batch_size: int = 64,
                 threads: int | None = None) -> None:
        self.model = model
        self.int8 = bool(int8)
        self.batch_size = int(batch_size)
        self.threads = threads
        name = BUNDLED_MINILM if model in BUNDLED_ALIASES else model
        self.cache_key = f"{'onnx-int8' if self.int8 else 'onnx'}:{name}"
        self._onnx_file: str | None = None
        if model.endswith(".onnx"):
            # an exported file: its model directory is named in meta.json beside it (exports made here), or is
            # the directory that holds it (a file placed beside the model's tokenizer and pooling configs)
            self._onnx_file = os.path.expanduser(model)
            here = Path(self._onnx_file).parent
            self.path = str(_read_json(here / "meta.json").get("model_dir") or here)
        else:
            self.path = resolve_sentence_transformer(model)
        if self.int8:
            warnings.warn(INT8_WARNING, UserWarning, stacklevel=2)
        self._session: Any = None
        self._sessions: dict[int, Any] = {}
        self._tokenizer: Any = None

    @classmethod
    def from_files(cls, model_dir: str, onnx_file: str, threads: int | None = None) -> OnnxEmbedder:
        """An embedder over an exported file and the model directory holding its tokenizer and pooling configs."""
        self = cls.__new__(cls)
        self.model, self.int8, self.batch_size, self.threads = model_dir, False, 64, threads
        self.cache_key = f"onnx:{onnx_file}"
        self._onnx_file, self.path = onnx_file, model_dir
        self._session = self._tokenizer = None
        self._sessions = {}
        return self

    # --- loading ---------------------------------------------------------------------------------------

    def _load(self) -> None:
        if self._session is not None:
            return
        import onnxruntime as ort
        from tokenizers import Tokenizer

        root = Path(self._model_dir())
        onnx_file = self._onnx_file
        if onnx_file is None:
            onnx_file = str(exported_file(str(root), int8=self.int8, name=self.cache_key.split(":", 1)[1]))
        cfg = _read_json(root / "sentence_bert_config.json")
        tok_cfg = _read_json(root / "tokenizer_config.json")
        self.max_seq_length = _max_seq_length(cfg, tok_cfg)
        self.lowercase = bool(cfg.get("do_lower_case", False))
        self.pooling, self.normalize = _pipeline(root)
        tok = Tokenizer.from_file(str(root / "tokenizer.json"))
        tok.no_padding()  # padded per batch below, to the batch's longest text
        tok.enable_truncation(self.max_seq_length)
        self._tokenizer = tok
        pad = _read_json(root / "special_tokens_map.json").get("pad_token") or tok_cfg.get("pad_token") or "[PAD]"
        pad = pad.get("content", "[PAD]") if isinstance(pad, dict) else pad
        self.pad_id = tok.token_to_id(pad) or 0
        self._file, self._ort = onnx_file, ort
        self._session = self._session_for(int(self.threads) if self.threads else choose_threads())
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1] or 0) or None

    def _session_for(self, threads: int) -> Any:
        """A session with `threads` intra-op threads (kept: the load may come back to it).

        Worker threads do not spin while waiting: when another job takes a core mid-run, spinning threads fight
        it (measured with a busy process on one of 2 cores: 90 texts/s spinning, 174 not, 177 with one thread;
        quiet, not spinning costs ~13%: 401 vs 462)."""
        self.threads_used = threads
        if threads not in self._sessions:
            ort = self._ort
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            opts.inter_op_num_threads = 1
            opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
            opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
            opts.log_severity_level = 3
            self._sessions[threads] = ort.InferenceSession(self._file, opts, providers=["CPUExecutionProvider"])
        return self._sessions[threads]

    def _model_dir(self) -> str:
        p = Path(self.path)
        if p.is_dir():
            return str(p)
        from huggingface_hub import snapshot_download  # a hub name: its local snapshot (offline with HF_HUB_OFFLINE)

        return snapshot_download(self.path)

    # --- encoding --------------------------------------------------------------------------------------

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors in input order; the thread count is chosen again for every call (the load changes)."""
        self._load()
        self._session = self._session_for(int(self.threads) if self.threads else choose_threads())
        if not texts:
            dim = self.dimension or 0
            return np.zeros((0, dim), dtype=np.float32)
        out: np.ndarray | None = None
        for idx, inputs, mask in self.batches(texts):
            tokens = self._session.run(None, inputs)[0]
            vecs = _pool(tokens.astype(np.float32, copy=False), mask, self.pooling, self.normalize)
            if out is None:
                out = np.empty((len(texts), vecs.shape[1]), dtype=np.float32)
            out[idx] = vecs
        assert out is not None
        return out

    def batches(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray], np.ndarray]]:
        """(positions in `texts`, the session's input arrays, the attention mask) per batch: texts tokenised once, sorted longest first
        (like sentence-transformers) and padded to each batch's longest. Public so that a benchmark can time the
        bare `InferenceSession.run` loop over exactly these batches (the runtime's limit for this work)."""
        self._load()
        encs = self._tokenizer.encode_batch([t.lower() for t in texts] if self.lowercase else list(texts))
        lengths = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            part = [encs[i] for i in idx]
            n, width = len(part), int(lengths[idx].max())
            ids = np.full((n, width), self.pad_id, dtype=np.int64)
            mask = np.zeros((n, width), dtype=np.int64)
            types = np.zeros((n, width), dtype=np.int64)
            for r, e in enumerate(part):
                k = len(e.ids)
                ids[r, :k] = e.ids
                mask[r, :k] = 1
                types[r, :k] = e.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            yield idx, {k: v for k, v in feeds.items() if k in self._inputs}, mask

    @property
    def session(self) -> Any:
        """The ONNX Runtime session the last `encode` chose (its thread count: `threads_used`)."""
        self._load()
        return self._session

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.model!r}{', int8' if self.int8 else ''})"


def exported_file(model_dir: str, int8: bool = False, name: str = BUNDLED_MINILM) -> Path:
    """The model's `.onnx` file in the cache, exported (and checked) the first time: one path for the lazy first
    `encode` and for `concord models prepare`, which `make install` runs so the first use on a machine waits for
    no export."""
    from calibration.similarity.onnx_export import ensure_onnx

    return ensure_onnx(model_dir, int8=int8, name=name, open_file=checker)


def checker(model_dir: str, onnx_file: str) -> OnnxEmbedder:
    """The embedder the export checks a fresh file with (onnx_export.ensure_onnx's `open_file`): one thread."""
    return OnnxEmbedder.from_files(model_dir, onnx_file, threads=1)


def _read_json(p: Path) -> dict[str, Any]:
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}


def _max_seq_length(st_cfg: dict[str, Any], tok_cfg: dict[str, Any]) -> int:
    """Where sentence-transformers keeps the truncation length: `max_seq_length` in sentence_bert_config.json (older
    saves), else the tokenizer's `model_max_length` (6.x saves it there only); transformers writes a huge
    placeholder there when a tokenizer has no limit, so only a plausible value counts."""
    if st_cfg.get("max_seq_length"):
        return int(st_cfg["max_seq_length"])
    limit = tok_cfg.get("model_max_length")
    return int(limit) if isinstance(limit, int) and 0 < limit <= 100_000 else 512


def _pipeline(root: Path) -> tuple[str, bool]:
    """(pooling mode, normalise?) from modules.json and the pooling config; other modules are refused."""
    modules = json.loads((root / "modules.json").read_text()) if (root / "modules.json").is_file() else [
        {"type": "sentence_transformers.models.Transformer", "path": ""},
        {"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"},
    ]
    pooling, normalize = "mean", False
    for m in modules:
        kind = str(m.get("type", "")).rsplit(".", 1)[-1]
        if kind not in _SUPPORTED_MODULES:
            raise ValueError(f"{root}: module {m.get('type')!r} is not supported by the ONNX backend "
                             "(Transformer, Pooling, Normalize only); use the torch backend for this model")
        if kind == "Pooling":
            pc = _read_json(root / str(m.get("path") or "1_Pooling") / "config.json")
            if "pooling_mode" in pc:  # newer sentence-transformers (6.2 here) save one key: "mean", or a list
                named = pc["pooling_mode"]
                modes = [_POOLING_NAMES.get(k, k) for k in ([named] if isinstance(named, str) else named)]
            else:  # the older layout: one boolean per mode
                modes = [k for k in _POOLING_NAMES.values() if pc.get(f"pooling_mode_{k}")]
            if any(k not in _POOLING_NAMES.values() for k in modes):
                raise ValueError(f"{root}: pooling {modes} is not supported by the ONNX backend")
            if len(modes) != 1:
                raise ValueError(f"{root}: pooling {modes or 'none'} is not supported by the ONNX backend")
            pooling = modes[0]
        elif kind == "Normalize":
            normalize = True
    return pooling, normalize


def _pool(tokens: np.ndarray, mask: np.ndarray, mode: str, normalize: bool) -> np.ndarray:
    """sentence-transformers' Pooling and Normalize modules, in float32."""
    m = mask[..., None].astype(np.float32)
    if mode == "cls_token":
        v = tokens[:, 0]
    elif mode == "max_tokens":
        v = np.where(m > 0, tokens, np.float32(-1e9)).max(axis=1)
    else:
        s = (tokens * m).sum(axis=1)
        n = np.maximum(m.sum(axis=1), np.float32(1e-9))
        v = s / (np.sqrt(n) if mode == "mean_sqrt_len_tokens" else n)
    v = np.ascontiguousarray(v, dtype=np.float32)
    if normalize:
        v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), np.float32(1e-12))
    return v
