"""The prepare flow's logic without Prefect runs: schema inference, per-file
statistics, validation messages, deterministic splits, output protection, and
reading in batches (the same output whatever the batch size, memory bounded
by the batch)."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from flows._file_stats import file_statistics
from flows._prepared import Feature, PreparedSchema
from flows._schema import check_statistics, combine_statistics, infer_data_schema, list_source_files
from flows._tabular import (
    DataError,
    from_text,
    parse_floats,
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
    schema = infer_data_schema(read_file(files[0], fmt), files[0], target, task, list(categorical))
    per_file = [file_statistics(f, fmt, schema, 0, FRACTIONS) for f in files]
    stats = combine_statistics(schema, per_file)
    return schema, stats, per_file


def test_good_input_schema_and_statistics(tmp_path):
    fx.hastie_csv(tmp_path, n_rows=300)
    schema, stats, per_file = scan(tmp_path, categorical=["colour"])
    assert schema.task == "classification" and schema.target_kind == "integer"
    kinds = {f.name: f.kind for f in schema.features}
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
    assert final.classes == [-1, 1]
    assert final.features[-1].categories == ["blue", "green", "red"]


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
    base = pd.DataFrame({"x": np.arange(n) + 0.5, "y": ["a", "b"] * (n // 2)})
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
        PreparedSchema(source="s", target="y", task="classification", target_kind="integer",
                       features=[Feature(name="a", kind="numeric")], columns_needed=["a", "y"]),
    )
    u0, u1 = row_uniforms(frame, 0), row_uniforms(frame, 1)
    assert not np.array_equal(u0, u1) and np.array_equal(u0, row_uniforms(frame, 0))
    counts = np.bincount(split_labels(u0, 0.2, 0.1), minlength=3) / 2000
    np.testing.assert_allclose(counts, [0.7, 0.2, 0.1], atol=0.04)


def test_existing_output_is_protected(tmp_path):
    assert check_output(tmp_path / "new", overwrite=False) == tmp_path / "new"
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("precious")
    for overwrite in (False, True):  # not ours: never replaced, --force or not
        with pytest.raises(FileExistsError, match="not a distboost prepared-data folder"):
            check_output(tmp_path / "mine", overwrite=overwrite)
    (tmp_path / "mine" / "schema.json").write_text("{}")
    with pytest.raises(FileExistsError, match="already exists; pass --force"):
        check_output(tmp_path / "mine", overwrite=False)
    assert check_output(tmp_path / "mine", overwrite=True)
    with pytest.raises(FileExistsError, match="is a file, not a folder"):
        check_output(tmp_path / "mine" / "notes.txt", overwrite=True)


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
    assert schema.task == "regression" and schema.target_kind == "float"
    kinds = {f.name: f.kind for f in schema.features}
    assert kinds == {"x": "numeric", "kind": "categorical", "flag": "numeric"}
    assert stats["rows"] == 60 and check_statistics(schema, stats, per_file) == []


def test_a_source_under_a_hidden_folder_is_read_and_hidden_names_below_it_skipped(tmp_path):
    source = fx.hastie_csv(tmp_path / ".cache" / "data" / "w1", n_rows=300, n_files=3)
    visible = sorted(p.as_uri() for p in source.glob("*.csv"))
    (source / ".ipynb_checkpoints").mkdir()
    (source / ".ipynb_checkpoints" / "part-0.csv").write_text((source / "part-0.csv").read_text())
    (source / ".part-1.csv").write_text((source / "part-1.csv").read_text())
    (source / "more" / ".old").mkdir(parents=True)
    (source / "more" / ".old" / "part-9.csv").write_text((source / "part-2.csv").read_text())
    fmt, files = list_source_files(str(source))
    assert fmt == "csv" and files == visible, files
    _, stats, _ = scan(source, categorical=["colour"])
    assert stats["rows"] == 300


def test_fsspec_url_source(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    with fs.open("/distboost-test/raw/a.csv", "w") as f:
        f.write("x,y\n1,0\n2,1\n3,0\n4,1\n")
    fmt, files = list_source_files("memory://distboost-test/raw")
    assert fmt == "csv" and files == ["memory:///distboost-test/raw/a.csv"]
    schema, stats, _ = scan("memory://distboost-test/raw")
    assert stats["rows"] == 4 and schema.target_kind == "integer"
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


def test_publish_replaces_what_prepare_wrote_and_nothing_else(tmp_path):
    """``--force`` into a prepared folder that also holds the user's files."""
    from flows.prepare import publish

    out, staging = tmp_path / "data", tmp_path / ".data.partial"
    for folder, text in ((out, "old"), (staging, "new")):
        (folder / "train").mkdir(parents=True)
        (folder / "train" / "part-00000.parquet").write_text(text)
        for name in ("schema.json", "statistics.json", "bin_edges.json"):
            (folder / name).write_text(text)
    (out / "test").mkdir()  # a split the new output does not have
    (out / "notes.txt").write_text("mine")
    (out / "mine").mkdir()
    publish(staging, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "bin_edges.json", "mine", "notes.txt", "schema.json", "statistics.json", "train"]
    assert (out / "schema.json").read_text() == "new" and (out / "notes.txt").read_text() == "mine"
    assert (out / "train" / "part-00000.parquet").read_text() == "new"
    assert [p.name for p in tmp_path.iterdir()] == ["data"]


