"""Several targets through the command line (``flows._targets``): ``prepare
--target a --target b ...`` records the k targets, ``train`` fits one
multi-output model (regression, or multi-label classification of 0/1
targets), ``predict`` writes ``prediction_<target>`` per target, and
``evaluate`` reports each target's metrics and their mean. DART
(``--param booster=dart``) runs through the same commands.

Every model is compared with the library's fit of the same rows, and every
metric with scikit-learn's on the written columns.
"""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics as skm

import distboost as db
from flows._data import load_bin_mapper
from flows._precheck import check_prepare
from flows._tabular import DataError

FEATURES = ["x0", "x1", "x2", "x3"]
SMALL = {"n_estimators": 8, "max_depth": 3, "learning_rate": 0.3}
DART = {"booster": "dart", "rate_drop": 0.1, "skip_drop": 0.0}


def _params(params: dict) -> list[str]:
    return [a for k, v in params.items() for a in ("--param", f"{k}={v}")]


def _frame(n=400, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    frame = pd.DataFrame(X, columns=FEATURES)
    frame["a"] = X[:, 0] + X[:, 1] + rng.normal(0, 0.3, n)
    frame["b"] = X[:, 0] * X[:, 2] + rng.normal(0, 0.3, n)
    frame["c"] = np.sin(X[:, 3]) + rng.normal(0, 0.3, n)
    for name, source in (("la", "a"), ("lb", "b"), ("lc", "c")):
        frame[name] = (frame[source] > 0).astype(np.int64)
    frame.insert(0, "row", np.arange(n))
    return frame


def _split(data, name) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted((data / name).glob("*.parquet"))],
                     ignore_index=True)


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(**fx.TEST_CLUSTER) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def cli_run(prefect_harness, scheduler):
    """``distboost ARGS`` in this process on the module's cluster (``-v``: an
    error raises, with its traceback)."""
    from flows import cli

    def run(args):
        assert cli.main(["--no-progress", "-v", *args, "--scheduler", scheduler]) == 0

    return run


