"""The flows run for real under Prefect (one session-scoped test harness) on a
module-scoped in-process Dask cluster: prepare -> train -> evaluate, resume,
the pipeline, prediction, and the artifacts in the Prefect database."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import base64
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from distributed import LocalCluster

import distboost
from distboost.demo_data import friedman1, write_csv_files
from flows._tabular import DataError
from flows.evaluate import evaluate
from flows.pipeline import pipeline
from flows.predict import predict
from flows.prepare import prepare
from flows.train import train

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(**{**fx.TEST_CLUSTER, "n_workers": 1}) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def run(prefect_harness, scheduler, tmp_path_factory):
    """Prepare, train and evaluate once; the tests look at what was made."""
    root = tmp_path_factory.mktemp("e2e")
    raw = fx.hastie_csv(root / "raw", n_rows=1200, n_files=3)
    data = prepare(
        source=str(raw),
        output=str(root / "data"),
        target="y",
        categorical=["colour"],
        scheduler=scheduler,
    )
    model = train(
        data=data,
        output=str(root / "model"),
        checkpoint_every=5,
        params={"n_estimators": 12, "max_depth": 3, "learning_rate": 0.3},
        scheduler=scheduler,
    )
    report = evaluate(
        data=data,
        model=model,
        output=str(root / "report"),
        artifact_key="e2e-test",
        scheduler=scheduler,
    )
    return {"root": root, "raw": raw, "data": data, "model": model, "report": report}


def test_prepare_writes_splits_schema_and_refuses_to_overwrite(run, scheduler):
    data = run["root"] / "data"
    schema = json.loads((data / "schema.json").read_text())
    assert sum(schema["split_rows"].values()) == 1200
    assert schema["classes"] == [-1, 1]
    edges = json.loads((data / "bin_edges.json").read_text())["features"]
    assert 0 < len(edges["x1"]["edges"]) <= 255 and edges["colour"]["kind"] == "categorical"
    rows = sum(len(pd.read_parquet(p)) for p in (data / "train").glob("*.parquet"))
    assert rows == schema["split_rows"]["train"]
    before = (data / "schema.json").read_text()
    with pytest.raises(FileExistsError, match="already exists"):
        prepare(
            source=str(run["raw"]),
            output=str(data),
            target="y",
            categorical=["colour"],
            scheduler=scheduler,
        )
    assert (data / "schema.json").read_text() == before


def test_prepare_flow_rejects_bad_input(run, scheduler):
    out = run["root"] / "never"
    with pytest.raises(DataError, match="target column 'label' not found"):
        prepare(source=str(run["raw"]), output=str(out), target="label", scheduler=scheduler)
    with pytest.raises(DataError, match="column 'colour' is not numeric"):
        prepare(source=str(run["raw"]), output=str(out), target="y", scheduler=scheduler)
    assert not out.exists()


def test_train_checkpoints_and_history(run):
    folder = run["root"] / "model"
    names = sorted(p.name for p in (folder / "checkpoints").glob("round-*[0-9].json"))
    assert names == ["round-00005.json", "round-00010.json", "round-00012.json"]
    history = json.loads((folder / "history.json").read_text())
    assert len(history["validation_0"]["logloss"]) == 12
    assert len(history["training"]["logloss"]) == 12
    model = distboost.load_model(run["model"])
    assert len(model.trees_) == 12 and list(model.classes_) == [-1, 1]


def test_rerun_resumes_from_last_checkpoint_and_matches(run, scheduler, tmp_path):
    """A crash after round 5 (later files gone): the rerun continues from round 5."""
    crashed = tmp_path / "model"
    shutil.copytree(run["root"] / "model", crashed)
    for name in ("model.json", "history.json", "training.json"):
        (crashed / name).unlink()
    for p in (crashed / "checkpoints").glob("round-0001*"):
        p.unlink()
    model = train(
        data=run["data"],
        output=str(crashed),
        checkpoint_every=5,
        params={"n_estimators": 12, "max_depth": 3, "learning_rate": 0.3},
        scheduler=scheduler,
    )
    assert json.loads((crashed / "training.json").read_text())["resumed_from_round"] == 5
    assert_same_model(distboost.load_model(model), distboost.load_model(run["model"]))
    assert (crashed / "model.json").read_text() == (run["root"] / "model" / "model.json").read_text()
    history = json.loads((crashed / "history.json").read_text())
    original = json.loads((run["root"] / "model" / "history.json").read_text())
    np.testing.assert_allclose(
        history["validation_0"]["logloss"], original["validation_0"]["logloss"]
    )


def assert_same_model(a, b):
    assert len(a.trees_) == len(b.trees_)
    np.testing.assert_array_equal(a.base_score_, b.base_score_)
    for ra, rb in zip(a.trees_, b.trees_):
        for ta, tb in zip(ra, rb):
            np.testing.assert_array_equal(ta.nodes, tb.nodes)


def test_report_has_sections_and_embedded_images(run):
    html = (run["root"] / "report" / "report.html").read_text()
    for heading in (
        "Data",
        "Metrics",
        "Learning curves",
        "Relative importance",
        "SHAP values",
        "Partial dependence",
        "Diagnostics",
        "Data and training",
    ):
        assert f">{heading}</h2>" in html
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    # learning, confusion, ROC, calibration, importance, 4 PD + 2-D PD, SHAP summary, 4 SHAP
    # dependence plots
    assert len(images) >= 15
    assert all(base64.b64decode(i).startswith(PNG) for i in images)
    assert "error rate" in html and "AUC" in html and 'src="figures/' not in html
    evaluation = json.loads((run["root"] / "report" / "evaluation.json").read_text())
    metrics = evaluation["metrics"]
    assert (
        metrics["n"]
        == json.loads((run["root"] / "data" / "schema.json").read_text())["split_rows"]["test"]
    )
    assert metrics["error_rate"] < 0.35 and metrics["auc"] > 0.7
    assert evaluation["importance"][0]["gain"] == 100.0
    assert evaluation["data"]["rows"] == json.loads(
        (run["root"] / "data" / "schema.json").read_text())["split_rows"]
    assert evaluation["data"]["missing"]["x2"]["train"] > 0  # every 23rd row
    assert "baseline" in metrics and metrics["auc_average"] == "class 1 against class -1"
    for fig in (f for f in evaluation["figures"] if f["file"].startswith("figures/pd_")
                and f["file"] != "figures/pd_2d.png"):
        categorical = fig["title"].startswith("Partial dependence on colour")
        assert fig["caption"] == ("One bar per category." if categorical
                                  else "Red ticks along the bottom: deciles of the input.")
    assert re.fullmatch(r"\d+\.\d s|\d\.\d\d s|\d+ min \d+ s",
                        evaluation["details"]["training time"])


def test_report_shap_section_is_the_models_shap_values(run):
    """mean |SHAP| in evaluation.json: the test split's SHAP values, computed again here."""
    from distboost.inspection import shap_values
    from flows._data import load_split

    evaluation = json.loads((run["root"] / "report" / "evaluation.json").read_text())
    shap = evaluation["shap"]
    X, _ = load_split(run["data"], "test")
    X = X.compute()
    assert shap["rows"] == len(X) == evaluation["metrics"]["n"]  # under 2000 rows: all
    assert shap["explained"] == "log-odds of class 1"
    values = shap_values(distboost.load_model(run["model"]), X)
    expected = np.abs(values[:, :-1]).mean(axis=0)
    table = {r["feature"]: r["mean |SHAP|"] for r in shap["mean_abs"]}
    assert list(table) == [X.columns[j] for j in np.argsort(-expected, kind="stable")]
    np.testing.assert_allclose([table[c] for c in X.columns], expected, rtol=1e-12)
    assert shap["bias"] == pytest.approx(values[0, -1], abs=1e-12)
    files = {f["file"] for f in evaluation["figures"] if f["section"] == "shap"}
    assert files == {"figures/shap_summary.png"} | {f"figures/shap_dependence_{k}.png"
                                                    for k in range(4)}
    html = (run["root"] / "report" / "report.html").read_text()
    assert not shap["sampled"]
    assert (f"SHAP values of the model&#x27;s log-odds of class 1 for the {len(X)} rows of the "
            f"test split") in html


