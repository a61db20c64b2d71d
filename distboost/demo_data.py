"""Synthetic data sets for demos and tests (no downloads).

* :func:`hastie_10_2` -- ESL example 10.2 (eq. 10.2): ten standard normal
  inputs, ``y = 1`` if ``sum x_j^2 > chi2_10(0.5) = 9.34`` else ``-1``;
  the classic two-class boosting example.
* :func:`waveform` -- Breiman's waveform data (ESL section 12.7): three
  classes, 21 noisy inputs built from shifted triangular waves; with a
  categorical "station" column that carries no signal.
* :func:`friedman1` -- Friedman's regression function
  ``10 sin(pi x1 x2) + 20 (x3 - 0.5)^2 + 10 x4 + 5 x5 + noise`` with five
  more inputs that carry no signal.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

CHI2_10_MEDIAN = 9.341817765591966
"""Median of the chi-squared distribution with 10 degrees of freedom."""

__all__ = [
    "DATASETS", "friedman1", "hastie_10_2", "make_dataset", "waveform", "write_csv_files"
]

DATASETS = {
    "hastie": ("y", "ESL example 10.2: two classes, 10 inputs"),
    "waveform": ("wave", "waveform: three classes, 21 inputs and a categorical one"),
    "friedman": ("y", "Friedman #1: regression, 10 inputs"),
}


def hastie_10_2(n_rows: int = 12_000, random_state: int = 0) -> pd.DataFrame:
    """ESL eq. 10.2 as a frame with columns ``x1..x10`` and ``y`` in {-1, 1}."""
    rng = np.random.default_rng(random_state)
    X = rng.standard_normal((n_rows, 10))
    y = np.where((X**2).sum(axis=1) > CHI2_10_MEDIAN, 1, -1)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 11)])
    frame["y"] = y
    return frame


def waveform(n_rows: int = 12_000, random_state: int = 0) -> pd.DataFrame:
    """Breiman's waveform data: classes 0, 1, 2; inputs ``x1..x21`` and ``station``."""
    rng = np.random.default_rng(random_state)
    t = np.arange(1, 22)
    h1 = np.maximum(6 - np.abs(t - 11), 0)
    h2, h3 = np.maximum(6 - np.abs(t - 15), 0), np.maximum(6 - np.abs(t - 7), 0)
    pairs = [(h1, h2), (h1, h3), (h2, h3)]
    y = rng.integers(0, 3, n_rows)
    u = rng.uniform(size=(n_rows, 1))
    X = np.empty((n_rows, 21))
    for k, (a, b) in enumerate(pairs):
        rows = y == k
        X[rows] = u[rows] * a + (1 - u[rows]) * b
    X += rng.standard_normal(X.shape)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in t])
    frame["station"] = rng.choice(["north", "south", "east", "west"], n_rows)
    frame["wave"] = y
    return frame


def friedman1(n_rows: int = 12_000, random_state: int = 0, noise: float = 1.0) -> pd.DataFrame:
    """Friedman #1 regression: columns ``x1..x10`` (uniform on [0, 1]) and ``y``."""
    rng = np.random.default_rng(random_state)
    X = rng.uniform(size=(n_rows, 10))
    y = (
        10 * np.sin(np.pi * X[:, 0] * X[:, 1])
        + 20 * (X[:, 2] - 0.5) ** 2
        + 10 * X[:, 3]
        + 5 * X[:, 4]
        + noise * rng.standard_normal(n_rows)
    )
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(1, 11)])
    frame["y"] = y
    return frame


def make_dataset(name: str, n_rows: int, random_state: int = 0) -> pd.DataFrame:
    """One of :data:`DATASETS` by name."""
    makers = {"hastie": hastie_10_2, "waveform": waveform, "friedman": friedman1}
    if name not in makers:
        raise ValueError(f"unknown demo data set {name!r}; choose one of {sorted(makers)}")
    return makers[name](n_rows, random_state)


def write_csv_files(frame: pd.DataFrame, folder: str | Path, n_files: int = 4) -> list[Path]:
    """Write ``frame`` as ``n_files`` CSV files (``part-0.csv`` ...) in ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, part in enumerate(np.array_split(np.arange(len(frame)), n_files)):
        path = folder / f"part-{i}.csv"
        frame.iloc[part].to_csv(path, index=False)
        paths.append(path)
    return paths
