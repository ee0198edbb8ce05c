"""Embedding speed: cold encoding of 30,000 distinct short texts with the bundled all-MiniLM-L6-v2 (CPU),
then the same texts again through the cache (hits only, nothing encoded).

The cache is the real sqlite project file (app.store.Project) in a temporary directory, and, for
comparison, the in-memory MemoryVectorCache. The reference for the warm run is the plain cold encode.

    python benchmarks/bench_embeddings.py [--texts 30000] [--batch-size 64] [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from calibration.similarity import CachedEmbedder, MemoryVectorCache, SentenceTransformerEmbedder, text_key  # noqa: E402

VERBS = ["mention", "target", "promote", "imply", "claim", "encourage", "show", "suggest", "advertise", "link"]
OBJECTS = ["alcohol", "minors", "excessive drinking", "health benefits", "social success", "driving", "sports",
           "the trademark", "pregnancy", "competitors", "party culture", "sexual success", "therapeutic effects"]
AUDIENCES = ["to minors", "in ads", "on social media", "near schools", "at events", "in slogans", "for students",
             "with athletes", "in captions", "to new customers"]


def texts(n: int, seed: int = 0) -> list[str]:
    """Distinct short rule-like texts (7-12 words)."""
    rng = random.Random(seed)
    out: dict[str, None] = {}
    i = 0
    while len(out) < n:
        t = f"Do not {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(AUDIENCES)} (rule {i})"
        out[t] = None
        i += 1
    return list(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=30_000)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3, help="runs of the warm (cache-only) pass")
    args = ap.parse_args()
    data = texts(args.texts)
    model = SentenceTransformerEmbedder(batch_size=args.batch_size)
    t0 = time.perf_counter()
    model.encode(["warm up the model"])
    print(f"bench_embeddings: {len(data):,} distinct texts, model load {time.perf_counter() - t0:.1f} s, "
          f"torch threads {_torch_threads()}")

    try:
        from app.store import Project
    except ImportError:  # the store is optional here
        Project = None  # type: ignore[assignment]  # noqa: N806
    with tempfile.TemporaryDirectory() as tmp:
        caches: list[tuple[str, object]] = [("memory", MemoryVectorCache())]
        if Project is not None:
            caches.insert(0, ("sqlite project", Project.create(Path(tmp) / "bench.concord")))
        name, cache = caches[0]
        cold = CachedEmbedder(model, cache)  # type: ignore[arg-type]
        t0 = time.perf_counter()
        vecs = cold.encode(data)
        t_cold = time.perf_counter() - t0
        assert cold.encoded == len(data) and vecs.shape == (len(data), 384)
        print(f"  cold ({name} cache): {t_cold:7.2f} s  {len(data) / t_cold:8,.0f} texts/s  (encoded {cold.encoded:,})")
        for name, cache in caches:
            if name == "memory" and len(caches) > 1:  # fill it with the cold run's vectors (not timed)
                cache.put_vectors(model.cache_key, {text_key(t): v for t, v in zip(data, vecs)})  # type: ignore[attr-defined]
            times = []
            for _ in range(args.runs):
                warm = CachedEmbedder(model, cache)  # type: ignore[arg-type]
                t0 = time.perf_counter()
                again = warm.encode(data)
                times.append(time.perf_counter() - t0)
                assert warm.encoded == 0 and warm.hits == len(data)
            assert float(abs(again - vecs).max()) == 0.0
            t_warm = statistics.median(times)
            print(f"  warm ({name} cache): {t_warm:7.3f} s  {len(data) / t_warm:8,.0f} texts/s  (encoded 0, "
                  f"hits {len(data):,}; median of {args.runs}); x{t_cold / t_warm:,.0f} faster than cold")
        for _, cache in caches:
            if hasattr(cache, "close"):
                cache.close()  # type: ignore[attr-defined]


def _torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


if __name__ == "__main__":
    main()