def test_multiclass_shap_is_drawn_per_class():
    """Three classes: each class's SHAP values on their own (a summary per
    class, the class's column of the mean |SHAP| table), never one row's
    predicted class mixed with another's."""
    from distboost.inspection import shap_values
    from distboost.plotting import plot_shap_dependence
    from flows.evaluate import _explained_outputs, _mean_abs_shap

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    y = np.digitize(X["a"] + X["b"] / 2, [-0.5, 0.5])
    model = distboost.GradientBoostingClassifier(n_estimators=5, max_depth=2).fit(X, y)
    values = shap_values(model, X)  # (300, 3, 3)
    explained = _explained_outputs(model, values)
    assert [w for w, _ in explained] == ["class 0 score", "class 1 score", "class 2 score"]
    for k, (_, v) in enumerate(explained):
        np.testing.assert_array_equal(v, values[:, k])
    table = _mean_abs_shap(values, ["a", "b"], [w for w, _ in explained])
    assert table[0]["feature"] == "a"
    assert table[0]["class 2 score"] == pytest.approx(np.abs(values[:, 2, 0]).mean())
    fig = plot_shap_dependence(X["a"].to_numpy(), values[:, :, 0], "a",
                               labels=[w for w, _ in explained])
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "class 0 score", "class 1 score", "class 2 score"]


