"""The evaluation report's plots (matplotlib, PNG): learning curves, ROC,
calibration and confusion matrix for classifiers, residuals for regression.

Figures are built without pyplot, like the library's (``distboost.plotting``,
whose ``save_png`` writes them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from matplotlib.figure import Figure

from distboost.plotting import figure

_SET_NAMES = {"validation_0": "validation", "training": "training"}
_MAX_POINTS = 5_000
_trapezoid = getattr(np, "trapezoid", None) or np.trapz  # numpy < 2.0 names it trapz


# ---------------------------------------------------------------------- training
def plot_learning_curve(
    evals_result: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    best_iteration: int | None = None,
) -> Figure:
    """Loss by boosting round for each evaluated data set.

    Parameters
    ----------
    evals_result : mapping
        ``{"training": {"logloss": [...]}, "validation_0": {...}}`` as in the
        estimators' ``evals_result_``.
    best_iteration : int, optional
        Marked with a vertical line (0-based round index).
    """
    fig, ax = figure()
    metrics = sorted({m for per_set in evals_result.values() for m in per_set})
    for name, per_set in evals_result.items():
        for metric, values in per_set.items():
            shown = _SET_NAMES.get(name, name)
            label = shown if len(metrics) == 1 else f"{shown} {metric}"
            ax.plot(np.arange(1, len(values) + 1), values, lw=1.8, label=label)
    if best_iteration is not None:
        ax.axvline(best_iteration + 1, color="0.4", ls="--", lw=1, label="best round")
    ax.set_xlabel("boosting round")
    ax.set_ylabel(", ".join(metrics) if metrics else "loss")
    ax.set_title("Learning curves")
    ax.grid(alpha=0.3)
    if evals_result:
        ax.legend()
    return fig


# ---------------------------------------------------------------- classification
def roc_points(y_true: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """False and true positive rates at every distinct score threshold.

    Parameters
    ----------
    y_true : ndarray of shape (n,), bool
        True for the positive class.
    score : ndarray of shape (n,)
        Higher means more likely positive.

    Returns
    -------
    fpr, tpr : ndarrays starting at 0 and ending at 1
    """
    y_true = np.asarray(y_true, dtype=bool)
    order = np.argsort(-np.asarray(score, dtype=np.float64), kind="mergesort")
    y_sorted, s_sorted = y_true[order], np.asarray(score, dtype=np.float64)[order]
    last = np.r_[np.nonzero(np.diff(s_sorted))[0], len(s_sorted) - 1]
    tp = np.cumsum(y_sorted)[last]
    fp = (last + 1) - tp
    n_pos, n_neg = max(int(y_true.sum()), 1), max(int((~y_true).sum()), 1)
    return np.r_[0.0, fp / n_neg], np.r_[0.0, tp / n_pos]


def _one_vs_rest(y_true, proba, classes) -> list[tuple[str, np.ndarray, np.ndarray]]:
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim == 1 or proba.shape[1] == 1:
        return [
            (f"class {classes[-1]}", y_true == classes[-1], proba.reshape(len(proba), -1)[:, -1])
        ]
    if len(classes) == 2:
        return [(f"class {classes[1]}", y_true == classes[1], proba[:, 1])]
    return [(f"class {c}", y_true == c, proba[:, k]) for k, c in enumerate(classes)]


def plot_roc(y_true: np.ndarray, proba: np.ndarray, classes: Sequence) -> Figure:
    """ROC curve (one-vs-rest for each class when there are more than two).

    Parameters
    ----------
    y_true : ndarray of shape (n,)
    proba : ndarray of shape (n, K)
        Predicted class probabilities, columns in the order of ``classes``.
    classes : sequence
    """
    fig, ax = figure(5.2, 4.6)
    for name, positive, score in _one_vs_rest(y_true, proba, classes):
        fpr, tpr = roc_points(positive, score)
        auc = float(_trapezoid(tpr, fpr))
        ax.plot(fpr, tpr, lw=1.8, label=f"{name} (AUC {auc:.3f})")
    ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="chance")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_title("ROC curve" + (" (one vs rest)" if len(classes) > 2 else ""))
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    return fig


def plot_calibration(
    y_true: np.ndarray, proba: np.ndarray, classes: Sequence, *, n_bins: int = 10
) -> Figure:
    """Reliability diagram: observed frequency against predicted probability.

    Binary: the positive class. Multiclass: each class one-vs-rest. Points are
    the mean prediction and the observed frequency in each of ``n_bins``
    equal-width probability bins (bins with no rows are skipped).
    """
    fig, ax = figure(5.2, 4.6)
    edges = np.linspace(0, 1, n_bins + 1)
    for name, positive, score in _one_vs_rest(y_true, proba, classes):
        idx = np.clip(np.digitize(score, edges[1:-1]), 0, n_bins - 1)
        n = np.bincount(idx, minlength=n_bins)
        keep = n > 0
        mean_pred = np.bincount(idx, weights=score, minlength=n_bins)[keep] / n[keep]
        observed = np.bincount(idx, weights=positive, minlength=n_bins)[keep] / n[keep]
        ax.plot(mean_pred, observed, "o-", lw=1.5, ms=4, label=name)
    ax.plot([0, 1], [0, 1], color="0.6", ls="--", lw=1, label="perfectly calibrated")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("mean predicted probability")
    ax.set_ylabel("observed frequency")
    ax.set_title("Calibration")
    ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    return fig


def plot_confusion_matrix(matrix: np.ndarray, classes: Sequence) -> Figure:
    """Confusion matrix heat map with counts; rows true, columns predicted."""
    matrix = np.asarray(matrix)
    size = 3.0 + 0.5 * len(classes)
    fig, ax = figure(size + 1.0, size)
    image = ax.imshow(matrix, cmap="Blues")
    ticks = np.arange(len(classes))
    ax.set_xticks(ticks, [str(c) for c in classes])
    ax.set_yticks(ticks, [str(c) for c in classes])
    threshold = matrix.max(initial=0) / 2
    for (i, j), v in np.ndenumerate(matrix):
        color = "white" if v > threshold else "black"
        ax.text(j, i, f"{v:,}", ha="center", va="center", color=color)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class")
    ax.set_title("Confusion matrix")
    fig.colorbar(image, ax=ax)
    return fig


# -------------------------------------------------------------------- regression
def plot_residuals(y_true: np.ndarray, y_pred: np.ndarray, *, random_state: int = 0) -> Figure:
    """Residuals against predictions, and their histogram.

    At most 5,000 points are drawn (a random sample) so the PNG stays light.
    """
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    resid = y_true - y_pred
    fig = Figure(figsize=(9.6, 4.0), layout="constrained")
    ax_scatter, ax_hist = fig.subplots(1, 2, width_ratios=[3, 2])
    show = np.arange(len(resid))
    if len(show) > _MAX_POINTS:
        show = np.random.default_rng(random_state).choice(len(resid), _MAX_POINTS, replace=False)
    ax_scatter.scatter(y_pred[show], resid[show], s=6, alpha=0.4, color="tab:blue")
    ax_scatter.axhline(0, color="tab:red", lw=1)
    ax_scatter.set_xlabel("prediction")
    ax_scatter.set_ylabel("residual (observed - predicted)")
    ax_scatter.set_title("Residuals against predictions")
    ax_scatter.grid(alpha=0.3)
    ax_hist.hist(resid, bins=40, color="tab:blue", alpha=0.8)
    ax_hist.axvline(0, color="tab:red", lw=1)
    ax_hist.set_xlabel("residual")
    ax_hist.set_ylabel("rows")
    ax_hist.set_title("Distribution of residuals")
    return fig
