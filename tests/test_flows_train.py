"""The train flow's logic without Prefect runs: configuration, run folders,
checkpoints and metric history, early stopping over a run, the prepared bins."""

try:
    import _flows_fixtures
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures

import json

import pytest
from pydantic import ValidationError

from flows._prepared import Feature, PreparedSchema
from flows.config import ClusterConfig, check_task, train_config
from flows.train import (
    last_checkpoint,
    load_history,
    run_record,
    start_run,
)


def test_config_from_yaml_json_and_overrides(tmp_path):
    yaml_file = tmp_path / "c.yaml"
    yaml_file.write_text(
        "estimator: GradientBoostingRegressor\nparams: {n_estimators: 30, max_depth: 3}\n"
    )
    cfg = train_config(yaml_file, params={"learning_rate": 0.2}, checkpoint_every=5)
    assert cfg.estimator == "GradientBoostingRegressor" and cfg.n_estimators == 30
    assert cfg.params == {"n_estimators": 30, "max_depth": 3, "learning_rate": 0.2}
    assert cfg.checkpoint_every == 5 and not cfg.is_classifier()
    json_file = tmp_path / "c.json"
    json_file.write_text(json.dumps({"params": {"n_estimators": 7}}))
    assert train_config(json_file).n_estimators == 7


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"estimator": "XGBClassifier"}, "unknown estimator 'XGBClassifier'"),
        ({"checkpoint_every": 0}, "greater than or equal to 1"),
        ({"params": {"client": 1}}, "params may not set"),
        ({"rounds": 10}, "rounds: Extra inputs are not permitted"),
        ({"params": {"learnin_rate": 0.1}},
         ("GradientBoostingClassifier has no parameter 'learnin_rate' "
          r"\(did you mean 'learning_rate'\?\)")),
        ({"params": {"max_depth": "three"}},
         r"parameter max_depth must be an int >= 1 or None; got 'three'"),
    ],
)
def test_config_errors_say_what_is_wrong(data, message):
    with pytest.raises(ValueError, match=message) as info:
        train_config(data)
    assert "errors.pydantic.dev" not in str(info.value)  # one line per problem, no dump


def test_config_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        train_config(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    with pytest.raises(TypeError, match="must hold a mapping"):
        train_config(bad)


def test_cluster_config_takes_environment_scheduler(monkeypatch):
    from flows._cluster import cluster_config

    assert cluster_config(None, None).scheduler is None
    monkeypatch.setenv("DISTBOOST_SCHEDULER", "tcp://example:8786")
    assert cluster_config(None, {"n_workers": 3}).scheduler == "tcp://example:8786"
    assert cluster_config("tcp://given:1", None).scheduler == "tcp://given:1"
    with pytest.raises(ValidationError):
        ClusterConfig(n_workers=0)


def _prepared(tmp_path, task="classification"):
    data = tmp_path / "data"
    data.mkdir()
    (data / "schema.json").write_text(json.dumps({"task": task, "target": "y"}))
    return str(data)


def test_run_folder_resumes_same_run_and_refuses_another(tmp_path):
    data = _prepared(tmp_path)
    cfg = train_config({"params": {"n_estimators": 20}})
    out = tmp_path / "run"
    start_run(out, run_record(cfg, data), overwrite=False)
    assert last_checkpoint(out) == (0, None)
    for r in (5, 15, 10):
        (out / "checkpoints" / f"round-{r:05d}.json").write_text("{}")
    (out / "checkpoints" / "round-00015.history.json").write_text('{"v": {"m": [1]}}')
    (out / "checkpoints" / ".tmp-round-00020.json").write_text("partial")  # a crash mid-save
    start_run(out, run_record(cfg, data), overwrite=False)  # same run: fine
    rounds, path = last_checkpoint(out)
    assert rounds == 15 and path.name == "round-00015.json"
    assert load_history(path) == {"v": {"m": [1]}}
    other = train_config({"params": {"n_estimators": 30}})
    with pytest.raises(FileExistsError, match="another configuration"):
        start_run(out, run_record(other, data), overwrite=False)
    start_run(out, run_record(other, data), overwrite=True)
    assert last_checkpoint(out) == (0, None)


def test_starting_over_removes_the_runs_files_and_nothing_else(tmp_path):
    """``--force`` in a run folder that also holds the user's files: only what a
    run wrote goes (the files of a run, its checkpoints, their leftovers)."""
    data = _prepared(tmp_path)
    out = tmp_path / "run"
    start_run(out, run_record(train_config({"params": {"n_estimators": 20}}), data), False)
    ours = ["model.json", "history.json", "training.json", ".model.json.0123abcd.tmp",
            "checkpoints/round-00010.json", "checkpoints/round-00010.history.json",
            "checkpoints/round-00005.json.damaged", "checkpoints/.round-00020.json.89abcdef.tmp"]
    theirs = ["notes.txt", "model.json.bak", "checkpoints/my-model.json", "plots/roc.png"]
    for name in ours + theirs:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(name)
    other = run_record(train_config({"params": {"n_estimators": 30}}), data)
    assert start_run(out, other, overwrite=True)
    left = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert left == sorted(["run.json", *theirs])
    assert json.loads((out / "run.json").read_text()) == other


def test_foreign_folder_is_never_deleted(tmp_path):
    data = _prepared(tmp_path)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "thesis.tex").write_text("...")
    record = run_record(train_config({}), data)
    for overwrite in (False, True):
        with pytest.raises(FileExistsError):
            start_run(tmp_path / "mine", record, overwrite=overwrite)
    assert (tmp_path / "mine" / "thesis.tex").exists()


