"""scikit-learn's estimator contract without depending on scikit-learn:
``__init__`` stores parameters; ``get_params``/``set_params``; clone-able."""

from __future__ import annotations

import inspect


class ParamsMixin:
    """get_params / set_params from the ``__init__`` signature."""

    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return sorted(
            p.name for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        )

    def get_params(self, deep: bool = True) -> dict:
        out = {}
        for name in self._param_names():
            value = getattr(self, name)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update({f"{name}__{k}": v for k, v in value.get_params().items()})
            out[name] = value
        return out

    def set_params(self, **params):
        valid = self._param_names()
        for key, value in params.items():
            name, _, sub = key.partition("__")
            if name not in valid:
                raise ValueError(
                    f"invalid parameter {name!r} for {type(self).__name__}; valid: {valid}"
                )
            if sub:
                getattr(self, name).set_params(**{sub: value})
            else:
                setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        defaults = inspect.signature(type(self).__init__).parameters
        changed = [
            f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
            if k in defaults and defaults[k].default is not v and defaults[k].default != v
        ]
        return f"{type(self).__name__}({', '.join(changed)})"
