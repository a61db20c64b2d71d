"""A survival task through the command line: ``prepare --target TIME --event
EVENT`` (Cox) and ``prepare --label-lower-bound L --label-upper-bound U``
(AFT), ``train`` fitting GradientBoostingSurvivalRegressor (Dask, equal to the
same fit in process), ``predict`` writing the model's own predictions, and the
report's C-index, negative log-likelihood and Kaplan-Meier table equal to the
library's; the refusals name the column, file, row and value."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import re

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.inspection import survival_by_risk_group
from distboost.metrics import survival_score
from flows import cli
from flows._tabular import DataError

FEATURES = ["x0", "x1", "x2"]
PARAMS = ["--param", "n_estimators=8", "--param", "max_depth=3", "--param", "learning_rate=0.3"]
CLUSTER = ["--workers", "1", "--dashboard-address", ":0"]


def _frame(n=240, seed=0):
    """Times of hazard exp(0.8 x0), censored at random; AFT bounds of the same
    times with some rows interval- or left-censored."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    t = rng.exponential(np.exp(-0.8 * X[:, 0]))
    c = rng.exponential(1.5, size=n)
    time, event = np.minimum(t, c), (t <= c).astype(np.int64)
    lo, hi = time.copy(), np.where(event == 1, time, np.inf)
    hi[::11] = lo[::11] * 1.5  # interval-censored
    lo[::13], hi[::13] = 0.0, time[::13]  # left-censored
    return pd.DataFrame(X, columns=FEATURES).assign(time=time, event=event, lo=lo, hi=hi,
                                                    row_id=np.arange(n))


def _raw(folder, frame):
    folder.mkdir(parents=True, exist_ok=True)
    frame.iloc[:120].to_parquet(folder / "part-0.parquet", index=False)
    frame.iloc[120:].to_parquet(folder / "part-1.parquet", index=False)
    return folder


def _split(data, name):
    return pd.concat([pd.read_parquet(p) for p in sorted((data / name).glob("*.parquet"))],
                     ignore_index=True)


