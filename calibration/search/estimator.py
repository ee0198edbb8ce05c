"""The scikit-learn estimator API (get_params / set_params / repr, `sklearn.base.clone`) without importing sklearn.

Why not `sklearn.base.BaseEstimator`: importing it loads sklearn.utils, which loads scipy.stats, scipy.sparse.linalg
and more -- 1.2-1.7 s of a first `concord calibrate` that needs none of them. This mixin follows BaseEstimator's
rules: parameters are the keyword arguments of `__init__`, stored under their own names; `get_params(deep=True)`
adds `<param>__<sub>` for parameters that have parameters; `set_params` takes both forms; `clone` rebuilds the
estimator from `get_params(deep=False)` (sklearn's clone accepts any object with get_params).
"""
from __future__ import annotations

import inspect
from typing import Any


class EstimatorParams:
    """get_params / set_params / __repr__ as scikit-learn's BaseEstimator defines them."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params: Any) -> Any:
        valid = self.get_params(deep=True)
        nested: dict[str, dict[str, Any]] = {}
        for full, value in params.items():
            key, delim, sub = full.partition("__")
            if key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for estimator {self}. Valid parameters are: "
                                 f"{self._get_param_names()!r}.")
            if delim:
                nested.setdefault(key, {})[sub] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub_params in nested.items():
            valid[key].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        """Class name and the parameters that differ from their defaults, as scikit-learn prints estimators."""
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = []
        for k, v in self.get_params(deep=False).items():
            d = defaults.get(k, inspect.Parameter.empty)
            try:
                same = d is v or bool(d == v)
            except Exception:  # noqa: BLE001 - arrays and odd objects: show them
                same = False
            if not same:
                changed.append(f"{k}={v!r}")
        return f"{type(self).__name__}({', '.join(changed)})"
