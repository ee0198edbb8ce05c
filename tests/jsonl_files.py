"""JSONL files the import tests write: one helper for every test module, and the small-chunk setting of the
streamed-import tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def write_jsonl(path: Path, rows: list[Any], *, ensure_ascii: bool = True) -> Path:
    """One line per row: a str as it is (a broken line on purpose), anything else as JSON."""
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=ensure_ascii)) + "\n"
                            for r in rows), encoding="utf-8")
    return path


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A few records per chunk, so small files stream in several chunks (import it into a module to apply it)."""
    from app.io import parallel

    monkeypatch.setattr(parallel, "CHUNK_BYTES", 1500)
