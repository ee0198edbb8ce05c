"""The calibration panel says one thing clearly (issue #27 item 4) and the app calibrates every scheme the way the
CLI does (issue #25 item 3): the violations page's run goes through the generic search (`concord calibrate`'s
objective, folds, grouping and figures), the held-out score leads with its interval, every other figure is named,
ranks are numbered, the chosen weights are explained, and the CLI words its folds in the problem's nouns."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from app.cli import main
from app.gui.calibration_panel import CalibrationPanel
from app.io.demo import create_demo
from app.schemes.violations.views_calibration import WEIGHT_TITLES
from calibration.search import report
from tests.gui_data import open_window, settings  # noqa: F401 - fixtures


@pytest.fixture
def demo_path(tmp_path: Path) -> Path:
    path = tmp_path / "demo.concord"
    create_demo(path).close()
    return path


def _cli_json(path: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["calibrate", str(path), *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.timeout(300)
def test_violations_page_runs_the_cli_search_and_says_which_figure_is_which(  # type: ignore[no-untyped-def]
        qtbot, open_window, demo_path, capsys) -> None:
    cli = _cli_json(demo_path, "--scheme", "violations", "--folds", "3", "--components", "std", "--step", "0.25",
                    capsys=capsys)
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    page = panel.page
    assert panel.scheme_box.currentData() == "violations"
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    page.folds.setValue(3)
    page.components.setCurrentIndex(page.components.findData("std"))
    page.step.setCurrentText("0.25")
    qtbot.mouseClick(page.run_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: panel.task is None and len(w.project.artifacts.calibration_runs()) == 2, timeout=120000)
    run = w.project.artifacts.calibration_runs()[-1]
    result = run["result"]

    # one path: the stored run is the generic one, with the CLI's figures on the same data and options
    assert run["params"]["scheme"] == "violations" and run["params"]["options"]["components"] == "std"
    for key in ("heldout", "baselines", "baselines_ci", "gain", "n_configs", "n_units", "n_items", "folds"):
        assert result[key] == cli[key], key
    assert result["best"]["config"] == cli["best"]["config"]
    assert page.result["heldout"] == cli["heldout"]

    # the held-out score leads (after the verdict), with its interval and how the folds were made
    h = result["heldout"]
    headline = page.results.headline.text()
    assert headline.startswith(f"Held-out kappa of the calibrated config: {h['score']:.3f}, 95% CI "
                               f"[{h['ci'][0]:.3f}, {h['ci'][1]:.3f}], the estimate for new data (3 folds grouped "
                               "by sample")
    texts = [page.verdict, page.results.headline, page.results.figures, page.results.weights, page.summary]
    ys = [t.mapTo(page, t.rect().topLeft()).y() for t in texts]
    assert ys == sorted(ys) and len(set(ys)) == len(ys)
    assert "grouped by group" not in page.summary.text() and "3 folds grouped by sample" in page.summary.text()

    # every other figure is named, with the chosen config's own values
    cv = w.project.artifacts.calibration_cv_results(run["id"]).sort_values("rank", kind="stable")
    figures = page.results.figures.text()
    assert f"{report.IN_SAMPLE} {result['best']['score']:.4f}" in figures
    assert f"{report.CROSS_VALIDATED} {cv['mean_test_score'].iloc[0]:.4f}" in figures
    base = page.base_model.records()
    assert [r["config"] for r in base] == ["calibrated", *page.result["baselines"]]  # the presets, as the CLI's table
    assert [r["gain"] for r in base[1:]] == [cli["gain"]["baselines"][n]["estimate"] for n in page.result["baselines"]]
    assert [r["label"] for r in base if r["label"].endswith(" (default)")] == [f"{cli['gain']['baseline']} (default)"]

    # ranks are numbered 1, 2, 3, ... (ties marked), not 1 on every row
    m = page.top_model
    assert m.headerData(0, Qt.Orientation.Horizontal) == "#"
    shown = [m.data(m.index(r, 0)) for r in range(m.rowCount())]
    assert [int(s.rstrip("=")) for s in shown] == list(range(1, m.rowCount() + 1))
    ranks = [m.record(r)["rank"] for r in range(m.rowCount())]
    assert [s.endswith("=") for s in shown] == [i > 0 and ranks[i] == ranks[i - 1] for i in range(len(ranks))]

    # the chosen weights in words: each searched weight at 0 is named, with what the match relies on
    config = result["best"]["config"]
    searched = ("w_overlap", "w_rule")  # std: the two weights the space searches
    zero = [WEIGHT_TITLES[n] for n in searched if not config[n]]
    sentence = page.results.weights.text()
    assert sentence == report.weights_sentence(config, result["space"], WEIGHT_TITLES, "the match")
    assert ("weight 0" in sentence) == bool(zero)
    for title in zero:
        assert title[:1].upper() + title[1:] in sentence or title in sentence
    if len(zero) == 1:
        used = next(WEIGHT_TITLES[n] for n in searched if config[n])
        assert sentence.endswith(f"the match relies on {used} alone.")
    panel.close()


def test_cli_words_the_folds_and_figures_as_the_panel_does(demo_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", str(demo_path), "--scheme", "trace", "--folds", "3", "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    assert "grouped by group" not in out and "3 folds grouped by sample" in out
    assert "Held-out kappa of the calibrated config: " in out
    assert f"Optimistic, for comparison (the config was chosen on these units): {report.IN_SAMPLE} " in out
    assert f"· {report.CROSS_VALIDATED} " in out
    rows = [line.split("\t") for line in out.splitlines() if line[:1].isdigit() and "\t" in line]
    assert [int(r[0].rstrip("=")) for r in rows] == list(range(1, len(rows) + 1)) and len(rows) > 1
    assert main(["calibrate", str(demo_path), "--scheme", "violations", "--group-by", "checker", "--step", "0.25",
                 "--bootstrap", "100"]) == 0
    out = capsys.readouterr().out
    head = next(line for line in out.splitlines() if line.startswith("Violations: "))
    assert "leave one checker out (" in head and "grouped by" not in head


@pytest.mark.parametrize(("folds", "by", "nouns", "words"), [
    (5, "group", ("sample", "checker"), "5 folds grouped by sample"),
    (5, "sample", ("sample", "checker"), "5 folds grouped by sample"),
    (4, "checker", ("sample", "checker"), "leave one checker out (4 folds)"),
    (3, "stratum", ("business", "method"), "leave one method out (3 folds)"),
])
def test_grouping_words(folds: int, by: str, nouns: tuple[str, str], words: str) -> None:
    assert report.grouping_words(folds, by, *nouns) == words


def test_weights_sentence_says_what_the_weights_mean() -> None:
    space = {"dims": [{"type": "simplex", "names": ["w_a", "w_b", "w_c"], "fixed": {"w_c": 0.0}},
                      {"type": "grid", "name": "t", "values": [0.1]}]}
    titles = {"w_a": "span overlap", "w_b": "quote similarity"}
    assert (report.weights_sentence({"w_a": 0.0, "w_b": 1.0, "w_c": 0.0, "t": 0.1}, space, titles, "the match")
            == "Span overlap has weight 0: the match relies on quote similarity alone.")
    assert (report.weights_sentence({"w_a": 0.25, "w_b": 0.75, "w_c": 0.0}, space, titles)
            == "Weights: span overlap (0.25) and quote similarity (0.75); every part counts, in these proportions.")
    three = {"dims": [{"type": "simplex", "names": ["w_a", "w_b", "w_c"], "fixed": {}}]}
    assert (report.weights_sentence({"w_a": 0.0, "w_b": 0.5, "w_c": 0.5}, three)
            == "A has weight 0 and plays no part: the decision rests on b (0.5) and c (0.5).")
    assert report.weights_sentence({"t": 0.1}, {"dims": [{"type": "grid", "name": "t", "values": [0.1]}]}) == ""
    # names from the data (a judge's) are printed as they are: no underscores replaced, no capital added
    judges = {"dims": [{"type": "simplex", "names": ["true_nli", "gpt_4o", "hhem-2.1"], "fixed": {}}]}
    assert (report.weights_sentence({"true_nli": 0.0, "gpt_4o": 0.4, "hhem-2.1": 0.6}, judges)
            == "true_nli has weight 0 and plays no part: the decision rests on gpt_4o (0.4) and hhem-2.1 (0.6).")


def test_the_verdict_names_a_default_called_default_once() -> None:
    from calibration.search.gain import BETTER, sentence

    gain = {"estimate": 0.01, "ci": [0.001, 0.02], "baseline": "default", "verdict": BETTER}
    assert sentence(gain, "kappa").startswith("The calibrated config is better than the default on held-out data")
    assert "the default (std_match)" in sentence({**gain, "baseline": "std_match"}, "kappa")


def test_rank_positions_number_every_row() -> None:
    assert report.rank_positions([1, 1, 1, 4, 5, 5]) == ["1", "2=", "3=", "4", "5", "6="]


@pytest.mark.timeout(300)
def test_a_run_stored_by_the_older_violations_front_still_reads(qtbot, open_window, demo_path) -> None:  # type: ignore[no-untyped-def]
    """Projects keep runs of the violations front the app used before (MatchCalibrator: `defaults` for the presets,
    the best config as weights and thresholds): the panel shows them with the same words."""
    from app.schemes.violations.services import human_labels, pair_table
    from app.store import Project
    from calibration.schemes.violations.calibrator import MatchCalibrator
    from calibration.schemes.violations.config import DEFAULT_EMBEDDING
    from calibration.schemes.violations.space import SearchSpace

    with Project.open(demo_path) as p:
        table = pair_table(p, DEFAULT_EMBEDDING)
        labels = human_labels(p, table)
        cal = MatchCalibrator(space=SearchSpace.preset("std"), folds=3, n_boot=50).fit(
            table, labels.matches, labels.labeled_groups)
        old = cal.to_dict() | {"embedding": DEFAULT_EMBEDDING}
        p.artifacts.save_calibration_run("kappa", {"objective": "kappa", "folds": 3, "group_by": "sample",
                                         "embedding": DEFAULT_EMBEDDING}, old, cal.cv_results_)
    w = open_window(demo_path)
    panel = CalibrationPanel.open_for(w.panels)
    qtbot.addWidget(panel)
    qtbot.waitUntil(lambda: panel.task is None, timeout=60000)
    page = panel.page
    assert "defaults" in old and "baselines" not in old  # the older shape indeed
    assert page.results.headline.text().startswith(f"Held-out kappa of the calibrated config: {old['heldout']['score']:.3f}")
    assert "3 folds grouped by sample" in page.results.headline.text()
    base = page.base_model.records()
    assert base[0]["config"] == "calibrated" and base[0]["score"] == old["heldout"]["score"]
    assert {r["config"]: r["score"] for r in base[1:]} == old["defaults"]  # the presets, from the older key
    assert f"{report.IN_SAMPLE} {old['best']['score']:.4f}" in page.results.figures.text()
    assert f"{old['n_labeled_units']} labeled checkers" in page.summary.text()
    assert page.top_model.rowCount() > 0 and page.top_model.data(page.top_model.index(0, 0)) == "1"
    panel.close()


def test_ceiling_chart_draws_each_judge_of_a_scheme_decided_per_unit() -> None:
    from app.gui.ceiling_chart import bars

    hh = {"kappa": {"estimate": 0.6, "low": 0.2, "high": 0.9}}
    judged = {"human_human": hh, "metric_human": {"per_unit": {"demo-llm": 0.5, "quill_risk": None},
                                                  "kappa_vs_resolved": None}}
    single = {"human_human": hh, "metric_human": {"kappa_vs_resolved": {"estimate": 0.4, "low": 0.1, "high": 0.7}}}
    assert bars({"judge": judged, "violations": single, "none": None}) == [
        ("judge", "humans", hh["kappa"]), ("judge", "metric: demo-llm", {"estimate": 0.5}),
        ("judge", "metric: quill_risk", None), ("violations", "humans", hh["kappa"]),
        ("violations", "metric", single["metric_human"]["kappa_vs_resolved"])]
