"""flows.metrics and flows.report against scikit-learn and by hand."""

try:
    import _flows_fixtures
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures  # noqa: F401

import json

import numpy as np
import pytest

from flows.metrics import (
    classification_metrics,
    headline_rows,
    regression_metrics,
    roc_auc,
)
from flows.report import markdown_summary, render_report

skm = pytest.importorskip("sklearn.metrics")


def test_binary_metrics_match_scikit_learn():
    rng = np.random.default_rng(0)
    y = rng.choice(["no", "yes"], 500)
    p_yes = np.clip((y == "yes") * 0.4 + rng.uniform(0, 0.6, 500), 0, 1)
    proba = np.column_stack([1 - p_yes, p_yes])
    m = classification_metrics(y, proba, ["no", "yes"])
    assert m["log_loss"] == pytest.approx(skm.log_loss(y, proba, labels=["no", "yes"]))
    assert m["auc"] == pytest.approx(skm.roc_auc_score(y == "yes", p_yes))
    pred = np.where(p_yes > 0.5, "yes", "no")
    assert m["error_rate"] == pytest.approx(1 - skm.accuracy_score(y, pred))
    assert m["confusion_matrix"] == skm.confusion_matrix(y, pred, labels=["no", "yes"]).tolist()


def test_multiclass_auc_is_macro_one_vs_rest():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 3, 300)
    proba = rng.dirichlet(np.ones(3), 300)
    proba[np.arange(300), y] += 0.5
    proba /= proba.sum(axis=1, keepdims=True)
    m = classification_metrics(y, proba, [0, 1, 2])
    assert m["auc"] == pytest.approx(skm.roc_auc_score(y, proba, multi_class="ovr"))
    assert np.sum(m["confusion_matrix"]) == 300


def test_auc_counts_ties_as_half():
    assert roc_auc(np.array([1, 0], bool), np.array([0.5, 0.5])) == 0.5
    assert np.isnan(roc_auc(np.array([1, 1], bool), np.array([0.1, 0.2])))


def test_regression_metrics_match_scikit_learn():
    rng = np.random.default_rng(2)
    y, pred = rng.normal(size=200), rng.normal(size=200)
    m = regression_metrics(y, pred)
    assert m["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(y, pred)))
    assert m["mae"] == pytest.approx(skm.mean_absolute_error(y, pred))
    assert m["r2"] == pytest.approx(skm.r2_score(y, pred))
    assert [r["metric"] for r in headline_rows(m)] == ["RMSE", "MAE", "R²", "rows evaluated"]


def test_report_embeds_images_and_escapes_text(tmp_path):
    from distboost.plotting import plot_importance, save_png

    save_png(plot_importance([100, 50], ["a", "b"]), tmp_path / "figures" / "imp.png")
    evaluation = {
        "title": "evaluation <of> x",
        "metrics": {"n": 10, "rmse": 1.5},
        "figures": [
            {
                "file": "figures/imp.png",
                "section": "importance",
                "title": "Importance",
                "caption": "bars",
            }
        ],
        "importance": [{"feature": "a", "gain": 100.0}],
        "details": {"target": "y"},
    }
    (tmp_path / "evaluation.json").write_text(json.dumps(evaluation))
    html = render_report(tmp_path).read_text()
    assert "evaluation &lt;of&gt; x" in html and "<of>" not in html
    assert html.count("data:image/png;base64,") == 1 and ">Relative importance</h2>" in html
    assert ">Partial dependence</h2>" not in html  # no figures, no empty section
    summary = markdown_summary(evaluation, tmp_path / "report.html")
    assert "| RMSE | 1.5000 |" in summary and "Most important inputs: a." in summary
