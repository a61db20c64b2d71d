"""The benchmark's shapes: which W1 variant, which trees, and each library's parameters.

docs/benchmarks.md asks for W1 (binary, depth 6) and three shapes users bring:
best-first growth to 63 leaves, 10 classes, and 500 features; ``shallow`` (many
rounds of depth-3 trees) exposes the fixed cost of a round on Dask. A `Shape` holds
the data set (rows, partitions, task, extra features), the default number of
rounds, the tree shape, and turns them into each library's parameters, so
that every system trains the same model. Common to all: learning rate 0.1,
256 bins, L2 regularization 1, log loss (binomial, or multinomial deviance /
softmax for 10 classes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import w1

LEARNING_RATE = 0.1
N_BINS = 256
REG_LAMBDA = 1.0
LABEL = "label"


@dataclass(frozen=True)
class Shape:
    """One benchmark shape: data, default size, rounds and tree shape.

    Parameters
    ----------
    name : str
        The ``--shape`` value.
    title : str
        The report's title.
    rows, partitions, rounds : int
        Defaults of ``--rows``, ``--partitions`` and ``--rounds``.
    task : {"binary", "multiclass"}
        W1's label: 0/1, or ten classes 0..9.
    extra_features : int
        Columns beyond W1's 28 (wide W1).
    max_depth : int or None
        Depth-wise trees of this depth; None with ``max_leaves`` for best-first.
    max_leaves : int or None
        Best-first growth to this many leaves, depth unlimited.
    """

    name: str
    title: str
    rows: int
    partitions: int
    rounds: int
    task: str = "binary"
    extra_features: int = 0
    max_depth: int | None = 6
    max_leaves: int | None = None

    @property
    def n_classes(self) -> int:
        """Number of classes of the label."""
        return 10 if self.task == "multiclass" else 2

    @property
    def features(self) -> list[str]:
        """The feature columns, in order."""
        return w1.feature_names(self.extra_features)

    def generate(self, rows: int, partitions: int, cache_dir: Path | None = None) -> Path:
        """Write this shape's W1 variant to the cache (if needed); return its folder."""
        return w1.generate(rows, partitions, task=self.task, cache_dir=cache_dir,
                           extra_features=self.extra_features)

    def trees(self) -> str:
        """The tree shape in words, for the report's context line."""
        if self.max_leaves:
            return f"best-first to {self.max_leaves} leaves, depth unlimited"
        return f"depth {self.max_depth}"

    def distboost_params(self, rounds: int) -> dict[str, Any]:
        """Keyword arguments of ``distboost.GradientBoostingClassifier``."""
        return {"n_estimators": rounds, "learning_rate": LEARNING_RATE,
                "max_depth": self.max_depth, "max_leaf_nodes": self.max_leaves,
                "max_bins": N_BINS, "reg_lambda": REG_LAMBDA}

    def xgboost_params(self) -> dict[str, Any]:
        """Booster parameters of ``xgboost.train`` / ``xgboost.dask.train``."""
        params: dict[str, Any] = {"tree_method": "hist", "eta": LEARNING_RATE, "max_bin": N_BINS,
                                  "lambda": REG_LAMBDA}
        if self.max_leaves:
            params.update(grow_policy="lossguide", max_leaves=self.max_leaves, max_depth=0)
        else:
            params["max_depth"] = self.max_depth
        if self.task == "multiclass":
            params.update(objective="multi:softprob", num_class=self.n_classes)
        else:
            params["objective"] = "binary:logistic"
        return params

    @property
    def lightgbm_leaves(self) -> int:
        """LightGBM's ``num_leaves``: the best-first leaf count, or 2^depth − 1 (63 at
        depth 6, 7 at depth 3)."""
        return self.max_leaves or 2 ** self.max_depth - 1

    def lightgbm_params(self, rounds: int) -> dict[str, Any]:
        """Keyword arguments of ``lightgbm.LGBMClassifier`` and ``DaskLGBMClassifier``:
        ``lightgbm_leaves`` leaves, depth unlimited, LightGBM's natural (best-first) shape
        nearest to every tree shape here."""
        return {"n_estimators": rounds, "learning_rate": LEARNING_RATE,
                "num_leaves": self.lightgbm_leaves, "max_bin": N_BINS - 1,
                "reg_lambda": REG_LAMBDA, "verbose": -1}

    def sklearn_params(self, rounds: int) -> dict[str, Any]:
        """Keyword arguments of ``HistGradientBoostingClassifier``."""
        return {"max_iter": rounds, "learning_rate": LEARNING_RATE, "max_depth": self.max_depth,
                "max_leaf_nodes": self.max_leaves, "max_bins": N_BINS - 1,
                "l2_regularization": REG_LAMBDA, "early_stopping": False}


SHAPES = {shape.name: shape for shape in [
    Shape("w1", "W1 benchmark (HIGGS-shaped binary classification)", 1_000_000, 8, 100),
    Shape("best-first", "W1, best-first growth to 63 leaves", 1_000_000, 8, 50,
          max_depth=None, max_leaves=63),
    Shape("multiclass", "W1 with 10 classes (softmax / multinomial deviance)", 300_000, 8, 30,
          task="multiclass"),
    Shape("wide", "Wide W1: 500 features", 100_000, 8, 50, extra_features=472),
    Shape("shallow", "W1, many rounds of shallow trees (depth 3)", 1_000_000, 8, 300,
          max_depth=3),
]}

METRICS = {
    "binary": [("auc", "test AUC"), ("logloss", "test log loss")],
    "multiclass": [("mlogloss", "test mlogloss"), ("accuracy", "test accuracy")],
}
"""Per task: the record keys of the test metrics and their column names."""


def positive_class(proba: np.ndarray) -> np.ndarray:
    """Probabilities of class 1, shape (n,), from (n,) or (n, 2) predictions."""
    proba = np.asarray(proba)
    return proba[:, 1] if proba.ndim == 2 else proba


def task_metrics(task: str, y_true: np.ndarray, proba: np.ndarray) -> dict[str, float]:
    """The task's test metrics (``METRICS``) of predicted probabilities.

    Parameters
    ----------
    task : {"binary", "multiclass"}
    y_true : ndarray of shape (n,)
        Labels 0/1, or 0..9.
    proba : ndarray of shape (n,), (n, 2) or (n, 10)
        Probabilities of class 1 (binary) or of every class.
    """
    from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

    proba = np.asarray(proba, dtype=np.float64)
    if task == "multiclass":
        return {"mlogloss": float(log_loss(y_true, proba, labels=np.arange(proba.shape[1]))),
                "accuracy": float(accuracy_score(y_true, proba.argmax(axis=1)))}
    proba = positive_class(proba)
    return {"auc": float(roc_auc_score(y_true, proba)), "logloss": float(log_loss(y_true, proba))}
