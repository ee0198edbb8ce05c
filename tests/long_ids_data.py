"""A project built like the real files (issue #27): the demo's records and labels of every scheme, renamed to the
ids real datasets carry -- RAGBench's `hotpotqa/5a8b57f25542995d1e6f1371` (every id of a subset sharing its first
ten characters), RGB's Hugging Face model names, ADDM's long method names, FaithBench-like summary ids -- and
imported through the real importers. Built from the repository's own demo files (never ../shared/data)."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from app.io.demo import DATASETS, DEMO_FILES, LABELS_FILE, SCHEME_DEMOS, demo_dir, pin_presets
from app.store import Project

# units (checkers, judges, models, methods) as long as the real ones
UNITS = {
    "amos|demo-model": "amos-hierarchical-aggregation@2.1.0|gpt-4o-2024-08-06",
    "direct|demo-model": "direct-prompting-baseline@1.0.3|claude-3-5-sonnet-20241022",
    "atlas-7b": "meta-llama/Llama-2-70b-chat-hf",
    "borealis-13b": "mistralai/Mixtral-8x7B-Instruct-v0.1",
    "lumen-judge": "trulens_groundedness_gpt-4-turbo",
    "quill-judge": "ragas_faithfulness_gpt-3.5-turbo-0125",
    "lumen-consistency": "vectara/hallucination_evaluation_model",
    "quill-risk": "alignscore-large-finetuned",
    "demo-llm": "gpt-4o-mini-2024-07-18-judge",
}
PREFIX = {"trace": "hotpotqa/5a", "rgb": "en_fact/", "addm": "yelp/business/", "judge": "faithbench/summary-",
          "violations": "hirschkraut/marketing-", "rubric": "healthbench/prompt-"}


def long_id(scheme: str, sid: str) -> str:
    """`hotpotqa/5a8b57f25542995d1e6f1371`-like: the scheme's shared prefix, then a hash of the demo id."""
    return PREFIX[scheme] + hashlib.sha1(sid.encode()).hexdigest()[:22]


def _rename(value: Any, names: dict[str, str]) -> Any:
    """Every string (and dict key) equal to a renamed id, replaced; the rest kept."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_rename(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): _rename(v, names) for k, v in value.items()}
    return value


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def make_long_ids_project(path: Path, work: Path) -> Path:
    """The project at `path` (renamed files are written under `work`)."""
    from app.io.imports import import_file
    from app.io.labels import import_labels

    src = demo_dir()
    files = [(name, LABELS_FILE if name == DEMO_FILES[0] else None, DATASETS[name]) for name in DEMO_FILES]
    files += SCHEME_DEMOS
    names = dict(UNITS)
    for records, _labels, _dataset in files:
        for r in _rows(src / records):
            scheme = r.get("scheme") or ("rubric" if "traits" in r else "violations")
            names[r["id"]] = long_id(scheme, r["id"])
    work.mkdir(parents=True, exist_ok=True)

    def renamed(name: str) -> Path:
        out = work / name
        out.write_text("".join(json.dumps(_rename(r, names), ensure_ascii=False) + "\n" for r in _rows(src / name)),
                       encoding="utf-8")
        return out

    with Project.create(path) as project:
        for records, labels, dataset in files:
            import_file(project, renamed(records), dataset=dataset)
        for records, labels, _dataset in files:
            if labels is not None:
                import_labels(project, renamed(labels))
        pin_presets(project)
    return path