def test_estimator_must_match_the_task():
    def schema(task):
        return PreparedSchema(source="s", target="y", task=task, target_kind="float",
                              features=[Feature(name="a", kind="numeric")],
                              columns_needed=["a", "y"])

    check_task(train_config({"estimator": "GradientBoostingRegressor"}), schema("regression"))
    with pytest.raises(ValueError, match="use a Classifier"):
        check_task(train_config({"estimator": "GradientBoostingRegressor"}),
                   schema("classification"))


def test_prepared_bin_edges_become_the_fit_bins(tmp_path):
    from flows._data import load_bin_mapper
    from flows._prepared import read_schema
    from flows._tabular import DataError

    data = _flows_fixtures.prepared_folder(_flows_fixtures.hastie_csv(tmp_path / "raw", 300),
                                           tmp_path / "data", categorical=["colour"])
    schema = read_schema(data)
    mapper = load_bin_mapper(data)
    assert list(mapper.feature_names_in_) == ["x1", "x2", "x3", "x4", "colour"]
    assert mapper.max_bins == 256 and mapper.categories_ == {4: ["blue", "green", "red"]}
    assert schema.features[-1].categories == ["blue", "green", "red"]
    saved = json.loads((data / "bin_edges.json").read_text())

    def broken(change):
        edited = json.loads(json.dumps(saved))
        change(edited["features"])
        (data / "bin_edges.json").write_text(json.dumps(edited))
        with pytest.raises(DataError) as info:
            load_bin_mapper(data)
        return str(info.value)

    assert "has no bins for feature 'x3' of schema.json" in broken(lambda f: f.pop("x3"))
    assert "bins feature 'colour' as numeric, but schema.json says categorical" in broken(
        lambda f: f.update(colour={"kind": "numeric", "edges": [0.5]}))
    assert "has bins for feature 'x9', which schema.json does not list" in broken(
        lambda f: f.update(x9={"kind": "numeric", "edges": []}))
    assert "bin edges of feature 'x1' must be finite and strictly increasing" in broken(
        lambda f: f["x1"].update(edges=[2.0, 1.0]))
    (data / "bin_edges.json").unlink()
    assert load_bin_mapper(data) is None  # an older prepared folder: the fit bins itself


def _small_fit(n_estimators, callbacks=()):
    import numpy as np

    import distboost

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + X[:, 1] ** 2 > 1).astype(int)
    est = distboost.GradientBoostingClassifier(n_estimators=n_estimators, max_depth=2,
                                               random_state=0)
    return est.fit(X, y, eval_set=[(X[:100], y[:100])], callbacks=list(callbacks))


def test_run_checkpoints_are_written_while_the_estimator_fits(tmp_path):
    from flows._checkpoints import RunCheckpoints

    seen = []
    writer = RunCheckpoints(tmp_path, 3, 8, on_checkpoint=lambda p, n: seen.append(n))
    est = _small_fit(8, [writer])
    assert seen == [3, 6, 8] and writer.last.name == "round-00008.json"
    for n in seen:
        path = tmp_path / "checkpoints" / f"round-{n:05d}.json"
        assert len(load_history(path)["validation_0"]["logloss"]) == n
    assert load_history(writer.last) == est.evals_result_


