"""Constraints and a user's objective and metric through the flows, run for real
under Prefect on an in-process LocalCluster: train.yaml names columns and
"module:function"; the report draws the monotone features' partial dependence
and evaluation.json records the constraints; early stopping follows the
user's metric's direction."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json

import numpy as np
import pandas as pd
import pytest
from distributed import LocalCluster

import distboost
from distboost.demo_data import friedman1, write_csv_files
from flows.config import estimator_params, train_config
from flows.evaluate import evaluate
from flows.prepare import prepare
from flows.train import train

MONOTONE = {"x4": 1, "x5": 1}  # Friedman #1: 10 x4 + 5 x5 + ...
OBJECTIVE = f"{fx.__name__}:squared_objective"
METRIC = f"{fx.__name__}:WITHIN_ONE"


@pytest.fixture(scope="module")
def run(prefect_harness, tmp_path_factory):
    fx.WITHIN_ONE = fx.within_one()
    root = tmp_path_factory.mktemp("constraints")
    write_csv_files(friedman1(1500, 3), root / "raw", n_files=2)
    config = root / "train.yaml"
    config.write_text(
        "estimator: GradientBoostingRegressor\n"
        f"params: {{n_estimators: 60, max_depth: 3, learning_rate: 0.3, loss: '{OBJECTIVE}',\n"
        f"         eval_metric: [rmse, '{METRIC}'], monotonic_cst: {json.dumps(MONOTONE)},\n"
        "         interaction_cst: [[x1, x2]]}\n"
        "early_stopping_rounds: 5\ncheckpoint_every: 10\n")
    with LocalCluster(**fx.TEST_CLUSTER) as cluster:
        address = cluster.scheduler_address
        data = prepare(source=str(root / "raw"), output=str(root / "data"), target="y",
                       scheduler=address)
        model = train(data=data, output=str(root / "model"), config=str(config),
                      scheduler=address)
        report = evaluate(data=data, model=model, output=str(root / "report"),
                          artifact_key="constraints-test", n_features=2, scheduler=address)
    return {"root": root, "data": data, "model": model, "report": report}


def test_the_model_keeps_its_constraints(run):
    model = distboost.load_model(run["model"])
    assert model.loss == "custom" and model.eval_metric == ["rmse", "custom"]
    assert model.monotonic_cst == MONOTONE and model.interaction_cst == [["x1", "x2"]]
    X = pd.read_parquet(f"{run['data']}/test").drop(columns="y").head(50)
    grid = np.linspace(0, 1, 11)
    for name in MONOTONE:
        curves = np.stack([model.predict(X.assign(**{name: v})) for v in grid], axis=1)
        assert np.diff(curves, axis=1).min() >= 0
    paths, stack = [], [(t[0].nodes, 0, frozenset()) for t in model.trees_]
    while stack:
        nodes, i, used = stack.pop()
        if nodes["is_leaf"][i]:
            paths.append(used)
            continue
        used = used | {int(nodes["feature"][i])}
        stack += [(nodes, nodes["left"][i], used), (nodes, nodes["right"][i], used)]
    assert all(p <= {0, 1} or not p & {0, 1} for p in paths)


def test_early_stopping_follows_the_user_metric_upward(run):
    history = json.loads((run["root"] / "model" / "history.json").read_text())
    values = history["validation_0"]["within_1"]
    model = distboost.load_model(run["model"])
    assert model.best_iteration_ == int(np.argmax(values))  # the highest, not the lowest
    assert len(model.trees_) == model.best_iteration_ + 1


def test_the_report_shows_and_records_the_constraints(run):
    evaluation = json.loads((run["root"] / "report" / "evaluation.json").read_text())
    assert evaluation["constraints"] == {
        "monotonic_cst": MONOTONE,
        "interaction_cst": [["x1", "x2"], [f"x{j}" for j in range(3, 11)]]}
    titles = [f["title"] for f in evaluation["figures"]]
    for name in MONOTONE:
        assert f"Partial dependence on {name} (monotone increasing)" in titles


def test_config_imports_functions_and_knows_their_direction():
    fx.WITHIN_ONE = fx.within_one()
    cfg = train_config({"estimator": "GradientBoostingRegressor",
                        "params": {"loss": OBJECTIVE, "eval_metric": ["rmse", METRIC]}})
    params = estimator_params(cfg.params)
    assert params["loss"] is fx.squared_objective and params["eval_metric"][1] is fx.WITHIN_ONE
    assert params["eval_metric"][1].greater_is_better  # the library's early stopping reads it
    with pytest.raises(ValueError, match=r"params.eval_metric\[0\]: cannot import "
                                         r"'math:no_such'"):
        train_config({"params": {"eval_metric": ["math:no_such"]}})
    with pytest.raises(ValueError, match=r"params.loss: 'math:pi' is float, not a function"):
        train_config({"estimator": "GradientBoostingRegressor", "params": {"loss": "math:pi"}})
