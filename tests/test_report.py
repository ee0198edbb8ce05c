"""`concord report` (issue #26 item 6): one self-contained HTML page with every scheme's figures, the stored
calibration run's verdict and gain, the human ceiling and reliability diagrams, drawn by matplotlib; data from files
is text in it, never markup."""
from __future__ import annotations

import base64
import html
import io
import os
import re
import subprocess
from pathlib import Path

import pytest

from app.io.demo import create_demo
from app.io.report_html import headline, intervals, render
from app.services.report import ProjectReport, SchemePart
from app.services.evaluation import Evaluated
from app.store import Project
from calibration.schemes.base import Report, Table, registry
from calibration.search.gain import sentence
from tests.cli_inprocess import run_cli

ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in this process (tests/cli_inprocess.py): six child processes cost a second each of start-up."""
    return run_cli(*args, env={"HF_HUB_OFFLINE": "1"})


def images(page: str) -> dict[str, bytes]:
    return {alt: base64.b64decode(data)
            for alt, data in re.findall(r'alt="([^"]*)" src="data:image/png;base64,([^"]+)"', page)}


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    return path


@pytest.mark.timeout(600)
def test_report_of_the_demo_has_each_scheme_the_stored_verdict_counts_and_real_charts(demo: Path, tmp_path: Path) -> None:
    assert cli("calibrate", str(demo), "--scheme", "judge", "--bootstrap", "200").returncode == 0
    out = tmp_path / "report.html"
    done = cli("report", str(demo), "--out", str(out), "--bootstrap", "200")
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    with Project.open(demo) as project:
        counts = project.counts.unit_counts()["schemes"]
        run = [r for r in project.artifacts.calibration_runs() if r["result"].get("scheme") == "judge"][-1]
    for name, c in counts.items():  # one section per scheme, with the counts every other surface gives
        title = registry().get(name).title
        assert f'id="scheme-{name}"' in page
        row = re.search(rf"<tr><td>{re.escape(html.escape(title))}</td>(.*?)</tr>", page).group(1)
        assert re.findall(r'class="num">([\d,]+)<', row) == [f"{c[k]:,}" for k in
                                                              ("samples", "units", "labeled", "unlabeled", "machine_labeled")]
    # the judge section leads its calibration with the stored run's verdict, in the CLI's words
    judge = page[page.index('id="scheme-judge"'):]
    verdict = re.search(r'<p class="verdict [a-z]+">(.*?)</p>', judge).group(1)
    assert html.unescape(verdict) == sentence(run["result"]["gain"], run["result"]["objective"])
    assert f"Run #{run['id']}" in judge
    # schemes never calibrated say how to do it instead of showing an empty section
    assert "Not calibrated yet" in page[page.index('id="scheme-rubric"'):page.index('id="scheme-trace"')]
    pngs = images(page)
    assert all(p.startswith(b"\x89PNG\r\n\x1a\n") and len(p) > 2000 for p in pngs.values())
    import matplotlib.image

    assert all(matplotlib.image.imread(io.BytesIO(p)).shape[1] > 300 for p in pngs.values())
    evaluated = cli("evaluate", str(demo), "--scheme", "judge", "--json", "--bootstrap", "200")
    import json

    judges = json.loads(evaluated.stdout)["judge"]["judges"]
    with_bins = [n for n, f in judges.items() if f.get("reliability")]
    assert with_bins and sorted(a.removeprefix("reliability diagram judges · ") for a in pngs
                                if a.startswith("reliability diagram")) == sorted(with_bins)
    assert "gains with intervals" in pngs and "human ceiling" in pngs
    assert "<script" not in page and "http://" not in page and "https://" not in page  # self-contained, offline


def test_data_from_files_is_text_in_the_page() -> None:
    hostile = '<script>alert("x")</script> $\\alpha$ & <b>'
    report = Report(scheme="toy", tables=(Table(hostile, ("checker", "f1"), ((hostile, 0.5),)),),
                    data={"checkers": {hostile: {"f1": 0.5, "f1_ci": [0.4, 0.6]}}}, notes=(hostile,))
    scheme = registry().get("judge")
    part = SchemePart(name="judge", title=hostile, unit_noun="judge", counts={"samples": 1},
                      evaluated=Evaluated(scheme=scheme, report=report), ceiling=None, run=None)
    page = render(ProjectReport(path="/tmp/x.concord", project_id="p", made_at="2026-01-01T00:00:00",
                                schemes=[part]), "concord report x --out y")
    assert "<script>" not in page and "<b>" not in page
    from markupsafe import escape

    assert page.count(str(escape(hostile))) >= 4  # nav, heading, table caption and cell, note
    assert "figures with intervals" in images(page)  # the $..$ label drew (matplotlib did not read it as mathtext)


def test_intervals_are_found_in_both_json_forms_and_the_chart_keeps_the_headline() -> None:
    data = {"checkers": {"a": {"f1": 0.8, "f1_ci": [0.7, 0.9], "per_category": {"x": {"f1": 0.1, "f1_ci": [0, 1]}}},
                         "b": {"auroc": {"estimate": 0.6, "low": 0.5, "high": 0.7, "n_valid": 10}}},
            "human_ceiling": {"kappa": {"estimate": 1.0, "low": 1.0, "high": 1.0}}}
    assert sorted(intervals(data)) == [("checkers · a · f1", 0.8, 0.7, 0.9),
                                       ("checkers · a · per_category · x · f1", 0.1, 0, 1),
                                       ("checkers · b · auroc", 0.6, 0.5, 0.7)]
    assert headline(data) == ("checkers", [("a · f1", 0.8, 0.7, 0.9), ("b · auroc", 0.6, 0.5, 0.7)])


def test_refusals_exit_2_and_leave_no_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.concord"
    assert cli("init", str(empty)).returncode == 0
    out = tmp_path / "r.html"
    done = cli("report", str(empty), "--out", str(out))
    assert done.returncode == 2 and "report" in done.stderr and not out.exists()
    fifo = tmp_path / "pipe.html"
    os.mkfifo(fifo)
    demo = tmp_path / "demo.concord"
    create_demo(demo).close()
    done = cli("report", str(demo), "--out", str(fifo), "--scheme", "rubric", "--bootstrap", "0")
    assert done.returncode == 2 and "pipe.html" in done.stderr and "FIFO" in done.stderr
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
