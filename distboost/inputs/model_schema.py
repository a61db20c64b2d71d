"""The schema of a ``distboost-model`` file, checked before anything is built
from it. A model file is user input like any other: every refusal is a
``ModelFileError`` naming the file, the key (as a path such as
``trees[3][0].nodes.left[1]``) and what was expected. Estimator classes come
from a fixed table, never from looking a name up in a module.

This module checks the file's parts (format, estimator, features and their
categories, bins, base score, classes, history); ``model_trees`` checks the
trees, which the kernels then walk without checking, and ``model_layouts``
what each kind of estimator keeps (outputs, state, members).
"""

from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import NamedTuple

import numpy as np

from ..kernels.common import MAX_BINS, MISSING_BIN
from .model_checker import (
    DAMAGED,
    Checker,
    ModelFileError,
    describe,
    finite_number,
    is_kind,
    join,
    short,
)
from .model_layouts import Parts, check_layout
from .model_trees import CheckedTrees, FeatureBins, check_trees
from .params import ParamsMixin

__all__ = ["FORMAT", "VERSION", "CheckedModel", "ModelFileError", "check_model",
           "check_model_dict", "estimator_classes"]

FORMAT = "distboost-model"
VERSION = 1
LABEL_KINDS = "biufUO"
"""numpy kinds of class labels: bool, integers, floats, text, Python objects."""


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
                and getattr(cls, "_estimator_type", None) in ("classifier", "regressor", "ranker")):
            found[cls.__name__] = cls
    return dict(sorted(found.items()))


class CheckedModel(NamedTuple):
    """A decoded model file that follows the schema."""

    cls: type  # the estimator class it names
    trees: CheckedTrees
    bound: float  # no prediction is larger in magnitude


def check_model_dict(d, source: str, path: str = "") -> type:
    """Check a decoded model file against the schema; return its estimator class.

    Parameters
    ----------
    d : object
        The decoded file (a dict, if it is a model file).
    source : str
        The file, named in every refusal.
    path : str, default ""
        Where ``d`` is within the file (a voting member's ``state.members[i][1]``).

    Raises
    ------
    ModelFileError
        Naming ``source`` (the file), the key and the problem.
    """
    return check_model(d, source, path).cls


def check_model(d, source: str, path: str = "") -> CheckedModel:
    """``check_model_dict``, keeping what the checks read (the trees as arrays,
    from which ``model_file`` builds the estimator's trees).

    Returns
    -------
    CheckedModel

    Raises
    ------
    ModelFileError
        The first thing wrong: the file, the key (in a tree, the tree and the
        node) and what was expected.
    """
    c = Checker(source)
    if not isinstance(d, dict):
        c.fail(path, f"expected a JSON object at the top, got {describe(d)}; this is not a "
                     f"distboost model file")
    if d.get("format") != FORMAT:
        c.fail(join(path, "format"), f"is {short(d.get('format'))}, not {FORMAT!r}: this "
                                     f"is not a distboost model file")
    version = c.typed(d, "version", "int", path)
    if version > VERSION or version < 1:
        c.fail(join(path, "version"), f"model format version {version}; this distboost reads "
                                      f"versions 1 to {VERSION}: upgrade distboost")
    cls = _estimator_class(c, d, path)
    names, is_cat, categories = _check_features(c, d, path)
    bins = _check_bin_mapper(c, c.typed(d, "bin_mapper", dict, path), names, is_cat, categories,
                             join(path, "bin_mapper"))
    key = join(path, "base_score")
    base = c.array(c.typed(d, "base_score", list, path), "number", lambda i: f"{key}[{i}]")
    c.finite(base, lambda i: f"{key}[{i}]")
    n_classes = _check_classes(c, d, cls, path)
    trees = check_trees(c, c.typed(d, "trees", list, path), bins, join(path, "trees"))
    best = c.typed(d, "best_iteration", "int_or_none", path)
    if best is not None and best < 0:
        c.fail(join(path, "best_iteration"), f"is {best}; a round index is >= 0")
    _check_history(c, c.typed(d, "evals_result", dict, path), join(path, "evals_result"))
    c.typed(d, "state", dict, path, optional=True)
    n_targets = c.typed(d, "n_targets", "int", path, optional=True)
    if n_targets is not None and (n_targets < 2 or getattr(cls, "_model_layout", None)
                                  != "boosting"):
        c.fail(join(path, "n_targets"), f"is {n_targets}; a multi-output model has k >= 2 "
                                        f"targets, and only gradient boosting has them")
    _check_target_names(c, d, n_targets, path)

    def member(md, where: str) -> tuple[type, float]:
        checked = check_model(md, source, where)
        return checked.cls, checked.bound

    bound = check_layout(c, d, Parts(cls, n_classes, len(names), base, trees, member), path)
    return CheckedModel(cls, trees, bound)


