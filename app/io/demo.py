"""Build the bundled demo project from resources/demo/ through the real importers.

Going through `import_file` and `import_labels` (rather than writing the store directly) means the demo is also a
standing end-to-end check of the import path: if the shipped data stops validating, `concord demo` says so.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import UsageError
from app.progress import Progress
from app.store import Project
from app.store.backup import install_database
from calibration.schemes.base import registry

DEMO_FILES = ("violations.jsonl", "rubric.jsonl")
LABELS_FILE = "labels.jsonl"
DATASETS = {"violations.jsonl": "hirschkraut_violations", "rubric.jsonl": "hirschkraut_rubric"}
DEFAULT_PATH = Path("demo") / "demo.concord"
# Further schemes' demo data, imported after the above: (records file, labels file, dataset name). Each pair is
# written by its own generator script in resources/demo/ (demo_<scheme>.py); add a row per scheme.
SCHEME_DEMOS: list[tuple[str, str, str]] = [
    ("addm.jsonl", "addm_labels.jsonl", "tannried_addm"),
    ("rgb.jsonl", "rgb_labels.jsonl", "tannried_rgb"),
    ("trace.jsonl", "trace_labels.jsonl", "tannried_trace"),
    ("judge.jsonl", "judge_labels.jsonl", "tannried_judge"),
]


def demo_dir() -> Path:
    """resources/demo/ of this checkout (the app runs from the repository, `pip install -e`)."""
    here = Path(__file__).resolve().parents[2] / "resources" / "demo"
    if not all((here / f).is_file() for f in (*DEMO_FILES, LABELS_FILE, *(f for r, lab, _ in SCHEME_DEMOS for f in (r, lab)))):
        raise UsageError(f"{here}: the demo data files are missing (run `python resources/demo/make_demo_data.py`)")
    return here


@dataclass
class DemoReport:
    """What `create_demo` imported, for the CLI summary."""

    path: Path
    lines: list[str] = field(default_factory=list)

    def add(self, result: Any) -> None:
        """An import's warnings, then its summary (which counts them "listed above", as `concord import` prints)."""
        self.lines += [f"warning: {w}" for w in getattr(result, "warnings", ())]
        self.lines.append(result.summary())


def _remove_build(path: Path) -> None:
    """Delete a build file of ours whose connection is closed (never the target: it may be open elsewhere)."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        p.unlink(missing_ok=True)


def import_demo(project: Project, progress: Progress | None = None, report: DemoReport | None = None) -> None:
    """Import the demo files and presets into `project`. Safe to repeat: a second run changes nothing."""
    from app.io.imports import import_file
    from app.io.labels import import_labels

    src = demo_dir()
    for name in DEMO_FILES:
        r = import_file(project, src / name, dataset=DATASETS[name], progress=progress)
        if report is not None:
            report.add(r)
    r = import_labels(project, src / LABELS_FILE, progress=progress)
    if report is not None:
        report.add(r)
    for records, labels, dataset in SCHEME_DEMOS:
        r = import_file(project, src / records, dataset=dataset, progress=progress)
        lr = import_labels(project, src / labels, progress=progress)
        if report is not None:
            report.add(r)
            report.add(lr)
    pin_presets(project)


def pin_presets(project: Project, origin: str = "demo") -> list[str]:
    """Save every registered scheme's versioned presets (`name@version`, e.g. the match configs) in the project as
    they are, so the settings the demo's reports and splits name travel with the file; returns their refs. A preset
    without a version has no ref to pin: its scheme resolves it by name."""
    return [project.scheme_data.save_params(scheme.name, name, params, origin=origin, version=str(params["version"]))
            for scheme in registry() for name, params in scheme.presets().items() if params.get("version")]


def create_demo(path: str | Path = DEFAULT_PATH, *, force: bool = False, progress: Progress | None = None,
                report: DemoReport | None = None) -> Project:
    """Create the demo project at `path` and return it open. An existing file is refused unless `force`."""
    path = Path(path)
    if path.exists() and not force:
        raise UsageError(f"{path}: already exists; pass --force to replace it")
    if path.is_dir():
        raise UsageError(f"{path}: is a directory; give a file name such as {path / 'demo.concord'}")
    demo_dir()  # fail before touching anything if the data is not there
    # Built beside the target and installed when complete: a failure leaves the target as it was, and an existing
    # project is overwritten through SQLite (see install_database), never deleted under a connection.
    path.parent.mkdir(parents=True, exist_ok=True)
    build = path.with_name(f".{path.name}.building-{uuid.uuid4().hex[:8]}")
    project = Project.create(build)
    try:
        import_demo(project, progress, report)
    except BaseException:
        project.close()
        _remove_build(build)
        raise
    project.close()
    try:
        install_database(build, path)
    except BaseException:
        _remove_build(build)
        raise
    return Project.open(path)
