"""Detail views per scheme, found through the scheme loader: no list of scheme names here.

For every scheme of calibration.schemes.base.registry(), the view its manifest contributes (app/schemes/loader.py:
`views` -> `VIEW`, checked against its contract; a separately installed package's manifest comes through the
`concord.schemes` entry points) is registered; tests and notebooks may also call `register()`. A scheme without a
view of its own is shown by the generic view (app/gui/views/generic.py), so any registered scheme can be reviewed.

The window, its menus and the cheat sheet are built from `all_actions()` / `menus()`: the common actions
(app/gui/actions.py) plus every view's own.
"""
from __future__ import annotations

from app.gui.actions import ACTIONS, MENUS, ActionSpec
from app.gui.views.base import DetailView, FilterSpec, ViewContext
from app.schemes import loader
from calibration.schemes.base import registry

VIEWS: dict[str, type[DetailView]] = {}
_tried: set[str] = set()  # scheme names whose contributed view was looked for


def register(view: type[DetailView]) -> type[DetailView]:
    if not view.scheme:
        raise ValueError(f"{view.__name__}: a view needs the name of its scheme (class attribute `scheme`)")
    VIEWS[view.scheme] = view
    return view


def unregister(scheme: str) -> None:
    VIEWS.pop(scheme, None)
    _tried.discard(scheme)


def load() -> dict[str, type[DetailView]]:
    """Load the views of registered schemes not looked for yet (cheap after the first call)."""
    for name in registry().names():
        if name in _tried or name in VIEWS:
            continue
        _tried.add(name)
        view = loader.view(name)
        if view is not None:  # else no view of its own: the generic view shows it
            VIEWS.setdefault(name, view)
    return VIEWS


def view_class(scheme: str) -> type[DetailView]:
    """The view of `scheme`, or the generic view."""
    load()
    view = VIEWS.get(scheme)
    if view is not None:
        return view
    from app.gui.views.generic import GenericView

    return GenericView


def view_classes() -> list[type[DetailView]]:
    """The views with their own module or plug-in, in the registry's order of schemes (plug-in views last)."""
    load()
    order = {n: i for i, n in enumerate(registry().names())}
    return sorted(VIEWS.values(), key=lambda v: order.get(v.scheme, len(order)))


def menu_of(view: type[DetailView]) -> str:
    if view.menu:
        return view.menu
    return registry().get(view.scheme).title if view.scheme in registry() else view.scheme.title()


def all_actions() -> tuple[ActionSpec, ...]:
    """The common actions and every view's own, each view's in its menu."""
    out = list(ACTIONS)
    for view in view_classes():
        menu = menu_of(view)
        out += [a if a.menu == menu else ActionSpec(a.id, a.title, a.shortcuts, a.handler, menu, a.tip, a.checkable)
                for a in view.action_specs]
    return tuple(out)


def menus() -> tuple[str, ...]:
    """The common menus with each view's menu before "Tools"."""
    own = [m for m in dict.fromkeys(menu_of(v) for v in view_classes() if v.action_specs) if m not in MENUS]
    i = MENUS.index("Tools")
    return (*MENUS[:i], *own, *MENUS[i:])


__all__ = ["VIEWS", "DetailView", "FilterSpec", "ViewContext", "all_actions", "load", "menus", "register",
           "unregister", "view_class", "view_classes"]