def test_partial_dependence_captions_match_the_plots(tmp_path):
    """Bars for a categorical input (no deciles drawn, none spoken of), a
    decile rug for a numeric one (and the caption says so)."""
    import dask.dataframe as dd

    from flows.evaluate import _dependence_figures

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=400),
                      "c": pd.Categorical(rng.choice(["u", "v", "w"], 400))})
    y = X["a"] + 2 * (X["c"] == "v")
    model = distboost.GradientBoostingRegressor(n_estimators=5, max_depth=2).fit(X, y)
    (tmp_path / "figures").mkdir()
    figures, _ = _dependence_figures(model, dd.from_pandas(X, npartitions=2), ["c", "a"], 2,
                                     tmp_path)
    captions = {f["title"]: f["caption"] for f in figures}
    assert captions["Partial dependence on c"] == "One bar per category."
    assert captions["Partial dependence on a"] == ("Red ticks along the bottom: deciles of the "
                                                   "input.")


def test_artifacts_are_in_the_prefect_database(run):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    keys = ["e2e-test-evaluation", "e2e-test-metrics", "e2e-test-importance", "e2e-test-shap"]
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    by_key = {a.key: a for a in found}
    assert set(by_key) == set(keys)
    assert by_key["e2e-test-evaluation"].type == "markdown"
    assert "error rate" in by_key["e2e-test-evaluation"].data
    assert by_key["e2e-test-metrics"].type == "table"
    assert by_key["e2e-test-shap"].type == "table" and "mean |SHAP|" in by_key["e2e-test-shap"].data
    assert "Largest mean |SHAP|" in by_key["e2e-test-evaluation"].data


def test_explain_writes_shap_values_that_add_up(run, scheduler, tmp_path):
    from distboost.inspection import shap_values
    from flows._data import load_features
    from flows.explain import explain
    from flows.predict import model_features

    model = distboost.load_model(run["model"])
    test = str(run["root"] / "data" / "test")
    out = explain(model=run["model"], data=test, output=str(tmp_path / "shap"),
                  scheduler=scheduler)
    frame = pd.concat([pd.read_parquet(p) for p in sorted((tmp_path / "shap").glob("*"))])
    X = load_features(test, model_features(model)).compute()
    assert list(frame.columns) == [f"shap_{c}" for c in X.columns] + ["shap_bias"]
    np.testing.assert_allclose(frame.sum(axis=1), model.decision_function(X), atol=1e-9)
    np.testing.assert_array_equal(frame.to_numpy(), shap_values(model, X))
    with pytest.raises(FileExistsError, match="already exists; pass --force"):
        explain(model=run["model"], data=test, output=out, scheduler=scheduler)


