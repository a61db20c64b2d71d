"""flows.plots: the evaluation report's plots render PNGs; ROC points and AUC are right."""

import numpy as np
import pytest

from distboost import plotting
from flows import plots

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _is_png(fig):
    data = plotting.png_bytes(fig)
    assert data.startswith(PNG_MAGIC) and len(data) > 5000
    return data


def test_learning_curve_names_sets():
    fig = plots.plot_learning_curve(
        {"training": {"logloss": [0.6, 0.5]}, "validation_0": {"logloss": [0.65, 0.6]}},
        best_iteration=1,
    )
    texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert texts == ["training", "validation", "best round"]
    _is_png(fig)


def test_roc_points_and_auc_match_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 300).astype(bool)
    score = np.round(y + rng.normal(size=300), 1)  # ties on purpose
    fpr, tpr = plots.roc_points(y, score)
    ref_fpr, ref_tpr, _ = metrics.roc_curve(y, score, drop_intermediate=False)
    np.testing.assert_allclose(fpr, ref_fpr)
    np.testing.assert_allclose(tpr, ref_tpr)
    assert getattr(np, "trapezoid", getattr(np, "trapz", None))(tpr, fpr) == pytest.approx(metrics.roc_auc_score(y, score))


def test_classifier_and_regression_diagnostics():
    rng = np.random.default_rng(2)
    y = rng.integers(0, 3, 200)
    proba = rng.dirichlet(np.ones(3), 200)
    for fig in (
        plots.plot_roc(y, proba, [0, 1, 2]),
        plots.plot_calibration(y, proba, [0, 1, 2]),
        plots.plot_confusion_matrix(np.array([[5, 1], [2, 7]]), ["no", "yes"]),
        plots.plot_residuals(rng.normal(size=100), rng.normal(size=100)),
    ):
        _is_png(fig)
    binary = plots.plot_roc(y > 0, proba[:, :2], [False, True])
    assert "AUC" in binary.axes[0].get_legend().get_texts()[0].get_text()