def _check_target_names(c: Checker, d: dict, n_targets: int | None, path: str) -> None:
    """A multi-output model's ``target_names``: optional, k distinct texts."""
    names = c.typed(d, "target_names", list, path, optional=True)
    if names is None:
        return
    key = join(path, "target_names")
    if n_targets is None or len(names) != n_targets:
        c.fail(key, f"has {len(names)} name(s) but the model has {n_targets or 1} target(s)")
    if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
        c.fail(key, f"is {short(names)}; a multi-output model's target names are distinct texts")


def _estimator_class(c: Checker, d: dict, path: str) -> type:
    name = c.typed(d, "estimator", str, path)
    classes = estimator_classes()
    if name not in classes:
        c.fail(join(path, "estimator"), f"unknown estimator {name[:60]!r}; a model file names one "
                                        f"of {sorted(classes)}")
    cls = classes[name]
    params = c.typed(d, "params", dict, path)
    unknown = sorted(map(str, set(params) - set(cls._param_names())))
    if unknown:
        c.fail(join(path, "params"), f"unknown parameter(s) {short(unknown[:5])} for {name}; valid: "
                                     f"{cls._param_names()}")
    return cls


def _check_features(c: Checker, d: dict, path: str) -> tuple[list, list, dict]:
    """feature_names, is_categorical and categories (the categories of each
    categorical feature: distinct labels, at most 255)."""
    names = c.typed(d, "feature_names", list, path)
    c.list_of(names, str, join(path, "feature_names"))
    if not names:
        c.fail(join(path, "feature_names"), "is empty; a model has at least one feature")
    if len(set(names)) != len(names):
        dup = sorted(n for n, k in Counter(names).items() if k > 1)
        c.fail(join(path, "feature_names"), f"has duplicates {short(dup[:5])}")
    is_cat = c.typed(d, "is_categorical", list, path)
    c.list_of(is_cat, bool, join(path, "is_categorical"))
    if len(is_cat) != len(names):
        c.fail(join(path, "is_categorical"), f"has {len(is_cat)} entries for {len(names)} "
                                             f"feature_names")
    categories = c.typed(d, "categories", dict, path)
    _check_categories(c, categories, is_cat, join(path, "categories"))
    return names, is_cat, categories


def _check_categories(c: Checker, categories: dict, is_cat: list, path: str) -> None:
    for j in (j for j, cat in enumerate(is_cat) if cat and str(j) not in categories):
        c.fail(f"{path}.{j}", f"missing: categorical feature {j} has no categories; {DAMAGED}")
    for key, values in categories.items():
        where = f"{path}.{key[:20]}"
        if not (key.isascii() and key.isdigit() and int(key) < len(is_cat) and is_cat[int(key)]):
            c.fail(where, "is not the index of a categorical feature")
        if not isinstance(values, list):
            c.fail(where, f"expected a list, got {describe(values)}")
        for i, v in enumerate(values):
            if not (isinstance(v, str) or finite_number(v)):
                c.fail(f"{where}[{i}]", f"expected a category (text or a finite number), got "
                                        f"{describe(v)}")
        if len(set(values)) != len(values):
            c.fail(where, f"lists a category twice (categories are distinct); {DAMAGED}")
        if len(values) > MISSING_BIN:
            c.fail(where, f"has {len(values)} categories; a model has at most {MISSING_BIN} a "
                          f"feature")