def _ok(args):
    result = fx.run_cli(args)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def cox(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cox")
    frame = _frame()
    raw = _raw(folder / "raw", frame.drop(columns=["lo", "hi"]))
    data, run = folder / "data", folder / "run"
    _ok(["prepare", str(raw), "--out", str(data), "--target", "time", "--event", "event",
         "--id", "row_id", *CLUSTER])
    _ok(["train", str(data), "--out", str(run), *PARAMS, *CLUSTER])
    return frame, raw, data, run


@pytest.fixture(scope="module")
def aft(tmp_path_factory):
    folder = tmp_path_factory.mktemp("aft")
    frame = _frame(seed=1)
    raw = _raw(folder / "raw", frame.drop(columns=["time", "event"]))
    data, run = folder / "data", folder / "run"
    _ok(["prepare", str(raw), "--out", str(data), "--label-lower-bound", "lo",
         "--label-upper-bound", "hi", "--id", "row_id", *CLUSTER])
    _ok(["train", str(data), "--out", str(run), *PARAMS, "--param",
         "aft_loss_distribution=logistic", *CLUSTER])
    return frame, raw, data, run


def test_prepare_records_a_survival_task(cox, aft):
    for (_, _, data, _), target, label in ((cox, "time", {"event": "event"}),
                                            (aft, "lo", {"label_upper_bound": "hi"})):
        schema = json.loads((data / "schema.json").read_text())
        assert (schema["task"], schema["target"]) == ("survival", target)
        assert {k: schema.get(k) for k in label} == label
        assert [f["name"] for f in schema["features"]] == FEATURES  # labels are no features
        assert set(schema["ids"]) == {"row_id", *label.values()}
    train = _split(aft[2], "train")
    assert np.isinf(train["hi"]).any() and (train["lo"] == 0).any()  # kept as given


def test_train_fits_cox_equal_to_the_fit_in_process(cox):
    _, _, data, run = cox
    est = db.load_model(run / "model.json")
    assert type(est).__name__ == "GradientBoostingSurvivalRegressor"
    assert est.objective == "survival:cox"
    train, valid = _split(data, "train"), _split(data, "validation")
    from flows._data import load_bin_mapper

    here = db.GradientBoostingSurvivalRegressor(
        n_estimators=8, max_depth=3, learning_rate=0.3, random_state=0, train_metric=True,
        early_stopping_rounds=10).fit(  # the run's defaults
        train[FEATURES], train["time"], event=train["event"],
        eval_set=[(valid[FEATURES], valid["time"], valid["event"])],
        bin_mapper=load_bin_mapper(data))
    np.testing.assert_array_equal(est.predict(valid[FEATURES]), here.predict(valid[FEATURES]))
    assert est.evals_result_["validation_0"] == here.evals_result_["validation_0"]
    np.testing.assert_array_equal(est.cum_baseline_hazard_, here.cum_baseline_hazard_)


def test_predict_writes_time_margin_and_survival(cox, tmp_path):
    frame, raw, _, run = cox
    out = tmp_path / "predictions"
    _ok(["predict", str(run / "model.json"), str(raw), "--keep", "row_id", "--times",
         "0.5,1,2", "--out", str(out)])
    written = pd.concat([pd.read_parquet(p) for p in sorted(out.glob("*.parquet"))],
                        ignore_index=True)
    assert list(written.columns) == ["row_id", "prediction", "margin", "survival_0.5",
                                     "survival_1", "survival_2"]
    est = db.load_model(run / "model.json")
    X = frame.loc[written["row_id"], FEATURES]
    np.testing.assert_array_equal(written["prediction"], est.predict(X))
    np.testing.assert_array_equal(written["margin"], est.predict(X, output_margin=True))
    np.testing.assert_array_equal(written.iloc[:, 3:].to_numpy(),
                                  est.predict_survival_function(X, [0.5, 1.0, 2.0]))
    assert written["row_id"].tolist() == list(range(len(frame)))


def _evaluate(data, run, out, shap_rows="0"):
    _ok(["evaluate", str(data), "--model", str(run / "model.json"), "--out", str(out),
         "--shap-rows", shap_rows, *CLUSTER])
    return json.loads((out / "evaluation.json").read_text())


def test_report_cindex_likelihood_and_kaplan_meier_of_cox(cox, tmp_path):
    _, _, data, run = cox
    evaluation = _evaluate(data, run, tmp_path / "report", shap_rows="30")
    metrics = evaluation["metrics"]
    test = _split(data, "test")
    est = db.load_model(run / "model.json")
    X, time, event = test[FEATURES], test["time"], test["event"]
    margin = est.predict(X, output_margin=True)
    assert metrics["n"] == len(test) and metrics["events"] == int(event.sum())
    assert metrics["cindex"] == est.score(X, time, event=event)
    assert metrics["cindex"] == survival_score(est, margin, time, event=event)
    assert metrics["cox-nloglik"] == survival_score(est, margin, time, event=event,
                                                    metric="cox-nloglik")
    assert metrics["baseline"]["cindex"] == 0.5
    expected = survival_by_risk_group(est, X, time, event, n_groups=4)
    pd.testing.assert_frame_equal(pd.DataFrame(metrics["by_risk_group"]), expected,
                                  check_dtype=False, check_exact=True)
    page = (tmp_path / "report" / "report.html").read_text()
    for text in ("C-index (Harrell)", "Cox negative log partial likelihood",
                 "Survival by risk group", "Kaplan-Meier", "SHAP summary",
                 "Predicted survival against Kaplan-Meier by risk group"):
        assert text in page, text
    assert (tmp_path / "report" / "figures" / "survival_by_risk_group.png").is_file()


def test_aft_trains_predicts_and_reports(aft, tmp_path):
    frame, raw, data, run = aft
    est = db.load_model(run / "model.json")
    assert (est.objective, est.aft_loss_distribution) == ("survival:aft", "logistic")
    train, valid = _split(data, "train"), _split(data, "validation")
    from flows._data import load_bin_mapper

    here = db.GradientBoostingSurvivalRegressor(
        objective="survival:aft", aft_loss_distribution="logistic", n_estimators=8,
        max_depth=3, learning_rate=0.3, random_state=0, train_metric=True,
        early_stopping_rounds=10).fit(
        train[FEATURES], y_lower=train["lo"], y_upper=train["hi"],
        eval_set=[(valid[FEATURES], valid["lo"], valid["hi"])], bin_mapper=load_bin_mapper(data))
    np.testing.assert_array_equal(est.predict(valid[FEATURES]), here.predict(valid[FEATURES]))
    test = _split(data, "test")
    X, lo, hi = test[FEATURES], test["lo"].to_numpy(), test["hi"].to_numpy()
    margin = est.predict(X, output_margin=True)
    metrics = _evaluate(data, run, tmp_path / "report")["metrics"]
    assert metrics["cindex"] == est.score(X, y_lower=lo, y_upper=hi)
    assert metrics["aft-nloglik"] == survival_score(est, margin, y_lower=lo, y_upper=hi,
                                                    metric="aft-nloglik")
    usable = (lo > 0) & ((hi == lo) | np.isinf(hi))
    assert metrics["km_rows_left_out"] == int((~usable).sum()) > 0
    expected = survival_by_risk_group(est, X[usable], lo[usable],
                                      (hi[usable] == lo[usable]).astype(float), n_groups=4)
    pd.testing.assert_frame_equal(pd.DataFrame(metrics["by_risk_group"]), expected,
                                  check_dtype=False, check_exact=True)
    out = tmp_path / "predictions.csv"
    _ok(["predict", str(run / "model.json"), str(raw), "--out", str(out)])
    written = pd.read_csv(out, float_precision="round_trip")
    np.testing.assert_allclose(written["prediction"], est.predict(frame[FEATURES]), rtol=1e-15)


# ------------------------------------------------------------ refusals
def _set(row, **values):
    def change(frame):
        frame = frame.copy()
        for column, value in values.items():
            frame.loc[row, column] = value
        return frame
    return change


COX = ["--target", "time", "--event", "event", "--id", "row_id"]
AFT = ["--label-lower-bound", "lo", "--label-upper-bound", "hi", "--id", "row_id"]
SURVIVAL_ROWS = [
    ("a negative survival time", COX, _set(3, time=-2.0),
     (r"time column 'time' of .*surv.parquet holds -2.0 at data row 4 \(1 such row\(s\) in "
      r"this batch\); survival times are > 0")),
    ("a survival time of 0", COX, _set(3, time=0.0),
     r"time column 'time' of .*surv.parquet holds 0.0 at data row 4 .*survival times are > 0"),
    ("a missing survival time", COX, _set(5, time=np.nan),
     r"time column 'time' of .*surv.parquet holds nan at data row 6 .*every row needs its time"),
    ("an event that is not 0 or 1", COX, _set(2, event=2),
     (r"event column 'event' of .*surv.parquet holds 2 at data row 3 .*the event indicator is "
      r"1 \(the event happened at the time\) or 0")),
    ("a lower bound above the upper bound", AFT, _set(4, lo=5.0, hi=2.0),
     (r"upper bound column 'hi' of .*surv.parquet holds 2.0 at data row 5 .*it is below the "
      r"lower bound 'lo' of that row; each row needs lower <= upper")),
    ("a negative lower bound", AFT, _set(1, lo=-1.0),
     (r"lower bound column 'lo' of .*surv.parquet holds -1.0 at data row 2 .*a lower bound is "
      r"a finite time >= 0")),
    ("a survival label column missing", ["--target", "time", "--event", "status"], None,
     r"--event column 'status' not found in .*surv.parquet; its columns are"),
    ("--event with --label-lower-bound", ["--event", "event", *AFT], None,
     r"--event goes with --target TIME .*use one form, not both"),
    ("--label-lower-bound without --label-upper-bound", ["--label-lower-bound", "lo"], None,
     r"--label-lower-bound needs --label-upper-bound too"),
    ("survival labels with --task regression", ["--task", "regression", *COX], None,
     r"survival labels .* make a survival task, not regression"),
    ("several --target columns with --event", ["--target", "lo", *COX], None,
     r"several --target columns \(lo, time\) make a multi-output task; survival takes one"),
]


@pytest.mark.parametrize("argv, change, pattern", [r[1:] for r in SURVIVAL_ROWS],
                         ids=[r[0] for r in SURVIVAL_ROWS])
def test_prepare_refuses_bad_survival_labels(argv, change, pattern, tmp_path, capsys):
    frame = _frame(n=40)
    frame = change(frame) if change else frame
    frame.to_parquet(tmp_path / "surv.parquet", index=False)
    code = cli.main(["prepare", str(tmp_path / "surv.parquet"), "--out", str(tmp_path / "out"),
                     *argv])  # refused before any cluster or Prefect server starts
    assert code == 1
    err = capsys.readouterr().err
    assert re.search(pattern, err), err
    assert not (tmp_path / "out").exists()


def test_the_scan_refuses_a_bad_row_beyond_the_first_rows(tmp_path):
    """Prepare's statistics pass checks every row, batch by batch, naming the row
    counted from the file's start (the first rows pass the command's check)."""
    from flows._file_stats import file_statistics
    from flows._schema import source_schema

    frame = _frame(n=60)
    path = tmp_path / "late.csv"
    frame.to_csv(path, index=False)
    fmt, files, schema = source_schema(str(path), "time", id_columns=["row_id"], event="event",
                                       drop=["lo", "hi"])
    assert schema.ids == {"row_id": "integer", "event": "float"}  # "inf" and "" read as floats
    frame.loc[45, "event"] = 3  # a file that changed, or a row beyond the first rows read
    frame.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"event column 'event' of .*late.csv holds '3' at data "
                                        r"row 46"):
        file_statistics(files[0], fmt, schema, 0, {"validation": 0.15, "test": 0.15}, 7)


