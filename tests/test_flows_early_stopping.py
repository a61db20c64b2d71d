"""The pipeline's early stopping: on by default on the validation split, said
when it stops (and on the progress bar), turned off by the configuration; and
``--param`` taking every training setting. Run for real under Prefect on an
in-process LocalCluster."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import contextlib
import io
import json
import re

import pytest
from distributed import LocalCluster

import distboost
from flows.config import DEFAULT_PATIENCE, train_config
from flows.train import train

PARAMS = {"n_estimators": 80, "max_depth": 6, "learning_rate": 1.0}  # overfits in a few rounds
# (the prepared splits differ between pandas versions, so the stop's round does too)


# ------------------------------------------------------------ configuration
def test_early_stopping_is_on_by_default_and_null_turns_it_off():
    assert train_config({}).early_stopping_rounds == DEFAULT_PATIENCE == 10
    assert train_config({"early_stopping_rounds": None}).early_stopping_rounds is None


def test_param_takes_the_run_settings_too():
    cfg = train_config({}, params={"early_stopping_rounds": 4, "checkpoint_every": 3,
                                   "max_depth": 2})
    assert (cfg.early_stopping_rounds, cfg.checkpoint_every) == (4, 3)
    assert cfg.params == {"max_depth": 2}
    off = train_config({"early_stopping_rounds": 7}, params={"early_stopping_rounds": None})
    assert off.early_stopping_rounds is None  # --param early_stopping_rounds=null


def test_param_errors_name_the_right_place():
    with pytest.raises(ValueError, match="AdaBoostClassifier has no early stopping"):
        train_config({"estimator": "AdaBoostClassifier"}, params={"early_stopping_rounds": 5})
    assert train_config({"estimator": "AdaBoostClassifier"}).early_stopping_rounds == 10
    with pytest.raises(ValueError, match="give it as --test-fraction"):
        train_config({}, params={"test_fraction": 0.2})


# ------------------------------------------------------------ the train flow
@pytest.fixture(scope="module")
def runs(prefect_harness, tmp_path_factory):
    root = tmp_path_factory.mktemp("early-stopping")
    data = fx.prepared_folder(fx.hastie_csv(root / "raw", 800), root / "data",
                              categorical=["colour"])
    stderr = io.StringIO()
    with LocalCluster(**fx.TEST_CLUSTER) as cluster:
        address = cluster.scheduler_address
        with contextlib.redirect_stderr(stderr):
            on = train(data=str(data), output=str(root / "on"), params=PARAMS,
                       scheduler=address, progress=True)
        off = train(data=str(data), output=str(root / "off"),
                    config={"early_stopping_rounds": None}, params=PARAMS, scheduler=address)
    return root, on, off, stderr.getvalue()


def test_the_train_flow_stops_early_by_default(runs):
    root, on, _, _ = runs
    history = json.loads((root / "on" / "history.json").read_text())
    values = history["validation_0"]["logloss"]
    best = min(range(len(values)), key=values.__getitem__)
    assert len(values) == best + 1 + DEFAULT_PATIENCE < PARAMS["n_estimators"]
    model = distboost.load_model(on)
    assert len(model.trees_) == best + 1 == model.best_iteration_ + 1
    summary = json.loads((root / "on" / "training.json").read_text())
    assert summary["rounds"] == best + 1 and summary["best_iteration"] == best


def test_the_stop_is_said_with_its_metric_and_rounds(runs):
    root, _, _, stderr = runs
    values = json.loads((root / "on" / "history.json").read_text())["validation_0"]["logloss"]
    best = min(range(len(values)), key=values.__getitem__)
    said = (f"distboost: early stopping at round {len(values)} of {PARAMS['n_estimators']}: "
            f"validation logloss has not improved for {DEFAULT_PATIENCE} rounds since round "
            f"{best + 1} (best {values[best]:.4g}); the model keeps rounds 1-{best + 1}")
    assert said in stderr
    bar = [line for line in stderr.splitlines() if line.startswith("rounds")]
    assert bar, stderr
    assert re.search(rf"{len(values)}/{len(values)}.*early stopping at round {len(values)} of "
                     rf"{PARAMS['n_estimators']}", bar[-1]), bar[-1]


def test_the_bar_names_the_metric():
    from flows.train import _round_note

    assert _round_note({"training": {"logloss": [0.3]},
                        "validation_0": {"rmse": [2.0], "logloss": [0.5, 0.23124]}}) == \
        "valid logloss 0.2312"
    assert _round_note({"training": {"logloss": [0.3]}}) == ""


def test_off_runs_every_round(runs):
    root, _, off, stderr = runs
    values = json.loads((root / "off" / "history.json").read_text())["validation_0"]["logloss"]
    assert len(values) == PARAMS["n_estimators"]
    assert len(distboost.load_model(off).trees_) == PARAMS["n_estimators"]
    assert stderr.count("early stopping at round") == 2  # the bar and the line, of "on" only


def test_the_command_line_param_takes_early_stopping_rounds():
    from flows import cli

    parser = cli.build_parser()
    for value, expected in (("10", 10), ("null", None)):
        args = parser.parse_args(["train", "data", "--out", "run", "--param",
                                  f"early_stopping_rounds={value}"])
        cli._check_train_config(args, None)  # no "has no parameter"
        assert train_config({}, params=cli._params(args)).early_stopping_rounds == expected
    args = parser.parse_args(["train", "data", "--out", "run", "--estimator",
                              "RandomForestClassifier", "--param", "early_stopping_rounds=10"])
    with pytest.raises(ValueError, match="RandomForestClassifier has no early stopping"):
        cli._check_train_config(args, None)


def test_a_configuration_passed_on_keeps_its_defaults_as_defaults():
    ada = train_config({"estimator": "AdaBoostClassifier"})
    assert train_config(ada) == ada  # not "AdaBoostClassifier has no early stopping"
    gbm = train_config({"early_stopping_rounds": None, "checkpoint_every": 3})
    assert train_config(gbm) == gbm
