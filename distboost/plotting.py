"""Plots for interpretation and evaluation (matplotlib, PNG).

Each ``plot_*`` function returns a :class:`matplotlib.figure.Figure` built
without pyplot (so it is safe in worker threads and needs no display);
:func:`save_png` writes one to a file and :func:`png_bytes` to memory.

* :func:`plot_importance` -- relative importance bars (ESL figure 10.6);
* :func:`plot_partial_dependence` -- 1-D partial dependence with a decile rug
  (ESL figure 10.7), optionally over ICE curves;
* :func:`plot_partial_dependence_2d` -- 2-D partial dependence heat map
  (ESL figure 10.8);
* :func:`plot_shap_summary` and :func:`plot_shap_dependence` -- the beeswarm
  summary and the dependence plots of SHAP values (Lundberg et al. 2020).

The evaluation report's plots (learning curves, ROC, calibration, confusion
matrix, residuals) belong to the application: ``flows/plots.py``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.figure import Figure

from .model_file import write_atomic

__all__ = [
    "figure",
    "plot_importance",
    "plot_partial_dependence",
    "plot_partial_dependence_2d",
    "plot_shap_dependence",
    "plot_shap_summary",
    "png_bytes",
    "save_png",
]

_RUG_COLOR = "tab:red"


def figure(width: float = 6.4, height: float = 4.2) -> tuple[Figure, Any]:
    """A new figure (constrained layout, no pyplot) and its axes."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots()


