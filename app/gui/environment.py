"""The process environment the app sets before it starts workers (a module of its own: the window and the
application's start both need it, and the start imports the window)."""
from __future__ import annotations

import os

# the embedding helper process inherits these: loading a model prints no progress bars ("Loading weights …") or
# info lines to the terminal the app was started from (progress shows in the window)
QUIET_ENV = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error", "TQDM_DISABLE": "1",
             "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


def quiet_model_loading() -> None:
    """Silence model-loading progress bars in this process and the processes it starts (unless set otherwise)."""
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)
