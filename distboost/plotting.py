"""Plots for interpretation and evaluation (matplotlib, PNG).

Each ``plot_*`` function returns a :class:`matplotlib.figure.Figure` built
without pyplot (so it is safe in worker threads and needs no display);
:func:`save_png` writes one to a file and :func:`png_bytes` to memory.

* :func:`plot_importance` -- relative importance bars (ESL figure 10.6);
* :func:`plot_partial_dependence` -- 1-D partial dependence with a decile rug
  (ESL figure 10.7), optionally over ICE curves;
* :func:`plot_partial_dependence_2d` -- 2-D partial dependence heat map
  (ESL figure 10.8).

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

__all__ = [
    "figure",
    "plot_importance",
    "plot_partial_dependence",
    "plot_partial_dependence_2d",
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
