"""The schema of a ``distboost-model`` file, checked before anything is built
from it. A model file is user input like any other: every refusal names the
file, the key (as a path such as ``trees[3][0].nodes.feature``) and what was
expected. Estimator classes come from a fixed table, never from looking a
name up in a module.
"""

from __future__ import annotations

import numbers

import numpy as np

from .params import ParamsMixin

FORMAT = "distboost-model"
VERSION = 1


class ModelFileError(ValueError):
    """A model file that is not valid JSON or does not follow the schema."""


def estimator_classes() -> dict[str, type]:
    """The estimators a model file may name: the public classifiers and
    regressors of ``distboost.estimators`` (``import distboost`` imports every
    one of them).

    Found as subclasses of ``ParamsMixin``, so that this module, which the
    estimators use to save themselves, imports none of them.
    """
    found, todo = {}, [ParamsMixin]
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if (cls.__module__.startswith("distboost.estimators.") and not cls.__name__.startswith("_")
                and getattr(cls, "_estimator_type", None) in ("classifier", "regressor")):
            found[cls.__name__] = cls
    return dict(sorted(found.items()))


class _Checker:
    """Walks a decoded model file; ``fail`` names the file and the key."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, message: str):
        where = f", key {key}" if key else ""
        raise ModelFileError(f"model file {self.source}{where}: {message}")

    def typed(self, d: dict, key: str, kind, path: str, optional: bool = False):
        if key not in d:
            if optional:
                return None
            self.fail(_join(path, key), "missing; the file is incomplete or not a model file")
        value = d[key]
        if not _is(value, kind):
            self.fail(_join(path, key), f"expected {_kind_name(kind)}, got {_describe(value)}")
        return value

    def list_of(self, values: list, kind, path: str) -> None:
        for i, v in enumerate(values):
            if not _is(v, kind):
                self.fail(f"{path}[{i}]", f"expected {_kind_name(kind)}, got {_describe(v)}")


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _is(value, kind) -> bool:
    if kind == "number":
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "int_or_none":
        return value is None or _is(value, "int")
    return isinstance(value, kind)


def _kind_name(kind) -> str:
    if isinstance(kind, str):
        return {"int_or_none": "an integer or null"}.get(kind, f"a {kind}")
    return {dict: "an object", list: "a list", str: "a string", bool: "true or false"}[kind]


def _describe(value) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def check_model_dict(d, source: str, path: str = "") -> type:
    """Check a decoded model file against the schema; return its estimator class.

    Raises
    ------
    ModelFileError
        Naming ``source`` (the file), the key and the problem.
    """
    c = _Checker(source)
    if not isinstance(d, dict):
        c.fail(path, f"expected a JSON object at the top, got {_describe(d)}; this is not a "
                     f"distboost model file")
    if d.get("format") != FORMAT:
        c.fail(_join(path, "format"), f"is {d.get('format')!r}, not {FORMAT!r}: this is not a "
                                      f"distboost model file")
    version = c.typed(d, "version", "int", path)
    if version > VERSION or version < 1:
        c.fail(_join(path, "version"), f"model format version {version}; this distboost reads "
                                       f"versions 1 to {VERSION}: upgrade distboost")
    cls = _estimator_class(c, d, path)
    n_features = _check_features(c, d, path)
    _check_bin_mapper(c, c.typed(d, "bin_mapper", dict, path), n_features,
                      d["is_categorical"], _join(path, "bin_mapper"))
    c.list_of(c.typed(d, "base_score", list, path), "number", _join(path, "base_score"))
    _check_trees(c, c.typed(d, "trees", list, path), n_features, _join(path, "trees"))
    c.typed(d, "best_iteration", "int_or_none", path)
    c.typed(d, "evals_result", dict, path)
    classes = c.typed(d, "classes", dict, path, optional=True)
    if classes is not None:
        c.typed(classes, "dtype", str, _join(path, "classes"))
        c.typed(classes, "values", list, _join(path, "classes"))
    elif getattr(cls, "_estimator_type", None) == "classifier":
        c.fail(_join(path, "classes"), f"missing; a {cls.__name__} needs its classes")
    state = c.typed(d, "state", dict, path, optional=True)
    for i, member in enumerate((state or {}).get("members", [])):
        if not (isinstance(member, list) and len(member) == 2 and isinstance(member[0], str)):
            c.fail(_join(path, f"state.members[{i}]"), "expected a [name, model] pair")
        check_model_dict(member[1], source, _join(path, f"state.members[{i}][1]"))
    return cls


def _estimator_class(c: _Checker, d: dict, path: str) -> type:
    name = c.typed(d, "estimator", str, path)
    classes = estimator_classes()
    if name not in classes:
        c.fail(_join(path, "estimator"), f"unknown estimator {name!r}; a model file names one "
                                         f"of {sorted(classes)}")
    cls = classes[name]
    params = c.typed(d, "params", dict, path)
    unknown = sorted(set(params) - set(cls._param_names()))
    if unknown:
        c.fail(_join(path, "params"), f"unknown parameter(s) {unknown} for {name}; valid: "
                                      f"{cls._param_names()}")
    return cls


def _check_features(c: _Checker, d: dict, path: str) -> int:
    names = c.typed(d, "feature_names", list, path)
    c.list_of(names, str, _join(path, "feature_names"))
    if not names:
        c.fail(_join(path, "feature_names"), "is empty; a model has at least one feature")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        c.fail(_join(path, "feature_names"), f"has duplicates {dup[:5]}")
    is_cat = c.typed(d, "is_categorical", list, path)
    c.list_of(is_cat, bool, _join(path, "is_categorical"))
    if len(is_cat) != len(names):
        c.fail(_join(path, "is_categorical"), f"has {len(is_cat)} entries for {len(names)} "
                                              f"feature_names")
    cats = c.typed(d, "categories", dict, path)
    for key, values in cats.items():
        if not (key.isdigit() and int(key) < len(names) and is_cat[int(key)]):
            c.fail(_join(path, f"categories.{key}"), "is not the index of a categorical feature")
        if not isinstance(values, list):
            c.fail(_join(path, f"categories.{key}"), f"expected a list, got {_describe(values)}")
    return len(names)


def _check_bin_mapper(c: _Checker, m: dict, n_features: int, is_cat: list, path: str) -> None:
    max_bins = c.typed(m, "max_bins", "int", path)
    if not 3 <= max_bins <= 256:
        c.fail(_join(path, "max_bins"), f"is {max_bins}; expected 3 to 256")
    edges = c.typed(m, "bin_edges", list, path)
    if len(edges) != n_features:
        c.fail(_join(path, "bin_edges"), f"has {len(edges)} features but feature_names has "
                                         f"{n_features}; the file's parts do not match")
    for j, e in enumerate(edges):
        if not isinstance(e, list):
            c.fail(f"{path}.bin_edges[{j}]", f"expected a list, got {_describe(e)}")
        c.list_of(e, "number", f"{path}.bin_edges[{j}]")
    mapper_cat = c.typed(m, "is_categorical", list, path)
    if mapper_cat != is_cat:
        c.fail(_join(path, "is_categorical"), "differs from the model's is_categorical")
    c.typed(m, "categories", dict, path)


def _check_trees(c: _Checker, rounds: list, n_features: int, path: str) -> None:
    from ..kernels.tree import NODE_DTYPE

    for r, round_trees in enumerate(rounds):
        if not isinstance(round_trees, list):
            c.fail(f"{path}[{r}]", f"expected a list of trees, got {_describe(round_trees)}")
        for t, tree in enumerate(round_trees):
            where = f"{path}[{r}][{t}]"
            if not isinstance(tree, dict):
                c.fail(where, f"expected an object, got {_describe(tree)}")
            nodes = c.typed(tree, "nodes", dict, where)
            sizes = {len(c.typed(nodes, name, list, f"{where}.nodes")) for name in NODE_DTYPE.names}
            if len(sizes) != 1 or 0 in sizes:
                c.fail(f"{where}.nodes", "node columns are empty or of different lengths")
            _check_nodes(c, nodes, n_features, sizes.pop(), f"{where}.nodes")
            c.typed(tree, "cat_bitsets", list, where)


def _check_nodes(c: _Checker, nodes: dict, n_features: int, n_nodes: int, path: str) -> None:
    for name in ("feature", "left", "right", "is_leaf"):
        c.list_of(nodes[name], "int", f"{path}.{name}")
    internal = np.asarray(nodes["is_leaf"]) == 0
    feature = np.asarray(nodes["feature"])[internal]
    if len(feature) and (feature.min() < 0 or feature.max() >= n_features):
        c.fail(f"{path}.feature", f"uses feature index {int(feature.max())} but the model has "
                                  f"{n_features} features (feature_names)")
    children = np.concatenate([np.asarray(nodes["left"])[internal],
                               np.asarray(nodes["right"])[internal]])
    if len(children) and (children.min() < 1 or children.max() >= n_nodes):
        c.fail(path, f"a child index is outside the tree's {n_nodes} nodes")
