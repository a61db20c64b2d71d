"""Bad input to the command line and the flows, one parametrized case per row
(the estimator and model-file rows are in ``test_bad_input.py``).

Configuration errors are refused before any cluster or Prefect server
starts, so these commands run in this process in well under a second.
"""

try:
    import _flows_fixtures as fx
    import _model_files as mf
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx
    from tests import _model_files as mf

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db
from flows import cli


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    base = tmp_path_factory.mktemp("bad-cli")
    raw = fx.hastie_csv(base / "raw", n_rows=600, n_files=2)
    out = base / "data"
    out.mkdir()
    return fx.prepared_folder(raw, out, categorical=["colour"])


# (id, command line (DATA: the prepared folder, OUT: a fresh folder), config file text,
#  pattern of the error line)
ROWS = [
    ("misspelled parameter", ["train", "DATA", "--out", "OUT", "--param", "learnin_rate=0.1"],
     None, (r"GradientBoostingClassifier has no parameter 'learnin_rate' \(did you mean "
           r"'learning_rate'\?\)")),
    ("parameter of the wrong type", ["train", "DATA", "--out", "OUT", "--param", "max_depth=three"],
     None, r"parameter max_depth must be an int >= 1 or None; got 'three' \(str\)"),
    ("wrong type in the configuration file", ["train", "DATA", "--out", "OUT", "--config", "CFG"],
     "params: {max_depth: three}\n", r"max_depth must be an int >= 1 or None; got 'three'"),
    ("unknown key in the configuration file", ["train", "DATA", "--out", "OUT", "--config", "CFG"],
     "rounds: 10\n", r"training configuration .*cfg.yaml: rounds: Extra inputs are not permitted"),
    ("unknown --estimator", ["train", "DATA", "--out", "OUT", "--estimator", "Foo"],
     None, r"estimator: unknown estimator 'Foo'; choose one of GradientBoostingClassifier"),
    ("regressor for a classification target",
     ["train", "DATA", "--out", "OUT", "--estimator", "GradientBoostingRegressor"],
     None, r"GradientBoostingRegressor does not fit a classification target"),
    ("predict with a truncated model file", ["predict", "CFG", "DATA", "--out", "OUT"],
     '{"format": "distboost-model", "vers', r"model file .*cfg.yaml is not valid JSON"),
    ("evaluate with a model file of another program",
     ["evaluate", "DATA", "--model", "CFG", "--out", "OUT"],
     '{"weights": [1, 2]}', r"model file .*cfg.yaml, key format: is None, not 'distboost-model'"),
    ("predict with a model file whose tree has a cycle",
     ["predict", "CFG", "DATA", "--out", "OUT"], mf.hand_made_text(mf.self_child),
     (r"model file .*cfg.yaml, key trees\[0\]\[0\]\.nodes\.left\[1\]: node 1 is its own left "
      r"child; a tree has no cycles; the file is damaged or was edited: save the model again "
      r"from distboost")),
    ("evaluate with a model file whose categorical split has no bitset",
     ["evaluate", "DATA", "--model", "CFG", "--out", "OUT"], mf.hand_made_text(mf.no_bitset),
     (r"model file .*cfg.yaml, key trees\[1\]\[0\]\.nodes\.cat_index\[0\]: node 0 is a "
      r"categorical split with cat_index 0, but its tree has 0 bitset row\(s\) \(cat_bitsets\)")),
    ("explain with a model file of more trees a round than outputs",
     ["explain", "CFG", "DATA/test", "--out", "OUT"], mf.hand_made_text(mf.two_trees_a_round),
     (r"model file .*cfg.yaml, key trees\[0\]: has 2 tree\(s\) but a GradientBoostingRegressor "
      r"has 1 per round")),
    ("monotonic_cst naming a column the data do not have",
     ["train", "DATA", "--out", "OUT", "--config", "CFG"],
     "params: {monotonic_cst: {x1: 1, x9: -1}}\n",
     r"GradientBoostingClassifier: monotonic_cst names unknown feature\(s\) \['x9'\]"),
    ("monotonic_cst on the categorical column", ["train", "DATA", "--out", "OUT", "--config",
                                                 "CFG"],
     "params: {monotonic_cst: {colour: 1}}\n",
     r"constrains categorical feature\(s\) \['colour'\]"),
    ("interaction_cst listing a column twice", ["train", "DATA", "--out", "OUT", "--config", "CFG"],
     "params: {interaction_cst: [[x1, x2, x1]]}\n",
     r"interaction_cst\[0\] lists feature\(s\) \['x1'\] more than once"),
    ("monotonic_cst for AdaBoost",
     ["train", "DATA", "--out", "OUT", "--estimator", "AdaBoostClassifier", "--param",
      "monotonic_cst=[1, 0]"],
     None, (r"AdaBoostClassifier has no parameter 'monotonic_cst' \(monotone constraints: "
            r"GradientBoostingRegressor")),
    ("a loss function that cannot be imported", ["train", "DATA", "--out", "OUT", "--config",
                                                 "CFG"],
     "estimator: GradientBoostingRegressor\nparams: {loss: 'no_such_module:objective'}\n",
     r"params.loss: cannot import 'no_such_module:objective' \(ModuleNotFoundError"),
    ("pipeline with a parameter neither task has",
     ["pipeline", "DATA", "--out", "OUT", "--target", "y", "--param", "max_dept=3"],
     None, r"has no parameter 'max_dept' \(did you mean 'max_depth'\?\)"),
    ("explain with a model file that does not exist",
     ["explain", "NOWHERE/model.json", "DATA/test", "--out", "OUT"],
     None, r"model file .*nowhere/model.json does not exist; train one first"),
    ("explain data that does not exist", ["explain", "MODEL", "NOWHERE", "--out", "OUT"],
     None, r"data .*nowhere does not exist; give a CSV or Parquet file or folder"),
    ("explain a folder without Parquet files", ["explain", "MODEL", "EMPTY", "--out", "OUT"],
     None, r"no CSV or Parquet files in .*empty"),
    ("explain into a folder of the user's own files",
     ["explain", "MODEL", "DATA/test", "--out", "FULL"],
     None, r"full holds more than SHAP values; refusing to replace it: choose another output"),
    ("explain with --force into a folder of the user's own files",
     ["explain", "MODEL", "DATA/test", "--out", "FULL", "--force"],
     None, r"full holds more than SHAP values; refusing to replace it: choose another output"),
    ("prepare with a misspelled target", ["prepare", "DATA/test", "--out", "OUT", "--target", "yy"],
     None, r"target column 'yy' not found in .*part-.*\.parquet; its columns are \['x1', "),
    ("pipeline with a misspelled target",
     ["pipeline", "DATA/test", "--out", "OUT", "--target", "yy", "--param", "max_depth=3"],
     None, r"target column 'yy' not found in .*part-.*\.parquet; its columns are \['x1', "),
    ("a text column among several `--target` columns",
     ["prepare", "DATA/test", "--out", "OUT", "--target", "x1", "--target", "colour"],
     None, (r"target column 'colour' is not numeric \(dtype category, e.g. '\w+' in "
            r".*part-.*\.parquet\); several targets are numbers")),
    ("a `--target` column also given as `--feature`",
     ["prepare", "DATA/test", "--out", "OUT", "--target", "y", "--target", "x1", "--feature",
      "x1"], None, r"target column 'x1' is also given as --feature x1; a column is a target"),
    ("`--task classification` with a target among several that is not 0/1",
     ["prepare", "DATA/test", "--out", "OUT", "--target", "y", "--target", "x1", "--task",
      "classification"], None,
     r"multi-label: every target holds 0/1 labels, but target column 'y' holds \[-1\.0, 1\.0\]"),
    ("predict a folder without CSV or Parquet files",
     ["predict", "MODEL", "EMPTY", "--out", "OUT"], None, r"no CSV or Parquet files in .*empty$"),
    ("pipeline with a loss of the other task",
     ["pipeline", "DATA", "--out", "OUT", "--target", "y", "--estimator",
      "GradientBoostingClassifier", "--param", "loss=huber"],
     None, r"loss must be one of 'log_loss', 'exponential'; got 'huber'"),
]


