"""The prepare flow's logic without Prefect runs: schema inference, per-file
statistics, validation messages, deterministic splits, output protection."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import numpy as np
import pandas as pd
import pytest

from flows._schema import check_statistics, combine_statistics, infer_schema, list_source_files
from flows._tabular import (
    DataError,
    file_statistics,
    read_file,
    row_uniforms,
    split_labels,
    typed_frame,
    write_file_splits,
)
from flows.prepare import check_output, finish_schema

FRACTIONS = {"validation": 0.2, "test": 0.2}


def scan(folder, target="y", categorical=(), task="auto"):
    """What the flow does before writing: schema, per-file statistics, problems."""
    fmt, files = list_source_files(str(folder))
    schema = infer_schema(read_file(files[0], fmt), files[0], target, task, list(categorical))
    per_file = [file_statistics(f, fmt, schema, 0, FRACTIONS, 100) for f in files]
    stats = combine_statistics(schema, per_file)
    return schema, stats, per_file


def test_good_input_schema_and_statistics(tmp_path):
    fx.hastie_csv(tmp_path, n_rows=300)
    schema, stats, per_file = scan(tmp_path, categorical=["colour"])
    assert schema["task"] == "classification" and schema["target_kind"] == "integer"
    kinds = {f["name"]: f["kind"] for f in schema["features"]}
    assert kinds == {
        "x1": "numeric",
        "x2": "numeric",
        "x3": "numeric",
        "x4": "numeric",
        "colour": "categorical",
    }
    assert stats["rows"] == 300
    assert stats["columns"]["x2"]["missing"] == len(range(0, 300, 23))
    assert stats["columns"]["colour"]["values"].keys() == {"blue", "green", "red"}
    assert check_statistics(schema, stats, per_file) == []
    final = finish_schema(schema, stats, per_file)
    assert final["classes"] == [-1, 1]
    assert final["features"][-1]["categories"] == ["blue", "green", "red"]


def test_missing_target_names_columns(tmp_path):
    fx.write_csv(tmp_path / "a.csv", pd.DataFrame({"x": [1, 2], "z": [0, 1]}))
    with pytest.raises(DataError, match=r"target column 'y' not found in .*a\.csv.*\['x', 'z'\]"):
        scan(tmp_path)


def test_text_column_must_be_declared_categorical(tmp_path):
    fx.write_csv(tmp_path / "a.csv", pd.DataFrame({"city": ["Oslo", "Rome"], "y": [0, 1]}))
    with pytest.raises(
        DataError, match=r"column 'city' is not numeric \(e.g. 'Oslo'.*--categorical city"
    ):
        scan(tmp_path)


def test_bad_values_later_in_a_file_are_located(tmp_path):
    frame = pd.DataFrame({"x": np.arange(10.0), "w": np.arange(10.0), "y": [0, 1] * 5})
    frame["x"] = frame["x"].astype(object)
    frame.loc[6, "x"] = "oops"
    frame.loc[3, "w"] = np.inf
    fx.write_csv(tmp_path / "b.csv", frame)
    schema, stats, per_file = scan(tmp_path)
    problems = check_statistics(schema, stats, per_file)
    assert any(
        "column 'x' has 1 non-numeric value(s), e.g. 'oops'" in p and "b.csv, data row 7" in p
        for p in problems
    ), problems
    assert any(
        "column 'w' has 1 infinite value(s)" in p and "b.csv, data row 4" in p for p in problems
    ), problems


def test_constant_target_and_missing_target(tmp_path):
    fx.write_csv(tmp_path / "c.csv", pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [5.0, 5, 5, 5]}))
    schema, stats, per_file = scan(tmp_path, task="regression")
    assert any(
        "is constant (every row is 5)" in p for p in check_statistics(schema, stats, per_file)
    )
    fx.write_csv(tmp_path / "c.csv", pd.DataFrame({"x": [1.0, 2, 3, 4], "y": [5.0, None, 6, 7]}))
    schema, stats, per_file = scan(tmp_path, task="regression")
    assert any(
        "target 'y' is missing in 1 row(s)" in p and "c.csv, data row 2" in p
        for p in check_statistics(schema, stats, per_file)
    )


def test_class_absent_from_training_split(tmp_path):
    n = 400
    base = pd.DataFrame({"x": np.arange(n, dtype=float), "y": ["a", "b"] * (n // 2)})
    for row in range(20):  # the split is a hash of the row: find a row it keeps out of train
        frame = base.copy()
        frame.loc[row, "y"] = "rare"
        fx.write_csv(tmp_path / "d.csv", frame)
        schema, stats, per_file = scan(tmp_path)
        if "rare" not in stats["target"]["per_split"]["train"]:
            break
    problems = check_statistics(schema, stats, per_file)
    assert any(
        "class(es) ['rare']" in p and "no row in the training split" in p for p in problems
    ), problems


def test_unreadable_file_is_named(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    fmt, files = list_source_files(str(tmp_path))
    with pytest.raises(DataError, match=r"cannot read .*bad\.parquet"):
        read_file(files[0], fmt)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        list_source_files(str(tmp_path / "nowhere"))


def test_splits_do_not_depend_on_file_layout(tmp_path):
    one, three = tmp_path / "one", tmp_path / "three"
    fx.hastie_csv(one, n_rows=600, n_files=1)
    fx.hastie_csv(three, n_rows=600, n_files=3)
    schema, stats, per_file = scan(one, categorical=["colour"])
    schema = finish_schema(schema, stats, per_file)
    rows = {}
    for name, folder in (("one", one), ("three", three)):
        fmt, files = list_source_files(str(folder))
        out = tmp_path / f"out-{name}"
        for i, f in enumerate(files):
            write_file_splits(f, fmt, schema, 0, FRACTIONS, str(out), i)
        rows[name] = {
            s: pd.concat([pd.read_parquet(p) for p in sorted((out / s).glob("*.parquet"))])
            .sort_values("x1")
            .reset_index(drop=True)
            for s in ("train", "validation", "test")
        }
    for split in rows["one"]:
        pd.testing.assert_frame_equal(rows["one"][split], rows["three"][split])
    sizes = {s: len(f) for s, f in rows["one"].items()}
    assert 0.1 < sizes["test"] / 600 < 0.3 and sizes["train"] > sizes["validation"]
    assert isinstance(rows["one"]["train"]["colour"].dtype, pd.CategoricalDtype)


def test_split_hash_is_seeded_and_uniform():
    frame, _ = typed_frame(
        pd.DataFrame({"a": np.arange(2000).astype(str), "y": ["0"] * 2000}),
        {"features": [{"name": "a", "kind": "numeric"}], "target": "y", "target_kind": "integer"},
    )
    u0, u1 = row_uniforms(frame, 0), row_uniforms(frame, 1)
    assert not np.array_equal(u0, u1) and np.array_equal(u0, row_uniforms(frame, 0))
    counts = np.bincount(split_labels(u0, 0.2, 0.1), minlength=3) / 2000
    np.testing.assert_allclose(counts, [0.7, 0.2, 0.1], atol=0.04)


def test_existing_output_is_protected(tmp_path):
    assert check_output(tmp_path / "new", overwrite=False) == tmp_path / "new"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("precious")
    with pytest.raises(FileExistsError, match="already exists"):
        check_output(tmp_path / "mine", overwrite=False)
    with pytest.raises(FileExistsError, match="not a distboost prepared-data folder"):
        check_output(tmp_path / "mine", overwrite=True)
    (tmp_path / "mine" / "schema.json").write_text("{}")
    assert check_output(tmp_path / "mine", overwrite=True)


def test_parquet_source_with_category_column(tmp_path):
    frame = pd.DataFrame(
        {
            "x": np.linspace(0, 1, 60),
            "kind": pd.Categorical(["a", "b", "c"] * 20),
            "flag": [True, False] * 30,
            "y": np.linspace(0, 5, 60) ** 2,
        }
    )
    frame.iloc[:30].to_parquet(tmp_path / "p0.parquet")
    frame.iloc[30:].to_parquet(tmp_path / "p1.parquet")
    schema, stats, per_file = scan(tmp_path)
    assert schema["task"] == "regression" and schema["target_kind"] == "float"
    kinds = {f["name"]: f["kind"] for f in schema["features"]}
    assert kinds == {"x": "numeric", "kind": "categorical", "flag": "numeric"}
    assert stats["rows"] == 60 and check_statistics(schema, stats, per_file) == []


def test_fsspec_url_source(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with fs.open("/distboost-test/raw/a.csv", "w") as f:
        f.write("x,y\n1,0\n2,1\n3,0\n4,1\n")
    fmt, files = list_source_files("memory://distboost-test/raw")
    assert fmt == "csv" and files == ["memory:///distboost-test/raw/a.csv"]
    schema, stats, _ = scan("memory://distboost-test/raw")
    assert stats["rows"] == 4 and schema["target_kind"] == "integer"
    fs.rm("/distboost-test", recursive=True)


def test_publish_replaces_only_when_the_new_output_is_complete(tmp_path):
    from flows.prepare import publish

    out, staging = tmp_path / "data", tmp_path / ".data.partial"
    out.mkdir()
    (out / "schema.json").write_text("old")
    staging.mkdir()
    (staging / "schema.json").write_text("new")
    publish(staging, out)
    assert (out / "schema.json").read_text() == "new" and not staging.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["data"]  # the old copy is gone
