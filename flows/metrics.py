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
    """Error rate, accuracy, log loss, AUC, the confusion matrix, per-class
    precision / recall / F1 and the prior-probability baseline.

    The AUC of two classes is that of the second class against the first; of
    K > 2 classes, the unweighted mean of the K one-vs-rest AUCs (macro
    average; a class absent from ``y_true`` is left out), as ``auc_average``
    says.

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
        average = f"class {classes[1]} against class {classes[0]}"
    else:
        auc = float(np.nanmean([roc_auc(codes == k, proba[:, k]) for k in range(len(classes))]))
        average = "one-vs-rest, macro average (unweighted mean over classes)"
    accuracy = float(np.mean(codes == np.argmax(proba, axis=1)))
    matrix = confusion_matrix(y_true, pred, classes)
    return {
        "n": len(y_true),
        "error_rate": 1.0 - accuracy,
        "accuracy": accuracy,
        "log_loss": float(-np.mean(np.log(p_true))),
        "auc": auc,
        "auc_average": average,
        "classes": [_plain(c) for c in classes],
        "confusion_matrix": matrix.tolist(),
        "per_class": per_class_scores(matrix, classes),
        "baseline": classification_baseline(codes, len(classes)),
    }


def per_class_scores(matrix: np.ndarray, classes: Sequence) -> list[dict]:
    """Precision, recall, F1 and support of each class from the confusion
    matrix (rows true, columns predicted); 0 where undefined (no row predicted
    or present), as scikit-learn's ``zero_division=0``."""
    matrix = np.asarray(matrix, np.float64)
    hits = np.diag(matrix)
    predicted, support = matrix.sum(axis=0), matrix.sum(axis=1)
    precision = np.divide(hits, predicted, out=np.zeros_like(hits), where=predicted > 0)
    recall = np.divide(hits, support, out=np.zeros_like(hits), where=support > 0)
    total = precision + recall
    f1 = np.divide(2 * precision * recall, total, out=np.zeros_like(hits), where=total > 0)
    return [{"class": _plain(c), "precision": float(p), "recall": float(r), "f1": float(f),
             "support": int(n)}
            for c, p, r, f, n in zip(classes, precision, recall, f1, support)]


def classification_baseline(codes: np.ndarray, n_classes: int) -> dict:
    """The metrics of a model that knows only the class frequencies of the
    evaluated rows: it predicts the majority class (accuracy: its share), the
    frequencies as probabilities (log loss: their entropy), and ranks no row
    above another (AUC 0.5)."""
    prior = np.bincount(codes, minlength=n_classes) / max(len(codes), 1)
    accuracy = float(prior.max()) if len(codes) else float("nan")
    present = prior[prior > 0]
    return {"error_rate": 1.0 - accuracy, "accuracy": accuracy,
            "log_loss": float(-np.sum(present * np.log(present))), "auc": 0.5}


def regression_metrics(y_true: np.ndarray, y_pred: np.ndarray) -> dict:
    """RMSE, MAE and R^2, and the baseline's: predicting the mean of the
    evaluated target for every row (R^2 0)."""
    y_true = np.asarray(y_true, dtype=np.float64)
    resid = y_true - np.asarray(y_pred, dtype=np.float64)
    total = float(np.sum((y_true - y_true.mean()) ** 2))
    spread = y_true - y_true.mean()
    return {
        "n": len(y_true),
        "rmse": float(np.sqrt(np.mean(resid**2))),
        "mae": float(np.mean(np.abs(resid))),
        "r2": 1.0 - float(np.sum(resid**2)) / total if total > 0 else float("nan"),
        "baseline": {"rmse": float(np.sqrt(np.mean(spread**2))),
                     "mae": float(np.mean(np.abs(spread))), "r2": 0.0},
    }


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


HEADLINE = {
    "error_rate": "error rate",
    "accuracy": "accuracy",
    "subset_accuracy": "subset accuracy (every label right)",
    "log_loss": "log loss",
    "auc": "AUC",
    "rmse": "RMSE",
    "mae": "MAE",
    "r2": "R²",
    **{f"ndcg@{k}": f"NDCG@{k}" for k in (1, 3, 5, 10)},
    "ndcg": "NDCG (whole list)",
    "queries": "queries evaluated",
    "cindex": "C-index (Harrell)",
    "cox-nloglik": "Cox negative log partial likelihood",
    "aft-nloglik": "AFT negative log-likelihood",
    "events": "events (uncensored rows)",
    "n": "rows evaluated",
}


def headline_rows(metrics: dict) -> list[dict[str, str]]:
    """The scalar metrics as table rows for reports and artifacts, each with
    the baseline's value where there is one (``baseline``)."""
    baseline = metrics.get("baseline", {})
    rows = []
    for key, label in HEADLINE.items():
        if key in metrics:
            row = {"metric": label, "value": _number(metrics[key])}
            if baseline:
                row["baseline"] = _number(baseline[key]) if key in baseline else ""
            rows.append(row)
    return rows


def per_class_rows(metrics: dict) -> list[dict[str, str]]:
    """Per-class precision, recall, F1 and support as table rows."""
    return [{"class": str(r["class"]), "precision": f"{r['precision']:.3f}",
             "recall": f"{r['recall']:.3f}", "F1": f"{r['f1']:.3f}",
             "support": f"{r['support']:,}"} for r in metrics.get("per_class", [])]


def _number(value: Any) -> str:
    """A metric for people: counts with thousands separators, else 4 decimals."""
    return f"{value:,}" if isinstance(value, int) else f"{value:.4f}"
