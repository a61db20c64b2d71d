"""Plots for interpretation and evaluation (matplotlib, PNG).

Each ``plot_*`` function returns a :class:`matplotlib.figure.Figure` built
without pyplot (so it is safe in worker threads and needs no display);
:func:`save_png` writes one to a file and :func:`png_bytes` to memory.

* :func:`plot_importance` -- relative importance bars (ESL figure 10.6);
* :func:`plot_partial_dependence` -- 1-D partial dependence with a decile rug
  (ESL figure 10.7), optionally over ICE curves;
* :func:`plot_partial_dependence_2d` -- 2-D partial dependence heat map
  (ESL figure 10.8);
* :func:`plot_learning_curve` -- training and validation loss by round;
* :func:`plot_roc`, :func:`plot_calibration`, :func:`plot_confusion_matrix`
  for classifiers; :func:`plot_residuals` for regression.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

__all__ = [
    "plot_calibration",
    "plot_confusion_matrix",
    "plot_importance",
    "plot_learning_curve",
    "plot_partial_dependence",
    "plot_partial_dependence_2d",
    "plot_residuals",
    "plot_roc",
    "png_bytes",
    "roc_points",
    "save_png",
]

_RUG_COLOR = "tab:red"
_SET_NAMES = {"validation_0": "validation", "training": "training"}
_MAX_POINTS = 5_000


def _figure(width: float = 6.4, height: float = 4.2) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def save_png(fig: Figure, path: str | Path, dpi: int = 100) -> Path:
    """Write ``fig`` as a PNG file and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=dpi)
    return path


def png_bytes(fig: Figure, dpi: int = 100) -> bytes:
    """The PNG encoding of ``fig``."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


# ------------------------------------------------------------------ interpretation
def plot_importance(
    importance: Sequence[float],
    feature_names: Sequence[str],
    *,
    top: int = 20,
    xlabel: str = "Relative importance (largest = 100)",
    title: str = "Relative importance of the inputs",
) -> Figure:
    """Horizontal bars, most important at the top (ESL figure 10.6).

    Parameters
    ----------
    importance : array-like of shape (n_features,)
        E.g. :func:`distboost.inspection.relative_importance`.
    feature_names : sequence of str
    top : int
        Show at most this many features.
    """
    importance = np.asarray(importance, dtype=np.float64)
    order = np.argsort(-importance, kind="stable")[:top][::-1]
    fig, ax = _figure(6.4, max(2.5, 0.32 * len(order) + 1.2))
    ax.barh(np.arange(len(order)), importance[order], color="tab:blue")
    ax.set_yticks(np.arange(len(order)), [str(feature_names[i]) for i in order])
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.set_xlim(0, max(100.0, float(importance.max(initial=0))) * 1.05)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _output_label(output: int, output_names: Sequence[str] | None) -> str:
    if output_names is None:
        return "partial dependence"
    return f"partial dependence ({output_names[output]})"


def plot_partial_dependence(
    result: Any,
    *,
    output: int | None = 0,
    ice: Any = None,
    ylabel: str | None = None,
    output_names: Sequence[str] | None = None,
) -> Figure:
    """1-D partial dependence with a rug of the feature's deciles (ESL figure 10.7).

    Parameters
    ----------
    result : distboost.inspection.PartialDependence
        With one feature.
    output : int or None
        Which of the K raw outputs to draw; None draws all K (one line per
        output, labelled with ``output_names``).
    ice : distboost.inspection.IceCurves, optional
        Thin grey curves drawn behind the partial dependence (one output only),
        centred: each starts where the partial dependence starts. The grid
        must be the partial dependence's.
    ylabel : str, optional
        Defaults to "partial dependence".
    output_names : sequence of str, optional
        Names of the K outputs (e.g. class labels).
    """
    if len(result.features) != 1:
        raise ValueError(
            "plot_partial_dependence draws one feature; use plot_partial_dependence_2d"
        )
    fig, ax = _figure()
    grid = result.grid_values[0]
    outputs = range(result.average.shape[0]) if output is None else [output]
    names = output_names or [str(k) for k in range(result.average.shape[0])]
    if result.categorical[0]:
        width = 0.8 / len(outputs)
        for i, k in enumerate(outputs):
            x = np.arange(len(grid)) + (i - (len(outputs) - 1) / 2) * width
            ax.bar(x, result.average[k], width=width, label=names[k])
        ax.set_xticks(np.arange(len(grid)), [str(g) for g in grid])
    else:
        if ice is not None and output is not None:
            _ice_lines(ax, ice, output, result.average[output][0])
        for k in outputs:
            label = names[k] if len(outputs) > 1 else "partial dependence"
            ax.plot(grid, result.average[k], lw=2.2, label=label)
        _rug(ax, result.deciles[0])
    if len(outputs) > 1 or (ice is not None and not result.categorical[0]):
        ax.legend(fontsize="small")
    ax.set_xlabel(result.feature_names[0])
    default = _output_label(output, output_names) if output is not None else "partial dependence"
    ax.set_ylabel(ylabel or default)
    ax.set_title(f"Partial dependence on {result.feature_names[0]}")
    ax.grid(alpha=0.3)
    return fig


def _ice_lines(ax: Any, ice: Any, output: int, anchor: float) -> None:
    """Centred ICE curves (Goldstein et al. 2015) drawn from the partial
    dependence's first value, so that the axis shows the shapes, not the
    spread of the rows' levels."""
    curves = ice.curves[output][:50]
    if not ice.centered:
        curves = curves - curves[:, :1]
    for curve in curves + anchor:
        ax.plot(ice.grid_values, curve, color="0.45", lw=0.7, alpha=0.25)
    ax.plot([], [], color="0.6", lw=0.7, label=f"centred ICE curves ({len(curves)} rows)")


