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
    per_class_rows,
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


def test_per_class_scores_and_baseline_on_tiny_data():
    """Eight rows, three classes, one class never predicted: exact numbers,
    and scikit-learn's (zero_division=0; DummyClassifier's prior strategy)."""
    from sklearn.dummy import DummyClassifier

    y = np.array(["a", "a", "a", "a", "b", "b", "c", "c"])
    proba = np.array([[.7, .2, .1], [.6, .3, .1], [.2, .7, .1], [.5, .4, .1],
                      [.3, .6, .1], [.1, .8, .1], [.6, .2, .2], [.3, .4, .3]])
    m = classification_metrics(y, proba, ["a", "b", "c"])
    pred = np.array(["a", "a", "b", "a", "b", "b", "a", "b"])
    p, r, f, n = skm.precision_recall_fscore_support(y, pred, labels=["a", "b", "c"],
                                                     zero_division=0)
    got = m["per_class"]
    assert [c["class"] for c in got] == ["a", "b", "c"]
    assert [c["support"] for c in got] == [4, 2, 2] == list(n)
    np.testing.assert_allclose([c["precision"] for c in got], p, rtol=0, atol=1e-15)
    np.testing.assert_allclose([c["recall"] for c in got], r, rtol=0, atol=1e-15)
    np.testing.assert_allclose([c["f1"] for c in got], f, rtol=0, atol=1e-15)
    assert (got[0]["precision"], got[0]["recall"]) == (0.75, 0.75)  # 3 of 4 predicted a
    assert (got[1]["precision"], got[1]["recall"], got[2]["f1"]) == (0.5, 1.0, 0.0)
    assert per_class_rows(m)[1] == {"class": "b", "precision": "0.500", "recall": "1.000",
                                    "F1": "0.667", "support": "2"}
    base = m["baseline"]
    assert base["accuracy"] == 0.5 and base["error_rate"] == 0.5 and base["auc"] == 0.5
    assert base["log_loss"] == pytest.approx(-(0.5 * np.log(0.5) + 2 * 0.25 * np.log(0.25)),
                                             abs=1e-15)
    dummy = DummyClassifier(strategy="prior").fit(np.zeros((8, 1)), y)
    assert base["accuracy"] == skm.accuracy_score(y, dummy.predict(np.zeros((8, 1))))
    prior = dummy.predict_proba(np.zeros((8, 1)))
    assert base["log_loss"] == pytest.approx(skm.log_loss(y, prior), abs=1e-12)
    assert skm.roc_auc_score(y, prior, multi_class="ovr") == base["auc"]
    assert m["auc_average"] == "one-vs-rest, macro average (unweighted mean over classes)"
    assert m["auc"] == pytest.approx(skm.roc_auc_score(y, proba, multi_class="ovr",
                                                       average="macro"), abs=1e-12)
    rows = {r["metric"]: r for r in headline_rows(m)}
    assert rows["accuracy"] == {"metric": "accuracy", "value": "0.6250", "baseline": "0.5000"}
    assert rows["rows evaluated"]["baseline"] == ""
    two = classification_metrics(np.array([0, 1, 1]), np.array([[.6, .4], [.3, .7], [.8, .2]]),
                                 [0, 1])
    assert two["auc_average"] == "class 1 against class 0" and two["auc"] == 0.5


def test_regression_baseline_is_the_mean():
    from sklearn.dummy import DummyRegressor

    y, pred = np.array([1.0, 2.0, 4.0, 9.0]), np.array([1.5, 2.0, 3.0, 8.0])
    base = regression_metrics(y, pred)["baseline"]
    assert base == {"rmse": pytest.approx(np.sqrt(np.mean((y - 4.0) ** 2)), abs=1e-15),
                    "mae": 2.5, "r2": 0.0}
    mean = DummyRegressor().fit(np.zeros((4, 1)), y).predict(np.zeros((4, 1)))
    assert base["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(y, mean)), abs=1e-12)
    assert base["mae"] == skm.mean_absolute_error(y, mean) and skm.r2_score(y, mean) == 0.0


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


def test_report_shows_data_baselines_and_per_class_scores(tmp_path):
    metrics = classification_metrics(np.array([0, 1, 1, 0]),
                                     np.array([[.6, .4], [.3, .7], [.8, .2], [.9, .1]]), [0, 1])
    data = {"task": "classification", "splits": ["train", "test"],
            "rows": {"train": 6, "test": 4}, "missing": {"x": {"train": 0.5, "test": 0.0}},
            "target": {"train": {"0": 3, "1": 3}, "test": {"0": 2, "1": 2}}}
    evaluation = {"title": "t", "metrics": metrics, "data": data, "figures": [], "details": {}}
    (tmp_path / "evaluation.json").write_text(json.dumps(evaluation))
    html = render_report(tmp_path).read_text()
    assert html.index(">Data</h2>") < html.index(">Metrics</h2>")
    assert "<th>metric</th><th>value</th><th>baseline</th>" in html
    assert "<td>accuracy</td><td>0.7500</td><td>0.5000</td>" in html
    assert "AUC: class 1 against class 0." in html and ">Per class</h3>" in html
    assert "<td>1</td><td>1.000</td><td>0.500</td><td>0.667</td><td>2</td>" in html
    assert "<td>x</td><td>50.0%</td><td>0%</td>" in html
    assert "<td>0</td><td>3 (50.0%)</td><td>2 (50.0%)</td>" in html
    summary = markdown_summary(evaluation, tmp_path / "report.html")
    assert "| accuracy | 0.7500 | 0.5000 |" in summary
