"""Real sentence-transformers scores in the violations view: provisional at once, final from a worker whose
embeddings come from a helper process, so the app process never loads the model."""
from __future__ import annotations

from app.gui import embedproc
from app.schemes.violations import views_scoring as scoring
from tests.gui_data import C1, open_window, project_path, settings  # noqa: F401 - fixtures

SPEC = "sentence-transformers:all-MiniLM-L6-v2"


def test_scores_become_final_with_the_bundled_model(qtbot, open_window, project_path) -> None:  # type: ignore[no-untyped-def]
    w = open_window(project_path)
    w.set_config("std_match@1.0.0")
    view = w.current_view
    assert view.current() == ("v1", C1)
    assert not view.scores.final and "provisional" in view.basis.text()  # Jaccard until the worker is done
    qtbot.waitUntil(lambda: view.scores.final, timeout=180000)
    namespace = embedproc.cache_namespace(SPEC)
    assert namespace == "onnx:all-MiniLM-L6-v2"  # the bundled model runs on ONNX Runtime
    assert view.scores.basis == namespace and "provisional" not in view.basis.text()
    top = view.scores.pair(0, 0)
    assert top.components["rule"] == 1.0 and top.proposed  # identical rules: exactly 1 whatever the backend
    other = view.scores.pair(0, 1)
    assert 0 < other.components["rule"] < 1  # a real cosine, not token overlap
    assert w.project.caches.count_vectors(namespace) >= 4
    raw = scoring._EMBEDDERS.get(SPEC)
    assert raw is None or raw._session is None  # the model was loaded in the helper process only
    assert embedproc.child_pids()  # the helper is still up (idle shutdown after a minute): it imported no torch
    assert embedproc._pool().submit(embedproc.heavy_modules).result(timeout=60) == []
    w.runner.wait_all(180000)
    # a unit whose vectors are cached scores final at once, without any worker
    w.go_next()
    qtbot.waitUntil(lambda: w.current_view.scores.final, timeout=180000)
    w.close()
    embedproc.shutdown()
    assert embedproc.child_pids() == []
