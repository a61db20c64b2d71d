"""Predictions that join back (``distboost predict/explain --keep``): columns
passed through beside the results, CSV and Parquet input and output, and the
refusals that come before any work. Real files, real command lines (in this
process, under the session's Prefect harness), a real in-process Dask cluster;
every join is checked by value against the model's own predictions."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import re

import numpy as np
import pandas as pd
import pytest
from distributed import LocalCluster

import distboost
from flows import cli

FEATURES = ["x1", "x2", "x3", "colour"]


@pytest.fixture(scope="module")
def scheduler():
    with LocalCluster(**fx.TEST_CLUSTER) as cluster:
        yield cluster.scheduler_address


def _frame(n_rows: int = 300, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(n_rows, 3)), columns=FEATURES[:3])
    frame["colour"] = rng.choice(["red", "green", "blue"], n_rows)
    frame.loc[frame.index[::17], "x2"] = np.nan
    frame["y"] = np.where((frame[FEATURES[:3]] ** 2).sum(axis=1) > 2.4, "yes", "no")
    frame.insert(0, "id", rng.permutation(n_rows) * 7 + 1000)  # ids in no order
    frame["region"] = rng.choice(["north", "south"], n_rows)
    frame["zip"] = [f"{z:05d}" for z in rng.integers(0, 3000, n_rows)]  # leading zeros
    return frame


def _features(frame: pd.DataFrame) -> pd.DataFrame:
    X = frame[FEATURES].copy()
    X["colour"] = X["colour"].astype(pd.CategoricalDtype(["blue", "green", "red"]))
    return X


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The rows as two CSV files and as two Parquet files (in shuffled order
    within each), and a model trained on them."""
    root = tmp_path_factory.mktemp("join")
    frame = _frame()
    halves = (frame.iloc[:170], frame.iloc[170:])
    for i, half in enumerate(halves):
        fx.write_csv(root / "csv" / f"part-{i}.csv", half)
        (root / "parquet").mkdir(exist_ok=True)
        half.to_parquet(root / "parquet" / f"part-{i}.parquet", index=False)
    model = distboost.GradientBoostingClassifier(n_estimators=6, max_depth=2, random_state=0)
    model.fit(_features(frame), frame["y"])
    model.save_model(root / "model.json")
    expected = frame.assign(prediction=model.predict(_features(frame)))
    proba = model.predict_proba(_features(frame))
    for k, label in enumerate(model.classes_):
        expected[f"proba_{label}"] = proba[:, k]
    return {"root": root, "frame": expected, "model": model, "path": str(root / "model.json")}


def _cli(argv: list[str], scheduler: str) -> int:
    return cli.main(["--no-progress", *argv, "--scheduler", scheduler])


def test_predict_csv_to_csv_joins_back_on_id(prefect_harness, scheduler, data, tmp_path):
    out = tmp_path / "predictions.csv"
    argv = ["predict", data["path"], str(data["root"] / "csv"), "--out", str(out), "--proba",
            "--keep", "id,region", "zip"]
    assert _cli(argv, scheduler) == 0
    written = pd.read_csv(out, dtype={"zip": str})
    assert list(written.columns) == ["id", "region", "zip", "prediction", "proba_no",
                                     "proba_yes"]
    expected = data["frame"]
    assert len(written) == len(expected) and written["id"].is_unique
    # rows in input order: by position...
    np.testing.assert_array_equal(written["id"], expected["id"])
    # ... and joined on the id, whatever the order, every value matches
    joined = expected.merge(written.sample(frac=1, random_state=1), on="id",
                            suffixes=("", "_out"), validate="one_to_one")
    assert len(joined) == len(expected)
    np.testing.assert_array_equal(joined["prediction_out"], joined["prediction"])
    np.testing.assert_array_equal(joined["region_out"], joined["region"])
    np.testing.assert_array_equal(joined["zip_out"], joined["zip"])  # "00042" stays text
    np.testing.assert_allclose(joined["proba_yes_out"], joined["proba_yes"], rtol=1e-12)