def _check_bin_mapper(c: Checker, m: dict, names: list, is_cat: list, categories: dict,
                      path: str) -> FeatureBins:
    """The bins: for each numeric feature at most max_bins - 2 finite, strictly
    increasing edges; none for a categorical one; the model's categories."""
    max_bins = c.typed(m, "max_bins", "int", path)
    if not 3 <= max_bins <= MAX_BINS:
        c.fail(join(path, "max_bins"), f"is {max_bins}; expected 3 to {MAX_BINS}")
    edges = c.typed(m, "bin_edges", list, path)
    if len(edges) != len(names):
        c.fail(join(path, "bin_edges"), f"has {len(edges)} features but feature_names has "
                                        f"{len(names)}; the file's parts do not match")
    for j, e in enumerate(edges):
        if not isinstance(e, list):
            c.fail(f"{path}.bin_edges[{j}]", f"expected a list, got {describe(e)}")
        most = 0 if is_cat[j] else max_bins - 2
        if len(e) > most:
            rule = "a categorical feature has none" if is_cat[j] else "max_bins - 2"
            c.fail(f"{path}.bin_edges[{j}]", f"has {len(e)} edges; feature {short(names[j])} has at "
                                             f"most {most} ({rule}); {DAMAGED}")
    start = np.cumsum([0, *map(len, edges)], dtype=np.int64)
    feature = np.repeat(np.arange(len(edges)), np.diff(start))

    def key(i: int) -> str:
        return f"{path}.bin_edges[{feature[i]}][{i - start[feature[i]]}]"

    flat = c.array(list(chain.from_iterable(edges)), "number", key)
    c.finite(flat, key, "a finite bin edge")
    rises = np.flatnonzero((np.diff(flat) <= 0) & (np.diff(feature) == 0))
    if len(rises):
        c.fail(key(rises[0] + 1), f"is {float(flat[rises[0] + 1])!r}, not above the edge before "
                                  f"it ({float(flat[rises[0]])!r}); bin edges increase strictly; "
                                  f"{DAMAGED}")
    if c.typed(m, "is_categorical", list, path) != is_cat:
        c.fail(join(path, "is_categorical"), "differs from the model's is_categorical")
    if c.typed(m, "categories", dict, path) != categories:
        c.fail(join(path, "categories"), f"differs from the model's categories; {DAMAGED}")
    return FeatureBins(names, np.array(is_cat, bool), flat, start)


def _check_classes(c: Checker, d: dict, cls: type, path: str) -> int | None:
    """A classifier's classes (distinct, sorted labels of one dtype, at least
    two); their number. A regressor has none."""
    classes = c.typed(d, "classes", dict, path, optional=True)
    classifier = getattr(cls, "_estimator_type", None) == "classifier"
    key = join(path, "classes")
    if classes is None:
        if classifier:
            c.fail(key, f"missing; a {cls.__name__} needs its classes")
        return None
    if not classifier:
        c.fail(key, f"a {cls.__name__} has no classes; {DAMAGED}")
    text = c.typed(classes, "dtype", str, key)
    values = c.typed(classes, "values", list, key)
    for i, v in enumerate(values):
        if not (isinstance(v, str) or is_kind(v, "number") or is_kind(v, bool)):
            c.fail(f"{key}.values[{i}]", f"expected a class label, got {describe(v)}")
    try:
        dtype = object if text == "object" else np.dtype(text)
        if dtype is not object and dtype.kind not in LABEL_KINDS:
            raise TypeError("not a dtype of class labels (bool, numbers, text)")
        if dtype is not object and len(values) * dtype.itemsize > _label_bytes(values):
            raise TypeError(f"{dtype.itemsize} bytes a label, more than the labels need")
        labels = np.array(values, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        c.fail(key, f"cannot read labels of dtype {text[:40]!r}: {exc}")
    if labels.ndim != 1 or labels.tolist() != values:
        c.fail(f"{key}.values", f"are not labels of dtype {text[:40]!r} (they would read as "
                                f"{describe(labels.tolist())}); {DAMAGED}")
    try:
        ordered = np.unique(labels)
    except TypeError:
        ordered = None
    if ordered is None or len(ordered) != len(labels) or ordered.tolist() != values:
        c.fail(f"{key}.values", f"are not distinct and sorted (as numpy.unique gives them); "
                                f"{DAMAGED}")
    if len(values) < 2:
        c.fail(f"{key}.values", f"has {len(values)} class(es); a classifier has at least two")
    return len(values)


def _label_bytes(values: list) -> int:
    """What an array of the labels may take: 16 times their text as UTF-32, and 64 kB."""
    return 64 * sum(len(v) + 1 if isinstance(v, str) else 8 for v in values) + 2**16


def _check_history(c: Checker, history: dict, path: str) -> None:
    """evals_result: per evaluation set, per metric, a list of numbers."""
    for name, metrics in history.items():
        if not isinstance(metrics, dict):
            c.fail(f"{path}.{name[:40]}", f"expected an object of metrics, got "
                                          f"{describe(metrics)}")
        for metric, values in metrics.items():
            key = f"{path}.{name[:40]}.{metric[:40]}"
            if not isinstance(values, list):
                c.fail(key, f"expected a list of numbers, got {describe(values)}")
            c.array(values, "number", lambda i, key=key: f"{key}[{i}]")