def test_pipeline_regression_then_predict(prefect_harness, scheduler, tmp_path):
    write_csv_files(friedman1(800, 1), tmp_path / "raw", n_files=2)
    report = pipeline(
        source=str(tmp_path / "raw"),
        output=str(tmp_path / "run"),
        target="y",
        params={"n_estimators": 8, "max_depth": 3},
        checkpoint_every=4,
        artifact_key="e2e-regression",
        scheduler=scheduler,
    )
    assert report == str(tmp_path / "run" / "report" / "report.html")
    evaluation = json.loads((tmp_path / "run" / "report" / "evaluation.json").read_text())
    assert {"rmse", "mae", "r2"} <= set(evaluation["metrics"])
    assert any(f["file"] == "figures/residuals.png" for f in evaluation["figures"])
    out = predict(
        model=str(tmp_path / "run" / "model" / "model.json"),
        data=str(tmp_path / "run" / "data" / "test"),
        output=str(tmp_path / "pred"),
        scheduler=scheduler,
    )
    predictions = pd.concat(pd.read_parquet(p) for p in sorted((tmp_path / "pred").glob("*")))
    assert out == str(tmp_path / "pred")
    assert len(predictions) == evaluation["metrics"]["n"]
    expected = pd.read_parquet(tmp_path / "run" / "report" / "predictions.parquet")
    np.testing.assert_allclose(np.sort(predictions["prediction"]), np.sort(expected["prediction"]))


def test_shap_section_of_a_sample(run, scheduler, tmp_path):
    """A split larger than shap_rows is sampled on the workers (about shap_rows rows)."""
    from distributed import Client

    from flows.evaluate import draw_shap

    model = distboost.load_model(run["model"])
    with Client(scheduler, set_as_default=False) as client:
        figures, summary = draw_shap.fn(client, model, run["data"], "train", str(tmp_path), 100, 2)
        nothing = draw_shap.fn(client, model, run["data"], "test", str(tmp_path), 0, 2)
    assert summary["sampled"] and 50 <= summary["rows"] <= 150 and summary["split"] == "train"
    assert [f["file"] for f in figures] == ["figures/shap_summary.png",
                                            "figures/shap_dependence_0.png",
                                            "figures/shap_dependence_1.png"]
    assert all((tmp_path / f["file"]).is_file() for f in figures)
    assert nothing == ([], None)


def test_the_pipeline_model_is_the_library_fit_on_the_training_split(prefect_harness, scheduler,
                                                                    tmp_path):
    """One binning: ``distboost prepare`` + ``distboost train`` give, to the bit, the
    model of the estimator's own ``fit`` on the prepared training split (more
    training rows than the binning sample, a categorical column, missing values)."""
    from distboost.binning import SAMPLE_ROWS

    n_rows = int(SAMPLE_ROWS / 0.7) + 6000  # the training split (70 %) exceeds the sample
    frame = distboost.demo_data.hastie_10_2(n_rows, 3).iloc[:, [0, 1, 2, 3, 10]]
    frame["colour"] = np.random.default_rng(3).choice(["red", "green", "blue"], n_rows)
    frame.loc[frame.index[::17], "x2"] = np.nan
    (tmp_path / "raw").mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n_rows), 2)):
        frame.iloc[rows].to_parquet(tmp_path / "raw" / f"part-{i}.parquet")
    data = prepare(source=str(tmp_path / "raw"), output=str(tmp_path / "data"), target="y",
                   categorical=["colour"], scheduler=scheduler)
    params = {"n_estimators": 4, "max_depth": 3, "learning_rate": 0.5}
    model = train(data=data, output=str(tmp_path / "model"), params=params, scheduler=scheduler)
    train_split = pd.read_parquet(tmp_path / "data" / "train")
    assert len(train_split) > SAMPLE_ROWS
    X, y = train_split.drop(columns="y"), train_split["y"]
    assert isinstance(X["colour"].dtype, pd.CategoricalDtype)
    library = distboost.GradientBoostingClassifier(**params).fit(X, y)
    pipeline_model = distboost.load_model(model)
    assert pipeline_model.bin_mapper_.to_dict() == library.bin_mapper_.to_dict()
    assert_same_model(pipeline_model, library)
    np.testing.assert_array_equal(pipeline_model.predict_proba(X), library.predict_proba(X))