@pytest.fixture(scope="module")
def raw(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multi") / "raw"
    folder.mkdir()
    frame = _frame()
    frame.iloc[:200].to_parquet(folder / "part-0.parquet", index=False)
    frame.iloc[200:].to_parquet(folder / "part-1.parquet", index=False)
    return frame, folder


def _prepared_and_trained(cli_run, folder, name, targets, drop, params):
    """``prepare`` of ``targets`` (the other target columns dropped), then ``train``."""
    data, run = folder.parent / f"{name}-data", folder.parent / f"{name}-run"
    cli_run(["prepare", str(folder), "--out", str(data),
             *(a for t in targets for a in ("--target", t)), "--id", "row", "--drop", *drop])
    cli_run(["train", str(data), "--out", str(run), *_params(params)])
    return data, run


@pytest.fixture(scope="module")
def regression(raw, cli_run):
    """Three numeric targets prepared and trained as DART (one tree per target a round)."""
    return _prepared_and_trained(cli_run, raw[1], "reg", "abc", ["la", "lb", "lc"],
                                 {**SMALL, **DART})


@pytest.fixture(scope="module")
def labels(raw, cli_run):
    """Three 0/1 targets: multi-label classification with vector-leaf trees."""
    return _prepared_and_trained(cli_run, raw[1], "lab", ["la", "lb", "lc"], list("abc"),
                                 {**SMALL, "multi_strategy": "multi_output_tree"})


def _library_fit(cls, data, targets, **params):
    """The fit the train flow makes, in process: the training split, the
    validation split watched (early stopping after 10 rounds, the run's
    default), the prepared bins."""
    train, valid = _split(data, "train"), _split(data, "validation")
    return cls(**SMALL, **params, random_state=0, train_metric=True,
               early_stopping_rounds=10).fit(
        train[FEATURES], train[targets], eval_set=[(valid[FEATURES], valid[targets])],
        bin_mapper=load_bin_mapper(data))


def test_prepare_records_the_targets(regression, labels):
    for (data, _), task, targets, kind in ((regression, "regression", ["a", "b", "c"], "float"),
                                           (labels, "classification", ["la", "lb", "lc"],
                                            "integer")):
        schema = json.loads((data / "schema.json").read_text())
        assert (schema["task"], schema["targets"], schema["target"], schema["target_kind"]) == \
            (task, targets, targets[0], kind)
        assert [f["name"] for f in schema["features"]] == FEATURES
        train = _split(data, "train")
        assert list(train.columns) == FEATURES + targets + ["row"]
    statistics = json.loads((labels[0] / "statistics.json").read_text())
    assert set(statistics["targets"]) == {"lb", "lc"}  # the first is "target"
    assert statistics["targets"]["lb"]["values"].keys() == {"0", "1"}


def test_train_fits_the_library_model(raw, regression, labels):
    frame, _ = raw
    data, run = regression
    est = db.load_model(run / "model.json")
    assert type(est).__name__ == "GradientBoostingRegressor" and est.n_targets_ == 3
    assert list(est.target_names_) == ["a", "b", "c"] and est.booster == "dart"
    assert est.tree_weights_.shape == (len(est.trees_), 3)
    assert not np.all(est.tree_weights_ == 1)  # trees were dropped and weighed again
    here = _library_fit(db.GradientBoostingRegressor, data, ["a", "b", "c"], **DART)
    np.testing.assert_array_equal(est.predict(frame[FEATURES]), here.predict(frame[FEATURES]))
    data, run = labels
    clf = db.load_model(run / "model.json")
    assert type(clf).__name__ == "GradientBoostingClassifier" and clf.n_targets_ == 3
    assert clf.multi_strategy == "multi_output_tree"
    here = _library_fit(db.GradientBoostingClassifier, data, ["la", "lb", "lc"],
                        multi_strategy="multi_output_tree")
    np.testing.assert_array_equal(clf.predict_proba(frame[FEATURES]),
                                  here.predict_proba(frame[FEATURES]))


def test_predict_writes_a_column_per_target(raw, regression, labels, cli_run, tmp_path):
    frame, folder = raw
    out = tmp_path / "reg.csv"
    cli_run(["predict", str(regression[1] / "model.json"), str(folder), "--keep", "row",
             "--out", str(out)])
    written = pd.read_csv(out, float_precision="round_trip")
    assert list(written.columns) == ["row", "prediction_a", "prediction_b", "prediction_c"]
    np.testing.assert_array_equal(written["row"], frame["row"])  # joinable, input order
    est = db.load_model(regression[1] / "model.json")
    np.testing.assert_allclose(written.iloc[:, 1:].to_numpy(), est.predict(frame[FEATURES]),
                               rtol=1e-15)  # the CSV text read back: within an ulp
    out = tmp_path / "labels"
    cli_run(["predict", str(labels[1] / "model.json"), str(folder), "--proba", "--keep", "row",
             "--out", str(out)])
    written = pd.concat([pd.read_parquet(p) for p in sorted(out.glob("part-*.parquet"))],
                        ignore_index=True)
    names = ["la", "lb", "lc"]
    assert list(written.columns) == (["row"] + [f"prediction_{n}" for n in names]
                                     + [f"proba_{n}" for n in names])
    clf = db.load_model(labels[1] / "model.json")
    np.testing.assert_array_equal(written[[f"prediction_{n}" for n in names]],
                                  clf.predict(frame[FEATURES]))
    np.testing.assert_array_equal(written[[f"proba_{n}" for n in names]],
                                  clf.predict_proba(frame[FEATURES]))


def test_explain_writes_shap_values_per_target(raw, regression, cli_run, tmp_path):
    frame, folder = raw
    out = tmp_path / "shap.csv"
    cli_run(["explain", str(regression[1] / "model.json"), str(folder), "--keep", "row",
             "--out", str(out)])
    written = pd.read_csv(out, float_precision="round_trip")
    names = [f"shap_{t}_{f}" for t in ("a", "b", "c") for f in [*FEATURES, "bias"]]
    assert list(written.columns) == ["row", *names]
    est = db.load_model(regression[1] / "model.json")
    total = written[names].to_numpy().reshape(len(written), 3, 5).sum(axis=2)
    np.testing.assert_allclose(total, est.predict(frame[FEATURES]), rtol=1e-9, atol=1e-9)


def test_an_interrupted_multi_output_run_resumes_to_the_same_model(labels, cli_run, tmp_path,
                                                                    capsys):
    """A vector-leaf multi-label run stopped after its first checkpoint (later
    files gone): the rerun continues from that round, to the uninterrupted model."""
    data, _ = labels
    args = [*_params({**SMALL, "multi_strategy": "multi_output_tree"}), "--checkpoint-every", "3"]
    run, again = tmp_path / "run", tmp_path / "again"
    cli_run(["train", str(data), "--out", str(run), *args])
    shutil.copytree(run, again)
    for name in ("model.json", "history.json", "training.json"):
        (again / name).unlink()
    checkpoints = sorted((again / "checkpoints").glob("round-*[0-9].json"))
    assert [p.name for p in checkpoints] == ["round-00003.json", "round-00006.json",
                                             "round-00008.json"]
    for later in checkpoints[1:]:
        later.unlink()
    capsys.readouterr()
    cli_run(["train", str(data), "--out", str(again), *args])
    assert "resuming from checkpoint" in capsys.readouterr().err
    assert json.loads((again / "training.json").read_text())["resumed_from_round"] == 3
    assert (again / "model.json").read_text() == (run / "model.json").read_text()


def _evaluate(cli_run, data, run, out):
    cli_run(["evaluate", str(data), "--model", str(run / "model.json"), "--out", str(out),
             "--shap-rows", "40"])
    evaluation = json.loads((out / "evaluation.json").read_text())
    return evaluation, pd.read_parquet(out / "predictions.parquet"), (out / "report.html")


def test_evaluate_regression_per_target(regression, cli_run, tmp_path):
    data, run = regression
    evaluation, pred, report = _evaluate(cli_run, data, run, tmp_path / "report")
    est = db.load_model(run / "model.json")
    test = _split(data, "test")
    np.testing.assert_array_equal(pred[["prediction_a", "prediction_b", "prediction_c"]],
                                  est.predict(test[FEATURES]))
    m = evaluation["metrics"]
    assert m["targets"] == ["a", "b", "c"] and m["n"] == len(test)
    for row, name in zip(m["per_target"], ["a", "b", "c"], strict=True):
        y, p = test[name].to_numpy(), pred[f"prediction_{name}"].to_numpy()
        np.testing.assert_array_equal(pred[f"target_{name}"], y)
        assert row["target"] == name
        assert row["rmse"] == pytest.approx(np.sqrt(skm.mean_squared_error(y, p)), rel=1e-12)
        assert row["mae"] == pytest.approx(skm.mean_absolute_error(y, p), rel=1e-12)
        assert row["r2"] == pytest.approx(skm.r2_score(y, p), rel=1e-12)
    Y = test[["a", "b", "c"]].to_numpy()
    P = pred[["prediction_a", "prediction_b", "prediction_c"]].to_numpy()
    assert m["r2"] == pytest.approx(skm.r2_score(Y, P), rel=1e-12)  # uniform average
    assert m["mae"] == pytest.approx(skm.mean_absolute_error(Y, P), rel=1e-12)
    assert m["r2"] > 0.3 and m["baseline"]["r2"] == 0
    page = report.read_text()
    for text in ("Per target", "unweighted means over the targets", "3 targets", "booster",
                 "dart (rate_drop=0.1, skip_drop=0.0", "tree weights (DART)", "Targets"):
        assert text in page, text
    assert (tmp_path / "report" / "figures" / "per_target.png").is_file()


def test_evaluate_labels_per_target(labels, cli_run, tmp_path):
    data, run = labels
    evaluation, pred, report = _evaluate(cli_run, data, run, tmp_path / "report")
    test = _split(data, "test")
    names = ["la", "lb", "lc"]
    m = evaluation["metrics"]
    for row, name in zip(m["per_target"], names, strict=True):
        y, p = test[name].to_numpy(np.int64), pred[f"proba_{name}"].to_numpy()
        assert row["auc"] == pytest.approx(skm.roc_auc_score(y, p), rel=1e-12)
        assert row["log_loss"] == pytest.approx(skm.log_loss(y, p, labels=[0, 1]), rel=1e-9)
        assert row["accuracy"] == pytest.approx(skm.accuracy_score(y, p > 0.5), rel=1e-12)
        assert row["positives"] == int(y.sum())
    assert m["auc"] == pytest.approx(np.mean([r["auc"] for r in m["per_target"]]), rel=1e-12)
    Y = test[names].to_numpy(np.int64)
    P = pred[[f"prediction_{n}" for n in names]].to_numpy(np.int64)
    assert m["subset_accuracy"] == pytest.approx(skm.accuracy_score(Y, P), rel=1e-12)
    assert m["auc"] > 0.7
    page = report.read_text()
    for text in ("Per target", "subset accuracy (every label right)", "Labels",
                 "rows of label 1"):
        assert text in page, text
    assert "booster" not in evaluation["details"]  # gradient boosting: no DART lines


def test_one_target_dart_end_to_end(raw, cli_run, tmp_path):
    """DART of one target: train, model file, predict, evaluate and the report
    (the data prepared by the prepare flow's steps, ``fx.prepared_folder``)."""
    frame, _ = raw
    source, data, run = tmp_path / "raw", tmp_path / "data", tmp_path / "run"
    source.mkdir()
    data.mkdir()
    frame[[*FEATURES, "a"]].to_parquet(source / "part-0.parquet", index=False)
    fx.prepared_folder(source, data, target="a")
    assert "targets" not in json.loads((data / "schema.json").read_text())  # as before
    cli_run(["train", str(data), "--out", str(run), *_params({**SMALL, **DART})])
    est = db.load_model(run / "model.json")
    here = _library_fit(db.GradientBoostingRegressor, data, "a", **DART)
    np.testing.assert_array_equal(est.predict(frame[FEATURES]), here.predict(frame[FEATURES]))
    np.testing.assert_array_equal(est.tree_weights_, here.tree_weights_)
    assert not np.all(est.tree_weights_ == 1)
    cli_run(["predict", str(run / "model.json"), str(source), "--out", str(tmp_path / "p.csv")])
    written = pd.read_csv(tmp_path / "p.csv", float_precision="round_trip")
    np.testing.assert_allclose(written["prediction"], est.predict(frame[FEATURES]), rtol=1e-15)
    evaluation, pred, report = _evaluate(cli_run, data, run, tmp_path / "report")
    assert evaluation["details"]["booster"].startswith("dart (rate_drop=0.1")
    y = pred["target"].to_numpy()
    assert evaluation["metrics"]["rmse"] == pytest.approx(
        np.sqrt(skm.mean_squared_error(y, pred["prediction"])), rel=1e-12)
    assert "tree weights (DART)" in report.read_text()


# ------------------------------------------------------------------ refusals
@pytest.fixture(scope="module")
def csv(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "data.csv"
    frame = _frame(60).drop(columns="row")
    frame["colour"] = np.where(frame["x0"] > 0, "red", "blue")
    frame.to_csv(path, index=False)
    return str(path)


REFUSALS = [
    ("a text target", {"target": ["a", "colour"]},
     r"target column 'colour' is not numeric \(dtype (object|str), e.g. '(red|blue)' in .*data.csv\)"),
    ("a target twice", {"target": ["a", "b", "a"]},
     r"target column\(s\) \['a'\] given more than once \(--target\)"),
    ("a target also a feature", {"target": ["a", "b"], "feature_columns": ["b"]},
     r"target column 'b' is also given as --feature b"),
    ("a target also the group", {"target": ["a", "b"], "group": "b"},
     r"target column 'b' is also given as --group b"),
    ("a target also an id", {"target": ["a", "b"], "id_columns": ["a"]},
     r"target column 'a' is also given as --id a"),
    ("a target also dropped", {"target": ["a", "b"], "drop": ["b"]},
     r"target column 'b' is also given as --drop b"),
    ("classification of numbers", {"target": ["la", "b"], "task": "classification"},
     r"multi-label: every target holds 0/1 labels, but target column 'b' holds \[-"),
    ("ranking", {"target": ["a", "b"], "group": "c"},
     r"a ranking task \(--group c\) has one target \(the relevance\); got 2 --target columns"),
    ("a missing target", {"target": ["a", "z"]}, r"target column 'z' not found in"),
]


@pytest.mark.parametrize("given, pattern", [r[1:] for r in REFUSALS],
                         ids=[r[0] for r in REFUSALS])
def test_prepare_refusals(csv, given, pattern):
    given = dict(given)
    if "colour" not in given["target"]:  # a text column: not a feature
        given["drop"] = [*given.get("drop", []), "colour"]
    with pytest.raises(DataError, match=pattern):
        check_prepare(csv, **given)


def test_auto_task_and_a_label_other_than_0_1_in_a_later_file(tmp_path):
    raw = tmp_path / "raw"
    frame = _frame(80).drop(columns=["row", "a", "b", "c"])
    fx.write_csv(raw / "part-0.csv", frame.iloc[:40])
    later = frame.iloc[40:].copy()
    later.iloc[5, later.columns.get_loc("lb")] = 2
    fx.write_csv(raw / "part-1.csv", later)
    (tmp_path / "out").mkdir()
    from flows._schema import infer_data_schema
    from flows._tabular import read_file

    head = read_file(str(raw / "part-0.csv"), "csv")
    schema = infer_data_schema(head, "s", ["la", "lb", "lc"])
    assert (schema.task, schema.targets) == ("classification", ["la", "lb", "lc"])
    assert infer_data_schema(head, "s", ["la", "x0"]).task == "regression"  # not all 0/1
    with pytest.raises(DataError, match=r"target 'lb' of a multi-label task holds values other "
                                        r"than 0 and 1: \['2'\] \(1 row\(s\)\)"):
        fx.prepared_folder(raw, tmp_path / "out", target=["la", "lb", "lc"])


def test_train_refusals(labels, scheduler, cli_run, tmp_path, capsys):
    """Another estimator than gradient boosting: at once, before anything starts;
    what multi-output training does not support: the library's refusal as the
    fit starts; no run left behind."""
    from flows import cli

    data, _ = labels
    for argv, pattern in (
        (["--estimator", "RandomForestClassifier"],
         (r"RandomForestClassifier takes one target, but the prepared data have 3 \(\['la', "
         r"'lb', 'lc'\]\): train GradientBoostingClassifier")),
        (["--param", "booster=dart", "--param", "multi_strategy=multi_output_tree",
          "--scheduler", scheduler],
         (r"\(3 columns\) does not support booster='dart' with "
         r"multi_strategy='multi_output_tree'; leave it at its default")),
        (["--param", "eval_metric=auc", "--scheduler", scheduler],
         r"does not support eval_metric"),
    ):
        out = tmp_path / "run"
        capsys.readouterr()
        assert cli.main(["--no-progress", "train", str(data), "--out", str(out), *argv]) == 1
        err = capsys.readouterr().err
        assert "distboost: error: " in err and re.search(pattern, err), err
        assert not (out / "run.json").exists()  # nothing to resume: a rerun needs no --force


def test_pipeline_takes_several_targets(raw, cli_run, tmp_path):
    _, folder = raw
    out = tmp_path / "pipe"
    cli_run(["pipeline", str(folder), "--out", str(out), "--target", "a", "--target", "b",
             "--id", "row", "--drop", "c", "la", "lb", "lc", "--shap-rows", "0",
             *_params({"n_estimators": 3, "max_depth": 2})])
    evaluation = json.loads((out / "report" / "evaluation.json").read_text())
    assert [t["target"] for t in evaluation["metrics"]["per_target"]] == ["a", "b"]
    assert db.load_model(out / "model" / "model.json").n_targets_ == 2
