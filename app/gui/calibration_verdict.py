"""The verdict on a calibration run, shown first on every calibration page, and the question Apply asks when the
calibrated config is no better than the default (the app's side of `concord calibrate --apply ... --force`).

The words come from calibration.search.gain.sentence, as the CLI prints them; the rule from the run's stored
`gain` (promoted: the paired interval's lower bound above 0)."""
from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QLabel, QMessageBox, QWidget

from app.gui.plaintext import plain_label, plain_message
from calibration.search.gain import sentence

FORCED_ORIGIN = "calibration (forced)"


def verdict_label() -> QLabel:
    """The page's first result line: the verdict in words (bold; green when promoted)."""
    label = plain_label(wrap=True, selectable=True)
    label.setObjectName("gain_verdict")
    return label


def verdict_text(result: dict[str, Any] | None) -> str:
    if not result:
        return ""
    if "gain" not in result:  # a run stored before the gain was computed
        return "No verdict for this run (made before Concord compared the calibrated config with the default): run it again."
    return sentence(result["gain"], result.get("objective") or "")


def show_verdict(label: QLabel, result: dict[str, Any] | None) -> None:
    label.setText(verdict_text(result))
    good = bool(((result or {}).get("gain") or {}).get("promoted"))
    label.setStyleSheet("font-weight:bold;" + ("color:#1b5e20;" if good else ""))


def needs_force(result: dict[str, Any] | None) -> bool:
    """Applying a config from this run asks first: the run has a default to beat and did not beat it."""
    gain = (result or {}).get("gain")
    return gain is not None and not gain.get("promoted")


def confirm_force(parent: QWidget | None, result: dict[str, Any]) -> bool:
    """Ask whether to apply anyway; the answer is recorded as forced (origin `FORCED_ORIGIN`)."""
    box = plain_message(parent, "Apply a config that is no better than the default?",
                        f"{verdict_text(result)}\n\nApply it anyway? It is recorded as forced.",
                        QMessageBox.Icon.Question)
    box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Yes