def test_predict_parquet_in_batches_keeps_types(prefect_harness, scheduler, data, tmp_path,
                                                capsys):
    """Parquet in, a folder of Parquet parts out, read a few rows at a time:
    the id keeps its integer type, so a join on it needs no conversion; a
    progress bar counts the files and the rows written."""
    from flows.predict import predict

    out = predict(model=data["path"], data=str(data["root"] / "parquet"),
                  output=str(tmp_path / "pred"), keep=["id"], scheduler=scheduler,
                  batch_rows=40, progress=True)
    bar = capsys.readouterr().err
    assert re.search(r"predict: files .* 2/2 .* 300 rows", bar), bar
    parts = sorted((tmp_path / "pred").glob("*.parquet"))
    assert [p.name for p in parts] == ["part-00000.parquet", "part-00001.parquet"]
    written = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    assert out == str(tmp_path / "pred") and list(written.columns) == ["id", "prediction"]
    assert written["id"].dtype == data["frame"]["id"].dtype
    joined = data["frame"].merge(written, on="id", suffixes=("", "_out"), validate="one_to_one")
    assert len(joined) == len(data["frame"])
    np.testing.assert_array_equal(joined["prediction_out"], joined["prediction"])


def test_explain_csv_with_id_adds_up(prefect_harness, scheduler, data, tmp_path):
    out = tmp_path / "shap.csv"
    argv = ["explain", data["path"], str(data["root"] / "csv"), "--out", str(out), "--id", "id"]
    assert _cli(argv, scheduler) == 0
    written = pd.read_csv(out)
    assert list(written.columns) == ["id"] + [f"shap_{c}" for c in FEATURES] + ["shap_bias"]
    frame = data["frame"].set_index("id").loc[written["id"]]
    raw = data["model"].decision_function(_features(frame.reset_index()))
    np.testing.assert_allclose(written.drop(columns="id").sum(axis=1), raw, atol=1e-9)


def test_unknown_keep_column_fails_at_once(data, tmp_path, capsys):
    out = tmp_path / "pred.csv"
    argv = ["predict", data["path"], str(data["root"] / "csv"), "--out", str(out),
            "--keep", "id,customer"]
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert re.search(r"--keep names column\(s\) \['customer'\] that .*part-0.csv does not have; "
                     r"its columns are \['id', 'x1', 'x2', 'x3', 'colour', 'y', 'region', "
                     r"'zip'\]", err), err
    assert not out.exists() and not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, pattern", [
    (["--keep", "prediction"], (r"--keep column\(s\) \['prediction'\] would share a name "
                                r"with the output's own column")),
    (["--out", "OUT.csv"], r"OUT.csv already exists; pass --force"),
], ids=["keep clashes with the output", "existing CSV output"])
def test_refusals_before_any_work(argv, pattern, data, tmp_path, capsys):
    (tmp_path / "OUT.csv").write_text("the user's file\n")
    argv = [str(tmp_path / a) if a == "OUT.csv" else a for a in argv]
    base = ["predict", data["path"], str(data["root"] / "csv")]
    if "--out" not in argv:
        base += ["--out", str(tmp_path / "new.csv")]
    assert cli.main(base + argv) == 1
    assert re.search(pattern, capsys.readouterr().err)
    assert (tmp_path / "OUT.csv").read_text() == "the user's file\n"


