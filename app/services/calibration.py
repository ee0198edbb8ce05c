"""The violations calibration service's old import path: it lives in app/services/schemes/violations_calibration.py,
the scheme's adapter (a generic services module imports no scheme). Kept for the violations view's imports."""
from __future__ import annotations

from app.services.schemes.violations_calibration import (  # noqa: F401
    apply_config, calibrate, make_space, next_version,
)
