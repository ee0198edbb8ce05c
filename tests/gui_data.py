"""Small projects for the GUI tests, built through the store API (no importer needed)."""
from __future__ import annotations

from pathlib import Path

from app.store import Project
from calibration.schemes.rubric.records import RubricSample
from calibration.schemes.violations.config import MatchConfig
from calibration.schemes.violations.records import Violation, ViolationSample

C1 = "prompt-baseline@1.1.0|gpt-3.5-turbo-0613"
C2 = "prompt-cot@2.0.0|gpt-4o"
JACCARD_STD = MatchConfig(name="std_jaccard", weights={"overlap": 0.5, "rule": 0.5}, embedding="jaccard")

EMOJI_TEXT = "Hi 😀😀 team! Ship it <b>now</b> 🚀 please."


def _span(text: str, quote: str) -> tuple[int, int]:
    i = text.index(quote)
    return i, i + len(quote)


def violation_samples() -> list[ViolationSample]:
    t1 = "The patient should take 500mg twice a day. Contact us at support@example.com for refunds."
    s1 = ViolationSample(
        "v1", t1,
        (Violation("no dosage advice", *_span(t1, "take 500mg twice a day"), category="medical",
                   explanation="gives dosage", correction="consult a doctor"),
         Violation("no contact details", *_span(t1, "support@example.com"), category="privacy")),
        {C1: (Violation("no dosage advice", *_span(t1, "500mg twice a day"), category="medical"),
              Violation("no refunds talk", *_span(t1, "for refunds"), category="policy")),
         C2: (Violation("no contact details", *_span(t1, "support@example.com"), category="privacy"),)},
    )
    t2 = EMOJI_TEXT
    s2 = ViolationSample(
        "v2", t2,
        (Violation("no emoji", *_span(t2, "😀😀"), category="style"),
         Violation("no urgency", *_span(t2, "now"), category="tone")),
        {C1: (Violation("no emoji", *_span(t2, "🚀"), category="style"),
              Violation("no urgency pressure", *_span(t2, "<b>now</b>"), category="tone"))},
    )
    t3 = "Our product cures anxiety in 3 days.\r\nGuaranteed results or your money back 💸!"
    s3 = ViolationSample(
        "v3", t3,
        (Violation("no medical claims", *_span(t3, "cures anxiety in 3 days"), category="medical"),),
        {C1: (Violation("no medical claims", *_span(t3, "cures anxiety"), category="medical"),
              Violation("no guarantees", *_span(t3, "Guaranteed results"), category="policy")),
         C2: ()},
    )
    return [s1, s2, s3]


TRAIT = {
    "name": "coverage", "description": "Mentions the key facts about aspirin", "evaluation_mode": "full_matrix",
    "metrics": ["precision", "recall", "f1", "specificity"],
    "tp_instructions": ["mentions pain relief", "mentions blood thinning", "mentions fever"],
    "tn_instructions": ["claims it cures infections"], "repeated_extraction": True,
}


def rubric_samples() -> list[RubricSample]:
    return [
        RubricSample(
            "r1", "What does aspirin do?",
            "Aspirin relieves pain 💊 and thins the blood. It also cures infections.",
            (TRAIT,),
            {"coverage": {"tp": ["relieves pain", "thins the blood"], "fn": ["mentions fever"],
                          "fp": ["cures infections"], "tn": []}},
        ),
        RubricSample(
            "r2", "Is aspirin safe?", "Mostly, but it can upset the stomach.", (TRAIT,),
            {"coverage": {"tp": [], "fn": ["mentions pain relief"], "fp": ["upset the stomach"], "tn": ["claims it cures infections"]}},
        ),
    ]


def make_project(path: Path, *, jaccard: bool = True) -> Path:
    with Project.create(path) as p:
        p.store("violations").write_violation_samples(violation_samples())
        p.store("rubric").write_rubric_samples(rubric_samples())
        if jaccard:
            p.store("violations").save_match_config(JACCARD_STD)
    return path


def shown_tooltip(tip: str | None) -> str:
    """What Qt displays for a tooltip string: rich text is rendered (as QToolTip does), plain text kept."""
    from PySide6.QtGui import QTextDocument, Qt

    if not tip:
        return ""
    if not Qt.mightBeRichText(tip):
        return tip
    doc = QTextDocument()
    doc.setHtml(tip)
    return doc.toPlainText()


# -- fixtures shared by tests/test_gui_*.py (imported there) -----------------------------------------------------
import pytest  # noqa: E402
from PySide6.QtCore import QSettings  # noqa: E402


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    """Settings in a temp ini file, so tests never read or write the user's settings."""
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def project_path(tmp_path: Path) -> Path:
    return make_project(tmp_path / "review.concord")


@pytest.fixture
def open_window(qtbot, settings):  # type: ignore[no-untyped-def]
    """Open a MainWindow on a project path, shown and active (so window shortcuts receive key presses)."""
    from app.gui.window import MainWindow

    windows = []

    def make(path: Path, annotator: str = "tester") -> MainWindow:
        w = MainWindow(Project.open(path), annotator, settings=settings)
        qtbot.addWidget(w)
        windows.append(w)
        w.resize(1400, 900)
        w.show()
        qtbot.waitExposed(w)
        w.activateWindow()
        qtbot.waitUntil(w.isActiveWindow, timeout=3000)
        return w

    yield make
    for w in windows:
        if w.session is not None:
            w.close()