def test_unreadable_file_is_named(data, tmp_path, capsys):
    bad = tmp_path / "in" / "part-0.parquet"
    bad.parent.mkdir()
    bad.write_text("id,x1\n1,2\n")  # CSV text under a Parquet name
    assert cli.main(["predict", data["path"], str(bad.parent), "--out",
                     str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"cannot read {bad}" in err and "Traceback" not in err, err


def test_not_a_number_in_a_feature_is_named(prefect_harness, scheduler, data, tmp_path,
                                            capsys):
    frame = data["frame"][["id", *FEATURES]].astype({"x1": object})
    frame.loc[frame.index[120], "x1"] = "n/a?"
    path = fx.write_csv(tmp_path / "in" / "rows.csv", frame)
    argv = ["predict", data["path"], str(path), "--out", str(tmp_path / "p.csv"), "--keep", "id"]
    assert _cli(argv, scheduler) == 1
    err = capsys.readouterr().err
    assert re.search(r"column 'x1' of .*rows.csv holds 'n/a\?' at data row 121, which is not "
                     r"a number", err), err
    assert not (tmp_path / "p.csv").exists()


def _prepare(data, out, *extra) -> list[str]:
    return ["prepare", str(data["root"] / "csv"), "--out", str(out), "--target", "y",
            "--categorical", "colour", "region", "--drop", "zip", *extra]


def test_prepare_refuses_an_id_column_unless_told(prefect_harness, data, tmp_path, capsys):
    assert cli.main(_prepare(data, tmp_path / "data")) == 1
    err = capsys.readouterr().err
    assert ("column 'id' looks like an identifier (its name 'id'); as a feature a model would "
            "learn the rows by heart: pass --id id to carry it beside the data") in err, err
    assert "--drop id to leave it out, or --feature id to use it as a feature" in err
    assert not (tmp_path / "data").exists()


def test_identifier_by_values():
    from flows._schema import identifier_reason

    rows = pd.Series(np.arange(40) * 3 + 7, name="account")
    assert identifier_reason(rows) == "a different value in each of the first 40 rows"
    assert identifier_reason(rows.astype(str).rename("ref")) is not None
    assert identifier_reason(pd.Series(np.linspace(0, 1, 40), name="x")) is None  # measurements
    assert identifier_reason(pd.Series(np.arange(40) % 5, name="n")) is None
    assert identifier_reason(rows[:10]) is None  # too few rows to tell


def test_prepared_id_is_carried_not_trained_then_joins(prefect_harness, scheduler, data,
                                                       tmp_path):
    """``prepare --id id``: the id is in every split, not a feature; ``predict --keep id``
    on the test split joins back to the raw rows, each prediction the model's."""
    from flows._data import load_split
    from flows._prepared import read_schema

    prepared = tmp_path / "data"
    assert _cli(_prepare(data, prepared, "--id", "id"), scheduler) == 0
    schema = read_schema(prepared)
    assert schema.ids == {"id": "integer"} and "id" not in schema.feature_names
    X, _ = load_split(prepared, "train", schema)
    assert "id" not in X.columns  # training never sees it
    splits = [pd.read_parquet(prepared / s) for s in ("train", "validation", "test")]
    ids = pd.concat([s["id"] for s in splits])
    assert sorted(ids) == sorted(data["frame"]["id"]) and str(ids.dtype) == "Int64"
    out = tmp_path / "pred"
    argv = ["predict", data["path"], str(prepared / "test"), "--out", str(out), "--keep", "id"]
    assert _cli(argv, scheduler) == 0
    written = pd.concat([pd.read_parquet(p) for p in sorted(out.glob("*.parquet"))])
    assert len(written) == schema.split_rows["test"] == len(splits[2])
    joined = data["frame"].astype({"id": "Int64"}).merge(written, on="id", suffixes=("", "_out"),
                                                         validate="one_to_one")
    assert len(joined) == len(written)
    np.testing.assert_array_equal(joined["prediction_out"], joined["prediction"])


def test_keep_id_and_prepare_options_parse():
    parse = cli.build_parser().parse_args
    args = parse(["predict", "m.json", "d", "--out", "o", "--keep", "id,region", "zip",
                  "--id", "key", "--keep", "id"])
    assert cli._kept(args) == ["id", "region", "zip", "key"]
    assert cli._kept(parse(["explain", "m.json", "d", "--out", "o"])) == []
    args = parse(["prepare", "raw", "--out", "d", "--target", "y", "--id", "id", "uuid",
                  "--feature", "account"])
    assert args.id_columns == ["id", "uuid"] and args.feature_columns == ["account"]


def test_an_id_column_does_not_change_the_split(data, tmp_path):
    """Rows split by a hash of their features and target alone: ``--id id`` and
    ``--drop id`` put every row in the same split, the id carried beside it."""
    from flows._schema import infer_data_schema
    from flows._tabular import read_file, write_file_splits

    path = str(data["root"] / "csv" / "part-0.csv")
    head = read_file(path, "csv")
    fractions = {"validation": 0.2, "test": 0.2}
    written = {}
    for name, how in (("with", {"id_columns": ["id"]}), ("without", {"drop": ["id"]})):
        drop = ["zip"] + how.get("drop", [])
        schema = infer_data_schema(head, path, "y", "auto", ["colour", "region"], drop,
                                   how.get("id_columns"))
        schema = schema.model_copy(update={"features": [
            f.model_copy(update={"categories": sorted(head[f.name].unique())})
            if f.kind == "categorical" else f for f in schema.features]})
        counts, _ = write_file_splits(path, "csv", schema, 0, fractions, str(tmp_path / name), 0,
                                      batch_rows=50)
        written[name] = pd.read_parquet(tmp_path / name / "test")
    assert counts["test"] > 0
    pd.testing.assert_frame_equal(written["with"].drop(columns="id"), written["without"])
    expected = data["frame"].set_index("id").loc[written["with"]["id"].astype(int)]
    # the rows the ids name, their values parsed from CSV text: pandas 3's parser is
    # correctly rounded, pandas 2.2's to_numeric is off by up to ~2e-14 (relative)
    np.testing.assert_allclose(written["with"]["x1"], expected["x1"], rtol=1e-13)
