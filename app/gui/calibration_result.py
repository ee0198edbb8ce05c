"""What a calibration run found, said once for every page of the calibration panel (the generic page and a scheme's
own) and in the words `concord calibrate` prints (calibration/search/report.py), so the panel says one thing
clearly (issue #27 item 4):

1. the verdict (is the calibrated config better than the default on held-out data: calibration_verdict.py);
2. the held-out score of the calibrated config with its 95% interval and how the folds were made;
3. the chosen config's other scores, each named (all labeled units, in-sample; cross-validated);
4. what the chosen weights mean, in a sentence;
5. the run's counts; the held-out table beside the presets with the gain, as the CLI's; the tie-break (`tie`,
   placed by each page over its top-configs table, the ranking it explains).

`top_columns` builds the top-configs table's columns the same way for every page: '#' numbers the rows (ties
marked '='), the score columns say which figure they are.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
from PySide6.QtWidgets import QHBoxLayout, QVBoxLayout, QWidget

from app.gui import calibration_verdict as verdict
from app.gui.models import Column, RecordTableModel, ranked_score_columns
from app.gui.plaintext import plain_label
from app.gui.views.base import make_table
from calibration.search import report


def _gain(g: Any) -> str:
    return "" if g is None else f"{g:+.3f}"


BASELINE_COLUMNS = (
    Column("label", "Config"),
    Column("score", "Held-out", report.fmt, True, report.HELD_OUT_TIP),
    Column("ci", "95% CI", lambda ci: "" if ci is None else report.fmt_interval(ci), True,
           "Bootstrap interval over the CV groups"),
    Column("gain", "Gain", _gain, True, "The calibrated config's held-out score minus this preset's (paired)"),
    Column("gain_ci", "Gain 95% CI", lambda ci: "" if ci is None else report.fmt_interval(ci), True,
           "Paired interval of the gain: above 0 means better than the preset"),
    Column("note", "How"),
)


def baseline_rows(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The held-out table's rows: the calibrated config, then each preset on the same folds with the gain over it
    (the CLI's table). Runs stored before the presets were named `baselines` have them as `defaults`."""
    h = result.get("heldout") or {}
    rows = [{"config": "calibrated", "label": "calibrated", "score": h.get("score"), "ci": h.get("ci"), "note": "chosen on the other folds",
             "_bold": True}]
    gain = result.get("gain") or {}
    per = gain.get("baselines") or {}
    scores = result.get("baselines") or result.get("defaults") or {}
    cis = result.get("baselines_ci") or result.get("defaults_ci") or {}
    for name, score in scores.items():
        g = per.get(name) or {}
        rows.append({"config": name, "label": name + (" (default)" if name == gain.get("baseline") else ""), "score": score,
                     "ci": cis.get(name), "gain": g.get("estimate"), "gain_ci": g.get("ci"),
                     "note": "preset, same folds"})
    return rows


def top_records(cv: pd.DataFrame | None, top: int, **extra: Any) -> list[dict[str, Any]]:
    """The best `top` rows of cv_results as records, numbered (`_pos`: 1, 2, 3..., '=' when tied with the row
    above), each with its config id (`_id`)."""
    if cv is None:
        return []
    rows = cv.sort_values("rank", kind="stable").head(top)
    recs = [{**r, "_id": int(i), **extra} for i, r in zip(rows.index.tolist(), rows.to_dict("records"))]
    for rec, pos in zip(recs, report.rank_positions([r.get("rank") for r in recs])):
        rec["_pos"] = pos
        rec["_tip__pos"] = ("tied with the row above: same score on all labeled units (the tie-break orders them)"
                            if pos.endswith("=") else f"position {pos} in the ranking")
    return recs


def top_columns(recs: Sequence[Mapping[str, Any]], middle: Sequence[Column]) -> tuple[Column, ...]:
    """'#', the config's own columns (`middle`), then the two named scores (decimals that tell rows apart)."""
    return (Column("_pos", "#", align_right=True, tip="Position in the ranking; '=': tied with the row above"),
            *middle, *ranked_score_columns([r.get("score") for r in recs], [r.get("mean_test_score") for r in recs]))


