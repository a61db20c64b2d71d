"""scikit-learn's estimator contract without depending on scikit-learn:
``__init__`` stores parameters; ``get_params``/``set_params``; clone-able."""

from __future__ import annotations

import inspect

from . import checks

_PARAM_NAMES: dict[type, tuple[str, ...]] = {}


class ParamsMixin:
    """get_params / set_params from the ``__init__`` signature."""

    fit_arguments: frozenset = frozenset()
    """The optional arguments ``fit`` takes besides ``sample_weight`` (what
    an application may pass, e.g. ``"eval_set"``, ``"init_model"``)."""

    @classmethod
    def _param_names(cls) -> list[str]:
        """Named parameters of ``__init__``, following ``**kwargs`` to the parent's
        (read once per class: ``inspect.signature`` costs ~0.3 ms a fit)."""
        if cls not in _PARAM_NAMES:
            _PARAM_NAMES[cls] = tuple(cls._signature_names())
        return list(_PARAM_NAMES[cls])

    @classmethod
    def _signature_names(cls) -> list[str]:
        names = set()
        for klass in cls.__mro__:
            init = klass.__dict__.get("__init__")
            if init is None:
                continue
            params = inspect.signature(init).parameters.values()
            names.update(p.name for p in params
                         if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
            if not any(p.kind == p.VAR_KEYWORD for p in params):
                break
        return sorted(names)

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

    def __getstate__(self):
        # a Dask client does not travel (to workers, or into pickles)
        state = self.__dict__.copy()
        if "client" in state:
            state["client"] = None
        return state

    def _validate_params(self) -> None:
        """Every hyperparameter against ``_parameter_constraints`` (start of ``fit``)."""
        checks.validate_params(self)

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            raise checks.not_fitted(self)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def _checked(self, X):
        """``X`` for prediction: the model is fitted and X has its features.

        Dask collections are checked on their metadata; their partitions are
        checked again where they are predicted.
        """
        self._check_fitted()
        if X is not None and hasattr(X, "dask"):
            return checks.check_dask_X(self, X)
        return checks.check_predict_X(self, X)

    def __sklearn_tags__(self):
        """Tags for scikit-learn's tools (when it is installed): scipy sparse
        input (entries not stored are missing values), NaN allowed, pandas
        categories allowed, one output."""
        from sklearn.utils import ClassifierTags, InputTags, RegressorTags, Tags, TargetTags

        kind = getattr(self, "_estimator_type", None)
        return Tags(
            estimator_type=kind,
            target_tags=TargetTags(required=kind is not None),
            input_tags=InputTags(allow_nan=True, categorical=True, sparse=True),
            classifier_tags=ClassifierTags() if kind == "classifier" else None,
            regressor_tags=RegressorTags() if kind == "regressor" else None,
        )

    def __repr__(self) -> str:
        defaults = {}
        for klass in reversed(type(self).__mro__):
            init = klass.__dict__.get("__init__")
            if init is not None:
                defaults.update(inspect.signature(init).parameters)
        changed = [
            f"{k}={v!r}" for k, v in self.get_params(deep=False).items()
            if k in defaults and not _same(defaults[k].default, v)
        ]
        return f"{type(self).__name__}({', '.join(changed)})"


def _same(a, b) -> bool:
    try:
        return a is b or bool(a == b)
    except (TypeError, ValueError):
        return False
