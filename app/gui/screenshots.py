"""Render the README screenshots offscreen: `python -m app.gui.screenshots PROJECT OUTDIR`.

Works on a temporary copy of the project (machine scores are computed there, nothing is recorded in yours),
then grabs the view of every scheme the project holds (SCHEME.png) and, when present, the calibration panel.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402

from app.gui.main import SCREENSHOT_SIZE, application, grab  # noqa: E402
from app.store import Project  # noqa: E402


def _select(window, sample_id: str | None, scheme: str) -> None:  # type: ignore[no-untyped-def]
    """Show `sample_id` (or the unit of `scheme` with the largest figures in the list's scheme columns)."""
    from calibration.schemes.base import registry

    window.filters.scheme.setCurrentIndex(window.filters.scheme.findData(scheme))
    keys = [c.key for c in registry().get(scheme).columns if c.numeric] if scheme in registry() else []
    best, best_n = 0, -1.0
    for i in range(window.model.rowCount()):
        r = window.model.row(i)
        if sample_id is not None and r["sample_id"] == sample_id:
            best = i
            break
        n = sum(float(r.get(k) or 0) for k in keys)
        if sample_id is None and n > best_n:
            best, best_n = i, n
    window.select_row(best)


def render(project_path: str | Path, out_dir: str | Path, *, samples: dict[str, str] | None = None,
           calibrate: bool = True) -> list[Path]:
    """`samples`: scheme name -> the sample id to show in its view (default: the busiest unit)."""
    from app.gui.window import MainWindow

    app = application()
    out = Path(out_dir)
    written: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "shot.concord"
        with Project.open(project_path) as source:  # SQLite's backup API: never a file copy of a live project
            source.backup_to(copy)
        settings = QSettings(str(Path(tmp) / "settings.ini"), QSettings.Format.IniFormat)
        window = MainWindow(Project.open(copy), "screenshots", settings=settings, record_time=False)
        window.resize(*SCREENSHOT_SIZE)
        window.show()
        window.compute_machine_scores()
        window.runner.wait_all(300_000)
        app.processEvents()
        for scheme in list(window.filters.schemes):
            _select(window, (samples or {}).get(scheme), scheme)
            view = window.current_view
            if view is not None and hasattr(view, "next_excerpt"):
                view.next_excerpt()  # a selected excerpt shows the highlight
            grab(window, out / f"{scheme}.png")
            written.append(out / f"{scheme}.png")
        if calibrate:
            try:
                from app.gui.calibration_panel import CalibrationPanel
            except ImportError:
                CalibrationPanel = None  # type: ignore[assignment,misc]  # noqa: N806
            if CalibrationPanel is not None:
                panel = CalibrationPanel.open_for(window.panels)
                panel.resize(*SCREENSHOT_SIZE)
                panel.run_for_screenshot()
                grab(panel, out / "calibration.png", wait_ms=600_000)
                written.append(out / "calibration.png")
                panel.close()
        window.close()
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("project")
    ap.add_argument("out_dir")
    ap.add_argument("--sample", action="append", default=[], metavar="SCHEME=ID",
                    help="the sample to show in a scheme's view (repeatable)")
    ap.add_argument("--no-calibration", action="store_true")
    args = ap.parse_args(argv)
    samples = dict(s.split("=", 1) for s in args.sample if "=" in s)
    for p in render(args.project, args.out_dir, samples=samples, calibrate=not args.no_calibration):
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
