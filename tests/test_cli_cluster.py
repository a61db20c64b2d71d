"""Where the command line computes: checks before any cluster, small jobs in
this process, one kept cluster (``distboost cluster``) or ``DISTBOOST_SCHEDULER``."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

import distboost as db
from flows import _in_process, _kept_cluster, _precheck, cli
from flows._tabular import DataError


@pytest.fixture(scope="module")
def model_and_data(tmp_path_factory):
    """A small classifier of a categorical and two numeric columns, and its
    data as two Parquet files."""
    base = tmp_path_factory.mktemp("cli-cluster")
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.normal(size=400), "x2": rng.normal(size=400),
                      "c": pd.Categorical(rng.choice(["a", "b", "c"], 400))})
    X.loc[::17, "x2"] = np.nan
    y = (X["x1"] + (X["c"] == "b") > 0.3).astype(int)
    model = base / "model.json"
    db.GradientBoostingClassifier(n_estimators=4, max_depth=2).fit(X, y).save_model(model)
    data = base / "data"
    data.mkdir()
    X.iloc[:150].to_parquet(data / "part-0.parquet")
    X.iloc[150:].to_parquet(data / "part-1.parquet")
    return model, data


@pytest.fixture(scope="module")
def prepared_and_model(tmp_path_factory):
    """A prepared folder (made without Prefect) and a small model of its training split."""
    from flows._data import load_split

    base = tmp_path_factory.mktemp("cli-evaluate")
    raw = fx.hastie_csv(base / "raw", n_rows=600, n_files=2)
    data = base / "data"
    data.mkdir()
    fx.prepared_folder(raw, data, categorical=["colour"])
    X, y = load_split(data, "train")
    model = base / "model.json"
    db.GradientBoostingClassifier(n_estimators=4, max_depth=2).fit(
        X.compute(), y.compute()).save_model(model)
    return data, model


@pytest.fixture
def no_scheduler(tmp_path, monkeypatch):
    """No DISTBOOST_SCHEDULER, and a state folder of the test's own (no kept cluster)."""
    monkeypatch.delenv("DISTBOOST_SCHEDULER", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    return tmp_path / "run" / "distboost" / "cluster.json"


def test_misspelled_target_fails_at_once_without_a_cluster(tmp_path):
    """The real command in a child process: the target is checked against the
    CSV header before any cluster or Prefect server starts (it took 18.6 s)."""
    raw = fx.write_csv(tmp_path / "raw.csv", pd.DataFrame({"x": [1.0, 2.0], "y": [0, 1]}))
    for command in ("prepare", "pipeline"):
        started = time.monotonic()
        result = fx.run_cli([command, str(raw), "--out", str(tmp_path / "o"), "--target", "yy"],
                            timeout=120)
        elapsed = time.monotonic() - started
        assert result.returncode == 1
        assert result.stderr == (f"distboost: error: target column 'yy' not found in "
                                 f"file://{raw}; its columns are ['x', 'y']\n")
        assert elapsed < 8, f"{command} took {elapsed:.1f} s"  # generous: about 1 s alone


def test_model_data_checked_from_the_parquet_schema(model_and_data, tmp_path):
    model, data = model_and_data
    est = db.load_model(model)
    _precheck.check_model_data(est, str(data))
    pd.DataFrame({"x1": [1.0], "c": ["a"]}).to_parquet(tmp_path / "short.parquet")
    with pytest.raises(DataError, match=r"short.parquet lacks the model's feature column\(s\) "
                                        r"\['x2'\] .*it has \['c', 'x1'\]"):
        _precheck.check_model_data(est, str(tmp_path / "short.parquet"))


def test_small_job_rule(model_and_data):
    _, data = model_and_data
    rows, nbytes = _in_process.data_size(data)
    assert rows == 400 and nbytes > 0
    assert _in_process.fits_in_process((rows, nbytes), available=10 * nbytes)
    assert not _in_process.fits_in_process((rows, nbytes), available=10 * nbytes - 1)
    assert not _in_process.fits_in_process((_in_process.MAX_ROWS + 1, 1), available=2**40)
    assert _in_process.data_size(data / "nothing") is None
    assert _in_process.data_size("s3://bucket/data") is None  # URLs go to a cluster


def test_small_job_rule_of_csv(tmp_path):
    frame = pd.DataFrame({"x": np.arange(30) / 3, "y": ["a", "b", "c"] * 10})
    frame.iloc[:10].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[10:].to_csv(tmp_path / "b.csv", index=False)
    size = sum(f.stat().st_size for f in tmp_path.glob("*.csv"))
    assert _in_process.data_size(tmp_path) == (30, size)
    assert _in_process.data_size(tmp_path / "a.csv") == (10, (tmp_path / "a.csv").stat().st_size)
    frame.to_csv(tmp_path / "c.csv.gz", index=False)
    assert _in_process.data_size(tmp_path / "c.csv.gz") is None  # compressed: a cluster


def test_a_stale_state_file_is_ignored(no_scheduler, capsys):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    no_scheduler.parent.mkdir(parents=True)
    no_scheduler.write_text(json.dumps({"pid": gone.pid, "address": "tcp://127.0.0.1:1"}))
    assert _kept_cluster.running() is None
    err = capsys.readouterr().err
    assert f"ignoring {no_scheduler}: the distboost cluster it names (tcp://127.0.0.1:1, " \
           f"process {gone.pid}) is no longer running; removed it" in err
    assert not no_scheduler.exists()
    assert cli.main(["cluster", "status"]) == 1
    assert "no distboost cluster runs (start one: distboost cluster start)" in \
        capsys.readouterr().err


_MAIN_THEN_MODULES = """
import sys
from flows import cli
code = cli.main(sys.argv[1:])
print("flow engine loaded:", "prefect.flow_engine" in sys.modules)
sys.exit(code)
"""


def _cli_in_child(args):
    """The command line in a child process (no Prefect API configured), and
    whether it loaded Prefect's flow engine (which any flow run does)."""
    result = subprocess.run([sys.executable, "-c", _MAIN_THEN_MODULES, "--no-progress", *args],
                            env=fx.subprocess_env(fx.shared_prefect_home()), cwd=fx.REPO,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    return result


def test_a_small_job_without_prefect(model_and_data, tmp_path):
    """No Prefect API configured: a small predict or explain runs in this
    process without a flow run (no Prefect server starts) and says so; the
    values are the model's own. With ``--scheduler synchronous`` (in process,
    asked for) the same job is a flow run."""
    model, data = model_and_data
    est = db.load_model(model)
    X = pd.concat([pd.read_parquet(p) for p in sorted(data.glob("*.parquet"))],
                  ignore_index=True)
    predict = ["predict", str(model), str(data), "--proba", "--keep", "x1", "--out"]
    result = _cli_in_child([*predict, str(tmp_path / "p.csv")])
    assert ("predicting 400 rows in this process (small data: no Dask cluster; --scheduler or "
            "DISTBOOST_SCHEDULER to use one; no Prefect flow run: set PREFECT_API_URL to "
            "record one)") in result.stderr
    assert "flow engine loaded: False" in result.stdout
    out = pd.read_csv(tmp_path / "p.csv", float_precision="round_trip")  # exact on pandas 2.2
    assert list(out.columns) == ["x1", "prediction", "proba_0", "proba_1"]
    np.testing.assert_array_equal(out["x1"], X["x1"])
    np.testing.assert_allclose(out[["proba_0", "proba_1"]], est.predict_proba(X), rtol=1e-12)
    flow_run = _cli_in_child([*predict, str(tmp_path / "q.csv"), "--scheduler", "synchronous"])
    assert "flow engine loaded: True" in flow_run.stdout
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "q.csv", float_precision="round_trip"),
                                  out)
    result = _cli_in_child(["explain", str(model), str(data), "--out", str(tmp_path / "s")])
    assert "no Prefect flow run" in result.stderr
    assert "flow engine loaded: False" in result.stdout
    shap = _read(tmp_path / "s")
    np.testing.assert_allclose(shap.sum(axis=1), est.decision_function(X), atol=1e-9)


