"""Detail views per scheme. A new scheme registers its view here; the window looks views up by scheme."""
from __future__ import annotations

from app.gui.views.base import DetailView, ViewContext

VIEWS: dict[str, type[DetailView]] = {}


def register(view: type[DetailView]) -> type[DetailView]:
    VIEWS[view.scheme] = view
    return view


def _load_builtin() -> None:
    from app.gui.views.rubric import RubricView
    from app.gui.views.violations import ViolationsView

    register(ViolationsView)
    register(RubricView)


_load_builtin()

__all__ = ["VIEWS", "DetailView", "ViewContext", "register"]