def _rug(ax: Any, deciles: np.ndarray | None) -> None:
    """Red ticks at the deciles along the bottom of the axes."""
    if deciles is None:
        return
    ax.plot(
        deciles,
        np.zeros_like(deciles),
        "|",
        color=_RUG_COLOR,
        markersize=14,
        mew=1.5,
        transform=ax.get_xaxis_transform(),
        clip_on=False,
        label="deciles",
    )


def plot_partial_dependence_2d(
    result: Any,
    *,
    output: int = 0,
    output_names: Sequence[str] | None = None,
) -> Figure:
    """Heat map of a two-feature partial dependence (ESL figure 10.8).

    Parameters
    ----------
    result : distboost.inspection.PartialDependence
        With two features; ``result.average[output]`` has shape (n_0, n_1).
    output : int
    output_names : sequence of str, optional
    """
    if len(result.features) != 2:
        raise ValueError("plot_partial_dependence_2d needs a two-feature partial dependence")
    fig, ax = _figure(6.4, 5.0)
    g0, g1 = result.grid_values
    z = result.average[output]
    x_pos = np.arange(len(g0)) if result.categorical[0] else np.asarray(g0, dtype=float)
    y_pos = np.arange(len(g1)) if result.categorical[1] else np.asarray(g1, dtype=float)
    mesh = ax.pcolormesh(x_pos, y_pos, z.T, shading="nearest", cmap="viridis")
    if not any(result.categorical) and min(z.shape) > 2 and np.ptp(z) > 0:
        ax.contour(
            x_pos,
            y_pos,
            z.T,
            levels=8,
            colors="white",
            linewidths=0.6,
            alpha=0.7,
            negative_linestyles="solid",
        )
    for axis_set, grid, cat in (
        (ax.set_xticks, g0, result.categorical[0]),
        (ax.set_yticks, g1, result.categorical[1]),
    ):
        if cat:
            axis_set(np.arange(len(grid)), [str(g) for g in grid])
    fig.colorbar(mesh, ax=ax, label=_output_label(output, output_names))
    ax.set_xlabel(result.feature_names[0])
    ax.set_ylabel(result.feature_names[1])
    ax.set_title(f"Partial dependence on {result.feature_names[0]} and {result.feature_names[1]}")
    return fig


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
    fig, ax = _figure()
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
    fig, ax = _figure(5.2, 4.6)
    for name, positive, score in _one_vs_rest(y_true, proba, classes):
        fpr, tpr = roc_points(positive, score)
        auc = float(np.trapezoid(tpr, fpr))
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
    fig, ax = _figure(5.2, 4.6)
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
    fig, ax = _figure(size + 1.0, size)
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