class RunSummary(QWidget):
    """The texts and the held-out table of one run (see the module's docstring); `show_run(None)` clears it."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        texts = QVBoxLayout()
        texts.setSpacing(2)
        self.verdict = verdict.verdict_label()  # the verdict first, in words (issue #26)
        self.headline = plain_label(wrap=True, selectable=True)
        self.headline.setObjectName("heldout_headline")
        self.figures = plain_label(wrap=True, selectable=True)
        self.figures.setObjectName("other_figures")
        self.figures.setStyleSheet("color:#424242;")
        self.weights = plain_label(wrap=True, selectable=True)
        self.weights.setObjectName("weights_meaning")
        self.summary = plain_label(wrap=True, selectable=True)
        self.summary.setObjectName("run_summary")
        self.warnings = plain_label(wrap=True)
        self.warnings.setStyleSheet("color:#b71c1c;")
        self.tie = plain_label(wrap=True)  # about the ranking: each page shows it over its top-configs table
        self.tie.setObjectName("tie_break")
        for w in (self.verdict, self.headline, self.figures, self.weights, self.summary, self.warnings):
            texts.addWidget(w)
        texts.addStretch(1)
        lay.addLayout(texts, 3)
        table = QVBoxLayout()
        self.base_model = RecordTableModel(BASELINE_COLUMNS, self)
        self.base_table = make_table(self.base_model, 5)
        self.base_table.setObjectName("heldout_baselines")
        self.base_table.setToolTip("The held-out score of the calibrated config next to each preset's on the same "
                                   "folds, and the gain over each (paired 95% interval)")
        self.base_table.setMaximumHeight(130)
        table.addWidget(self.base_table)
        table.addStretch(1)
        lay.addLayout(table, 2)

    def clear(self, message: str = "") -> None:
        verdict.show_verdict(self.verdict, None)
        for label in (self.headline, self.figures, self.weights, self.warnings, self.tie):
            label.setText("")
        self.summary.setText(message)
        self.base_model.set_records([])

    def show_run(self, result: Mapping[str, Any], cv: pd.DataFrame | None, details: str,
                 titles: Mapping[str, str] | None = None, decides: str = "the decision") -> None:
        """`details`: the run's counts line (each page words its own units); `titles` / `decides`: the weights'
        names and what they decide, for runs stored before the sentence was (`weights_meaning`)."""
        verdict.show_verdict(self.verdict, dict(result))
        self.headline.setText(report.headline(result))
        first = None if cv is None or cv.empty else cv.sort_values("rank", kind="stable").iloc[0]
        self.figures.setText(report.other_figures(result, None if first is None else first.get("mean_test_score"),
                                                  None if first is None else first.get("std_test_score")))
        best = result.get("best") or {}
        meaning = result.get("weights_meaning")  # stored with the run, in the problem's words (as the CLI's)
        self.weights.setText(meaning if meaning is not None else report.weights_sentence(
            best.get("config") or config_of_best(best), result.get("space"), titles, decides))
        self.weights.setVisible(bool(self.weights.text()))
        self.summary.setText(details)
        self.warnings.setText("\n".join(result.get("warnings") or []))
        self.warnings.setVisible(bool(self.warnings.text()))
        n_tied = int(best.get("n_tied") or 1)
        self.tie.setText(
            f"{n_tied:,} configs tie at the best score on {report.IN_SAMPLE}; chose the one closest to "
            f"{best.get('tie_anchor') or 'the first'} (then the lowest config id)." if n_tied > 1 else
            f"One config has the best score on {report.IN_SAMPLE}.")
        self.base_model.set_records(baseline_rows(result))


def config_of_best(best: Mapping[str, Any]) -> dict[str, Any]:
    """The chosen config's dimensions from a run stored in the violations front's older shape (weights and
    thresholds apart): w_<component> and t_<threshold> as the space names them."""
    out: dict[str, Any] = {f"w_{k}": v for k, v in (best.get("weights") or {}).items()}
    out.update({f"t_{k}": v for k, v in (best.get("thresholds") or {}).items()})
    return out