def _read(folder):
    return pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("part-*.parquet"))],
                     ignore_index=True)


def test_small_jobs_in_process_and_a_kept_cluster(prefect_harness, model_and_data,
                                                  prepared_and_model, tmp_path, no_scheduler,
                                                  monkeypatch, capsys):
    """predict, explain and evaluate in this process, then on the cluster of
    ``distboost cluster start`` (found by its state file) and by
    DISTBOOST_SCHEDULER: the same values; status names the workers; stop ends
    the cluster."""
    model, data = model_and_data
    predict = ["predict", str(model), str(data), "--proba", "--no-progress", "--out"]
    explain = ["explain", str(model), str(data), "--no-progress", "--out"]
    prepared, evaluated = prepared_and_model
    evaluate = ["evaluate", str(prepared), "--model", str(evaluated), "--shap-rows", "50",
                "--out"]
    assert cli.main([*predict, str(tmp_path / "p1")]) == 0
    assert cli.main([*explain, str(tmp_path / "s1")]) == 0
    assert cli.main([*evaluate, str(tmp_path / "e1")]) == 0
    err = capsys.readouterr().err
    bar = [line for line in err.splitlines() if line.startswith("evaluate")]
    assert bar and "6/6" in bar[-1] and "writing the report" in bar[-1], err  # its steps named
    assert "predicting 400 rows in this process (small data: no Dask cluster" in err
    assert "explaining 400 rows in this process" in err
    assert "evaluating " in err and err.count(" rows in this process") == 3
    assert "Dask" not in err.replace("no Dask cluster", "")  # nothing started, no dashboard

    assert cli.main(["cluster", "start", "--workers", "1", "--dashboard-address", ":0"]) == 0
    address = capsys.readouterr().out.strip().splitlines()[-1]
    state = json.loads(no_scheduler.read_text())
    try:
        assert state["address"] == address and address.startswith("tcp://")
        assert cli.main([*predict, str(tmp_path / "p2")]) == 0
        err = capsys.readouterr().err
        assert "using the cluster of `distboost cluster start`" in err
        assert f"connected to the Dask scheduler at {address}" in err
        assert "in this process" not in err and "training live" not in err
        monkeypatch.setenv("DISTBOOST_SCHEDULER", address)
        assert cli.main([*explain, str(tmp_path / "s2")]) == 0
        assert "using the Dask scheduler DISTBOOST_SCHEDULER names" in capsys.readouterr().err
        assert cli.main([*evaluate, str(tmp_path / "e2")]) == 0
        assert cli.main(["cluster", "status"]) == 0
        out = capsys.readouterr().out
        assert f"address: {address}" in out and out.count("worker tcp://") == 1
        assert f"dashboard: {state['dashboard']}" in out and "/distboost" in out
    finally:
        assert cli.main(["cluster", "stop"]) == 0
    assert f"stopped the distboost cluster at {address}" in capsys.readouterr().err
    assert not no_scheduler.exists() and not _kept_cluster._ours(state["pid"])
    pd.testing.assert_frame_equal(_read(tmp_path / "p1"), _read(tmp_path / "p2"))
    pd.testing.assert_frame_equal(_read(tmp_path / "s1"), _read(tmp_path / "s2"))
    assert set(_read(tmp_path / "p1").columns) == {"prediction", "proba_0", "proba_1"}
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "e1" / "predictions.parquet"),
                                  pd.read_parquet(tmp_path / "e2" / "predictions.parquet"))
    local, remote = (json.loads((tmp_path / e / "evaluation.json").read_text())
                     for e in ("e1", "e2"))
    assert local["metrics"] == remote["metrics"] and local["shap"] == remote["shap"]