def test_objective_follows_the_labels_and_refuses_cox_on_bounds(cox, aft):
    from flows._prepared import read_schema
    from flows._survival import fit_data
    from flows.config import resolve_train_config

    cox_schema, aft_schema = read_schema(cox[2]), read_schema(aft[2])
    assert resolve_train_config(cox_schema).params["objective"] == "survival:cox"
    assert resolve_train_config(aft_schema).params["objective"] == "survival:aft"
    cfg = resolve_train_config(cox_schema, params={"objective": "survival:aft"})
    assert cfg.estimator == "GradientBoostingSurvivalRegressor"
    _, y, kwargs = fit_data(str(cox[2]), cox_schema, "survival:aft")  # times as bounds
    train = _split(cox[2], "train")
    assert y is None
    np.testing.assert_array_equal(kwargs["y_lower"].compute(), train["time"])
    np.testing.assert_array_equal(kwargs["y_upper"].compute(),
                                  np.where(train["event"] == 1, train["time"], np.inf))
    with pytest.raises(ValueError, match=r"objective='survival:cox' takes right-censored times, "
                                         r"but the data hold interval bounds \('lo', 'hi'"):
        resolve_train_config(aft_schema, params={"objective": "survival:cox"})
    with pytest.raises(ValueError, match="GradientBoostingRegressor does not fit a survival"):
        resolve_train_config(aft_schema, estimator="GradientBoostingRegressor")
