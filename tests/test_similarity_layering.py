"""The calibration side of the matching engine stays free of Qt, SQL, network clients and heavy models."""
from __future__ import annotations

import subprocess
import sys

FORBIDDEN = ("PySide6", "sqlite3", "sqlite_utils", "openai", "app", "sentence_transformers", "torch")


def test_importing_the_engine_pulls_in_nothing_forbidden() -> None:
    code = (
        "import sys\n"
        "import calibration.similarity, calibration.schemes.violations\n"
        "from calibration.schemes.violations import reference, matching, metrics, pairs\n"
        "from calibration.similarity import make_similarity, SentenceTransformerEmbedder\n"
        "make_similarity('jaccard'); SentenceTransformerEmbedder()\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