# ------------------------------------------------------------------ batches
def _approx_equal(a, b) -> bool:
    """Equal, floats up to rounding (sums of batches add in another order)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_approx_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_approx_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b, equal_nan=True)
    if isinstance(a, float):
        return a == pytest.approx(b, rel=1e-12, abs=1e-12)
    return a == b


def _awkward_csv(path, n_rows=40):
    """A file whose problems lie in later batches: a text value, an infinity,
    a missing target, categories and gaps."""
    frame = pd.DataFrame({
        "x": np.arange(n_rows, dtype=float).astype(object),
        "w": np.linspace(-1, 1, n_rows),
        "c": (["a", "b", None, "c"] * n_rows)[:n_rows],
        "y": ([0, 1, 1] * n_rows)[:n_rows],
    })
    frame.loc[17, "x"] = "oops"
    frame.loc[[5, 23], "w"] = [np.nan, np.inf]
    frame["y"] = frame["y"].astype(object)
    frame.loc[31, "y"] = None
    return fx.write_csv(path, frame)


@pytest.mark.parametrize("batch_rows", [1, 3, 7, 16])
def test_statistics_in_batches_are_those_of_the_whole_file(tmp_path, batch_rows):
    path = str(_awkward_csv(tmp_path / "a.csv"))
    schema = infer_data_schema(read_file(path, "csv"), path, "y", "auto", ["c"])
    whole = file_statistics(path, "csv", schema, 0, FRACTIONS)
    batched = file_statistics(path, "csv", schema, 0, FRACTIONS, batch_rows=batch_rows)
    assert _approx_equal(batched, whole)
    stats = combine_statistics(schema, [batched])
    problems = check_statistics(schema, stats, [batched])
    assert problems == check_statistics(schema, combine_statistics(schema, [whole]), [whole])
    text = "\n".join(problems)  # rows counted from the file's start, not the batch's
    assert "'oops' at " in text and "a.csv, data row 18" in text
    assert "infinite value(s), the first at" in text and "a.csv, data row 24" in text
    assert "target 'y' is missing in 1 row(s), the first at" in text and "data row 32" in text


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_splits_written_in_batches_are_those_of_the_whole_file(tmp_path, fmt):
    fx.hastie_csv(tmp_path / "raw", n_rows=300, n_files=1)
    (path,) = sorted((tmp_path / "raw").glob("*.csv"))
    if fmt == "parquet":
        pd.read_csv(path).to_parquet(path.with_suffix(".parquet"), row_group_size=40)
        path.unlink()
        path = path.with_suffix(".parquet")
    schema = infer_data_schema(read_file(str(path), fmt), str(path), "y", "auto", ["colour"])
    stats = file_statistics(str(path), fmt, schema, 0, FRACTIONS)
    schema = finish_schema(schema, combine_statistics(schema, [stats]), [stats])
    counts = {}
    for batch_rows in (5, 10_000):
        out = tmp_path / f"out-{batch_rows}"
        counts[batch_rows], _ = write_file_splits(str(path), fmt, schema, 0, FRACTIONS, str(out),
                                                  0, batch_rows=batch_rows)
    assert counts[5] == counts[10_000] and sum(counts[5].values()) == 300
    for split in ("train", "validation", "test"):
        small = tmp_path / "out-5" / split / "part-00000.parquet"
        pd.testing.assert_frame_equal(pd.read_parquet(small),
                                      pd.read_parquet(tmp_path / "out-10000" / split / small.name))
        meta = pq.ParquetFile(small).metadata
        assert max(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) <= 5


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_worker_holds_a_batch_not_the_file(tmp_path, fmt):
    """Peak memory of the per-file work (numpy and pandas allocations, as
    tracemalloc sees them) follows the batch size, not the file size (besides
    the binning sample, at most ``n_samples`` rows: here 500 of the 24,000
    training rows)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40_000, 6)), columns=[f"x{j}" for j in range(6)])
    frame["y"] = (frame["x0"] > 0).astype(int)
    path = str(tmp_path / f"big.{fmt}")
    if fmt == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, row_group_size=4000)
    schema = infer_data_schema(read_file(path, fmt, nrows=100), path, "y")
    schema = schema.model_copy(update={"classes": [0, 1]})
    peaks = {}
    for batch_rows in (1_000, 1_000_000):
        tracemalloc.start()
        file_statistics(path, fmt, schema, 0, FRACTIONS, batch_rows=batch_rows)
        write_file_splits(path, fmt, schema, 0, FRACTIONS, str(tmp_path / str(batch_rows)), 0,
                          batch_rows=batch_rows, n_samples=500)
        peaks[batch_rows] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[1_000] * 5 < peaks[1_000_000], peaks


def test_csv_numbers_are_read_to_the_nearest_double():
    # pandas before 3 reads about a third of these one unit in the last place off, which
    # changed the rows' hashes (their splits) between pandas versions
    x = np.random.default_rng(0).normal(size=2000)
    text = pd.Series([repr(float(v)) for v in x] + ["abc", None, "inf", " 2", "+3", "1e5"], dtype=object)
    values = parse_floats(text)
    np.testing.assert_array_equal(values[:2000], x)
    assert np.isnan(values[2000]) and np.isnan(values[2001])
    assert values[2002:].tolist() == [np.inf, 2.0, 3.0, 1e5]
    ids = from_text(pd.Series([repr(float(v)) for v in x[:5]]), "float", "ids.csv")
    np.testing.assert_array_equal(ids.to_numpy(), x[:5])
