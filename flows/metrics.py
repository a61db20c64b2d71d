"""Evaluation metrics on numpy arrays (no scikit-learn needed at run time)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

_EPS = 1e-15


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, ties get their average rank."""
    order = np.argsort(values, kind="mergesort")
    sorted_values = values[order]
    ranks = np.empty(len(values))
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_values)) + 1]
    ends = np.r_[starts[1:], len(values)]
    for s, e in zip(starts, ends):
        ranks[order[s:e]] = (s + e + 1) / 2.0
    return ranks


def roc_auc(positive: np.ndarray, score: np.ndarray) -> float:
    """Area under the ROC curve by the Mann-Whitney U statistic (ties count 1/2)."""
    positive = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _ranks(np.asarray(score, dtype=np.float64))
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, classes: Sequence) -> np.ndarray:
    """Counts, rows = true class, columns = predicted class, in ``classes`` order."""
    index = {c: i for i, c in enumerate(classes)}
    matrix = np.zeros((len(classes), len(classes)), dtype=np.int64)
    for t, p in zip(np.asarray(y_true).tolist(), np.asarray(y_pred).tolist()):
        matrix[index[t], index[p]] += 1
    return matrix


def classification_metrics(y_true: np.ndarray, proba: np.ndarray, classes: Sequence) -> dict:
    """Error rate, accuracy, log loss, AUC (one-vs-rest macro for K > 2), confusion matrix.

    Parameters
    ----------
    y_true : ndarray of shape (n,)
    proba : ndarray of shape (n, K)
        Class probabilities, columns in ``classes`` order.
    classes : sequence of labels
    """
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=np.float64).reshape(len(y_true), -1)
    classes = list(classes)
    codes = np.array([classes.index(v) for v in y_true.tolist()])
    pred = np.asarray(classes, dtype=object)[np.argmax(proba, axis=1)]
    p_true = np.clip(proba[np.arange(len(codes)), codes], _EPS, 1.0)
    if len(classes) == 2:
        auc = roc_auc(codes == 1, proba[:, 1])
    else:
        auc = float(np.nanmean([roc_auc(codes == k, proba[:, k]) for k in range(len(classes))]))
    accuracy = float(np.mean(codes == np.argmax(proba, axis=1)))
    return {
        "n": len(y_true),
        "error_rate": 1.0 - accuracy,
        "accuracy": accuracy,
        "log_loss": float(-np.mean(np.log(p_true))),
        "auc": auc,
        "classes": [_plain(c) for c in classes],
        "confusion_matrix": confusion_matrix(y_true, pred, classes).tolist(),
    }


def regression_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """RMSE, MAE and R^2."""
    y_true = np.asarray(y_true, dtype=np.float64)
    resid = y_true - np.asarray(y_pred, dtype=np.float64)
    total = float(np.sum((y_true - y_true.mean()) ** 2))
    return {
        "n": len(y_true),
        "rmse": float(np.sqrt(np.mean(resid**2))),
        "mae": float(np.mean(np.abs(resid))),
        "r2": 1.0 - float(np.sum(resid**2)) / total if total > 0 else float("nan"),
    }


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


HEADLINE = {
    "error_rate": "error rate",
    "accuracy": "accuracy",
    "log_loss": "log loss",
    "auc": "AUC",
    "rmse": "RMSE",
    "mae": "MAE",
    "r2": "R²",
    "n": "rows evaluated",
}


def headline_rows(metrics: dict) -> list[dict[str, str]]:
    """The scalar metrics as table rows for reports and artifacts."""
    rows = []
    for key, label in HEADLINE.items():
        if key in metrics:
            value = metrics[key]
            text = f"{value:,}" if isinstance(value, int) else f"{value:.4f}"
            rows.append({"metric": label, "value": text})
    return rows
