"""Whether a calibrated config may be applied: only when its held-out gain over the scheme's default is shown to
be positive (calibration.search.gain: the paired interval's lower bound above 0), unless the user forces it. One
rule for `concord calibrate --apply` and the app's Apply."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.errors import UsageError
from calibration.search.gain import sentence


def apply_gate(gain: Mapping[str, Any] | None, name: str, force: bool, objective: str = "") -> dict[str, Any]:
    """What applying the calibrated config as `name` records: {} when it is promoted (or there is no default to
    compare with), {"forced": True} when it is not and `force` is set; otherwise refused (UsageError naming
    --force; nothing is saved)."""
    if gain is None or gain.get("promoted"):
        return {}
    if not force:
        raise UsageError(f"--apply {name}: {sentence(dict(gain), objective)} Nothing was saved; add --force to apply "
                         "it anyway (it is recorded as forced).")
    return {"forced": True}