@pytest.mark.parametrize("argv, config, pattern", [r[1:] for r in ROWS],
                         ids=[r[0] for r in ROWS])
def test_bad_command_fails_before_anything_starts(argv, config, pattern, prepared, tmp_path,
                                                  capsys):
    import re

    cfg = tmp_path / "cfg.yaml"
    if config is not None:
        cfg.write_text(config)
    out = tmp_path / "out"
    (tmp_path / "empty").mkdir()
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("the user's own file")
    names = {"DATA": str(prepared), "OUT": str(out), "CFG": str(cfg),
             "MODEL": str(prepared_model(prepared)), "NOWHERE": str(tmp_path / "nowhere"),
             "EMPTY": str(tmp_path / "empty"), "FULL": str(tmp_path / "full")}
    names.update({f"{k}/{rest}": f"{v}/{rest}" for k, v in list(names.items())
                  for rest in ("test", "model.json")})
    started = time.perf_counter()
    assert cli.main([names.get(a, a) for a in argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("distboost: error: ") and re.search(pattern, err), err
    assert "pydantic" not in err and "Traceback" not in err
    assert not out.exists()  # no run.json (or anything) left behind
    assert (tmp_path / "full" / "notes.txt").read_text() == "the user's own file"
    assert time.perf_counter() - started < 10  # no cluster, no Prefect server


def prepared_model(prepared: Path) -> Path:
    """A small model of the prepared data's features, fitted once."""
    path = prepared.parent / "model.json"
    if not path.is_file():
        X = pd.read_parquet(prepared / "train")
        y = X.pop("y")
        db.GradientBoostingClassifier(n_estimators=2, max_depth=2).fit(X, y).save_model(path)
    return path


def test_common_options_after_the_command_and_version(capsys):
    args = cli.build_parser().parse_args(["train", "d", "--out", "r", "-v", "--no-progress"])
    assert args.verbose and args.no_progress
    args = cli.build_parser().parse_args(["-v", "train", "d", "--out", "r"])
    assert args.verbose and not args.no_progress
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0 and capsys.readouterr().out.strip() == f"distboost {db.__version__}"


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit):
        cli.main(["prepare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0.15)" in text and "(default: auto)" in text and "(default: 2)" in text
    assert "(default: 0)" in text  # --seed
    assert "(default: None)" not in text


# ------------------------------------------------------------------ prepare
PREPARE_ROWS = [
    ("integer target holding one text value", ["1", "0", "1", "oops", "0", "1"] * 5,
     (r"target 'y' holds whole numbers \(class labels\), but 5 value\(s\) are not, e.g. 'oops' "
     r"at .*part-1.csv, data row 4")),
    ("integer target holding 2.5", ["1", "0", "1", "2.5", "0", "1"] * 5,
     r"but 5 value\(s\) are not, e.g. '2.5' at .*part-1.csv, data row 4"),
    ("numeric target holding text", [f"{v}.5" for v in range(29)] + ["yes"],
     (r"target 'y' holds numbers, but 1 value\(s\) are not, e.g. 'yes' at .*part-1.csv, "
     r"data row 30")),
]


@pytest.mark.parametrize("second_file, pattern", [r[1:] for r in PREPARE_ROWS],
                         ids=[r[0] for r in PREPARE_ROWS])
def test_prepare_names_column_file_and_row_of_a_bad_target(second_file, pattern, tmp_path):
    from flows._tabular import DataError

    raw = tmp_path / "raw"
    first = ["1", "0"] * 15 if "." not in second_file[0] else [f"{v}.25" for v in range(30)]
    fx.write_csv(raw / "part-0.csv", pd.DataFrame({"x": np.arange(30.0), "y": first}))
    fx.write_csv(raw / "part-1.csv", pd.DataFrame({"x": np.arange(30.0), "y": second_file}))
    (tmp_path / "out").mkdir()
    with pytest.raises(DataError, match=pattern):
        fx.prepared_folder(raw, tmp_path / "out")


def test_successful_prepare_removes_stale_staging(tmp_path):
    from flows.prepare import remove_stale_staging

    out = tmp_path / "data"
    out.mkdir()
    for stale in (".data.partial-1234abcd", ".data.old-5678ef01"):
        (tmp_path / stale).mkdir()
        (tmp_path / stale / "part.parquet").write_text("half written")
    (tmp_path / ".other.partial-0000").mkdir()
    remove_stale_staging(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.partial-0000", "data"]


# --------------------------------------------------------------- checkpoints
def test_truncated_latest_checkpoint_falls_back_to_the_previous(tmp_path, capsys):
    from flows.train import last_good_checkpoint

    X = np.random.default_rng(0).normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    (tmp_path / "checkpoints").mkdir()
    for rounds in (2, 4):
        model = db.GradientBoostingClassifier(n_estimators=rounds).fit(X, y)
        model.save_model(tmp_path / "checkpoints" / f"round-{rounds:05d}.json")
    latest = tmp_path / "checkpoints" / "round-00004.json"
    latest.write_bytes(latest.read_bytes()[:500])
    done, checkpoint = last_good_checkpoint(tmp_path)
    assert (done, checkpoint.name) == (2, "round-00002.json")
    assert (tmp_path / "checkpoints" / "round-00004.json.damaged").is_file()  # kept, not lost
    err = capsys.readouterr().err
    assert "round-00004.json is damaged" in err and "not valid JSON" in err


def test_a_hostile_latest_checkpoint_is_set_aside_naming_tree_node_and_key(tmp_path, capsys):
    """A checkpoint whose tree loops (predicting from it would never return) is
    refused by the model file checks like a truncated one: kept as *.damaged,
    named with what is wrong, and the run resumes from the checkpoint before."""
    from flows.train import last_good_checkpoint

    X = np.random.default_rng(0).normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(int)
    (tmp_path / "checkpoints").mkdir()
    for rounds in (2, 4):
        model = db.GradientBoostingClassifier(n_estimators=rounds, max_depth=2).fit(X, y)
        model.save_model(tmp_path / "checkpoints" / f"round-{rounds:05d}.json")
    latest = tmp_path / "checkpoints" / "round-00004.json"
    d = json.loads(latest.read_text())
    d["trees"][3][0]["nodes"]["left"][0] = 0
    latest.write_text(json.dumps(d))
    done, checkpoint = last_good_checkpoint(tmp_path)
    assert (done, checkpoint.name) == (2, "round-00002.json")
    assert (tmp_path / "checkpoints" / "round-00004.json.damaged").is_file()
    assert (f"distboost: checkpoint round-00004.json is damaged (model file {latest}, key "
            f"trees[3][0].nodes.left[0]: node 0 is its own left child; a tree has no cycles; the "
            f"file is damaged or was edited: save the model again from distboost); kept as "
            f"round-00004.json.damaged, falling back to the previous checkpoint"
            in capsys.readouterr().err)


def test_failed_start_of_a_new_run_leaves_nothing(tmp_path):
    from flows.config import train_config
    from flows.train import _forget_run, run_record, start_run

    data = fx.hastie_csv(tmp_path / "raw", n_rows=200, n_files=1)
    prepared = tmp_path / "data"
    prepared.mkdir()
    fx.prepared_folder(data, prepared, categorical=["colour"])
    run = tmp_path / "run"
    assert start_run(run, run_record(train_config({}), str(prepared)), overwrite=False)
    _forget_run(run)
    assert not run.exists()


# ------------------------------------------------------------------ signals
def _descendants(pid: int) -> list:
    import psutil

    return psutil.Process(pid).children(recursive=True)


@pytest.mark.slow
def test_sigterm_stops_the_cluster_and_prefect_server_the_cli_started(tmp_path):
    import psutil

    raw = fx.hastie_csv(tmp_path / "raw", n_rows=3000, n_files=3)
    out = tmp_path / "data"
    proc = subprocess.Popen(
        [sys.executable, "-m", "flows.cli", "--no-progress", "prepare", str(raw), "--out",
         str(out), "--target", "y", "--categorical", "colour", "--workers", "1",
         "--dashboard-address", ":0"],
        env=fx.subprocess_env(fx.shared_prefect_home()), cwd=fx.REPO,
        stderr=subprocess.PIPE, text=True,
    )
    try:
        seen = []
        for line in proc.stderr:  # the Prefect server runs before the flow starts the cluster
            seen.append(line)
            if "started a local Dask cluster" in line:
                break
        assert proc.poll() is None, "".join(seen)
        started = _descendants(proc.pid)
        assert any("uvicorn" in " ".join(p.cmdline()) for p in started), started
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 130
        _, alive = psutil.wait_procs(started, timeout=20)
        assert not alive, [p.cmdline() for p in alive]
        assert "interrupted (SIGTERM)" in proc.stderr.read()
        assert not list(tmp_path.glob(".data.partial-*"))
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in _descendants(proc.pid) if proc.poll() is None else []:
            p.kill()
    assert os.path.exists(raw) and not out.exists()


def test_model_file_rows_name_the_file(tmp_path):
    path = Path(tmp_path) / "m.json"
    path.write_text(json.dumps({"format": "distboost-model", "version": 1}))
    with pytest.raises(db.ModelFileError, match=r"model file .*m.json, key estimator: missing"):
        db.load_model(path)