def save_png(fig: Figure, path: str | Path, dpi: int = 100) -> Path:
    """Write ``fig`` as a PNG file and return its path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, png_bytes(fig, dpi))
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
    fig, ax = figure(6.4, max(2.5, 0.32 * len(order) + 1.2))
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
    fig, ax = figure()
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
    fig, ax = figure(6.4, 5.0)
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


# ------------------------------------------------------------------------- SHAP
def _swarm_offsets(x: np.ndarray, width: float = 0.38, bins: int = 80) -> np.ndarray:
    """Vertical offsets that pile points of similar x into a swarm: points are
    binned by x and, within a bin, stacked alternately above and below the line."""
    if len(x) == 0:
        return np.zeros(0)
    span = float(np.ptp(x)) or 1.0
    cell = np.round((x - x.min()) / span * bins).astype(np.int64)
    order = np.argsort(cell, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(cell[order])) + 1]
    rank = np.arange(len(x)) - np.repeat(starts, np.diff(np.r_[starts, len(x)]))
    offsets = np.empty(len(x))
    offsets[order] = (rank + 1) // 2 * np.where(rank % 2 == 0, 1.0, -1.0)
    top = np.abs(offsets).max()
    return offsets * (width / top) if top > 0 else offsets


def _colour_scale(v: np.ndarray) -> np.ndarray:
    """Feature values to [0, 1] between their 5th and 95th percentiles (NaN stays)."""
    finite = v[np.isfinite(v)]
    if finite.size == 0:
        return v
    lo, hi = np.percentile(finite, [5, 95])
    if hi <= lo:
        lo, hi = finite.min(), finite.max()
    return np.clip((v - lo) / (hi - lo), 0, 1) if hi > lo else np.full_like(v, 0.5)


def plot_shap_summary(
    values: np.ndarray,
    features: np.ndarray,
    feature_names: Sequence[str],
    *,
    max_display: int = 15,
    xlabel: str = "SHAP value (effect on the model's output)",
    title: str = "SHAP summary",
) -> Figure:
    """Beeswarm summary of SHAP values (Lundberg et al. 2020, figure 5).

    One line per feature, the largest mean |SHAP| at the top; each point is a
    row placed at the feature's SHAP value for it and coloured by the feature's
    value (blue low, red high, between its 5th and 95th percentiles; grey
    missing).

    Parameters
    ----------
    values : ndarray of shape (n_rows, n_features)
        E.g. :func:`distboost.inspection.shap_values` without its bias column.
    features : ndarray of shape (n_rows, n_features), float
        The rows' feature values (categories as codes, NaN missing).
    feature_names : sequence of str
    max_display : int
        Show at most this many features.
    """
    import matplotlib

    values = np.asarray(values, np.float64)
    features = np.asarray(features, np.float64)
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")[:max_display][::-1]
    fig, ax = figure(7.2, 0.42 * len(order) + 1.6)
    cmap = matplotlib.colormaps["coolwarm"]
    points = None
    for line, j in enumerate(order):
        y = line + _swarm_offsets(values[:, j])
        colour = _colour_scale(features[:, j])
        missing = np.isnan(colour)
        ax.scatter(values[missing, j], y[missing], s=7, color="0.65", linewidths=0)
        points = ax.scatter(values[~missing, j], y[~missing], s=7, c=colour[~missing],
                            cmap=cmap, vmin=0, vmax=1, linewidths=0)
    ax.axvline(0, color="0.5", lw=0.8)
    ax.set_yticks(np.arange(len(order)), [str(feature_names[j]) for j in order])
    ax.set_ylim(-0.7, len(order) - 0.3)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    if points is not None:
        bar = fig.colorbar(points, ax=ax, ticks=[0, 1], aspect=40, pad=0.01)
        bar.ax.set_yticklabels(["low", "high"])
        bar.set_label("feature value")
    return fig


def plot_shap_dependence(
    x: np.ndarray,
    values: np.ndarray,
    feature_name: str,
    *,
    categories: Sequence | None = None,
    ylabel: str = "SHAP value",
    labels: Sequence[str] | None = None,
) -> Figure:
    """SHAP dependence plot: a feature's SHAP value against its value, one point
    per row (Lundberg et al. 2020, figure 6); missing values at the left, in grey.

    Parameters
    ----------
    x : ndarray of shape (n_rows,), float
        The feature's values (category codes for a categorical feature, NaN missing).
    values : ndarray of shape (n_rows,) or (n_rows, K)
        Its SHAP values; K columns (e.g. one per class) are drawn in K colours,
        named by ``labels``.
    feature_name : str
    categories : sequence, optional
        The categories, for a categorical feature: one column of points each.
    labels : sequence of str, optional
        Names of the K columns of ``values``, for the legend.
    """
    x = np.asarray(x, np.float64)
    values = np.asarray(values, np.float64).reshape(len(x), -1)
    missing = np.isnan(x)
    fig, ax = figure(5.6, 4.0)
    jitter = np.random.default_rng(0).uniform(-0.25, 0.25, len(x))
    if categories is not None:
        position = np.where(missing, -1.0, x) + jitter
        ticks = list(range(-1 if missing.any() else 0, len(categories)))
        names = (["missing"] if missing.any() else []) + [str(c) for c in categories]
        ax.set_xticks(ticks, names, rotation=30 if len(categories) > 6 else 0)
    else:
        finite = x[~missing]
        left = (finite.min() - 0.08 * (np.ptp(finite) or 1.0)) if finite.size else 0.0
        position = np.where(missing, left, x)
    several = values.shape[1] > 1
    for k in range(values.shape[1]):
        colour = f"C{k}" if several else "tab:blue"
        label = (labels[k] if labels is not None else f"output {k}") if several else None
        ax.scatter(position[~missing], values[~missing, k], s=8, alpha=0.5 if several else 0.6,
                   color=colour, linewidths=0, label=label)
        if missing.any():
            ax.scatter(position[missing], values[missing, k], s=8, alpha=0.6,
                       color=colour if several else "0.55", linewidths=0,
                       label=None if several else "missing")
    if several or missing.any():
        ax.legend(loc="best", fontsize="small", markerscale=2)
    ax.axhline(0, color="0.5", lw=0.8)
    ax.set_xlabel(feature_name + (" (missing at the left)" if several and missing.any() else ""))
    ax.set_ylabel(ylabel)
    ax.set_title(f"SHAP dependence on {feature_name}")
    ax.grid(alpha=0.3)
    return fig
