"""flows.data_summary: the report's data section, checked against pandas on
the prepared splits, and its tables and rounding by hand."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import numpy as np
import pandas as pd
import pytest

from flows._prepared import read_schema
from flows.data_summary import data_tables, rounded_seconds, summarize_data


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    root = tmp_path_factory.mktemp("summary")
    rng = np.random.default_rng(5)
    n = 400
    frame = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                          "colour": rng.choice(["red", "blue"], n),
                          "y": rng.choice(["p", "q", "r"], n, p=[0.6, 0.3, 0.1])})
    frame.loc[::4, "a"] = np.nan
    frame.loc[::50, "colour"] = np.nan
    fx.write_csv(root / "raw" / "part.csv", frame)
    (root / "data").mkdir()
    return fx.prepared_folder(root / "raw", root / "data", "y", ["colour"])


def test_data_summary_counts_what_the_splits_hold(prepared):
    schema = read_schema(prepared)
    summary = summarize_data(prepared, schema)
    splits = {s: pd.read_parquet(prepared / s) for s in ("train", "validation", "test")}
    assert summary["splits"] == ["train", "validation", "test"]
    assert summary["rows"] == {s: len(f) for s, f in splits.items()} == schema.split_rows
    for s, f in splits.items():
        assert summary["missing"]["a"][s] == pytest.approx(f["a"].isna().mean(), abs=1e-12)
        assert summary["missing"]["colour"][s] == pytest.approx(f["colour"].isna().mean())
        assert summary["missing"]["b"][s] == 0.0
        counts = f["y"].value_counts()
        assert summary["target"][s] == {c: int(counts.get(c, 0)) for c in ["p", "q", "r"]}
    tables = {heading: (note, rows) for heading, note, rows in data_tables(summary)}
    assert [r["split"] for r in tables["Rows per split"][1]] == ["train", "validation", "test"]
    note, rows = tables["Missing values"]
    assert note == "2 of 4 columns have missing values." and [r["column"] for r in rows] == [
        "a", "colour"]
    train = splits["train"]
    assert rows[0]["train"] == f"{100 * train['a'].isna().mean():.1f}%"
    balance = tables["Class balance"][1]
    n_p = int((train["y"] == "p").sum())
    assert balance[0]["class"] == "p"
    assert balance[0]["train"] == f"{n_p:,} ({100 * n_p / len(train):.1f}%)"


def test_regression_target_distribution_table():
    summary = {"task": "regression", "splits": ["train"], "rows": {"train": 1234},
               "missing": {"x": {"train": 0.0}},
               "target": {"train": {"mean": 1.23456, "std": 2.0, "min": -3.0, "25%": 0.5,
                                    "50%": 1.0, "75%": 2.0, "max": 10.0}}}
    tables = data_tables(summary)
    assert tables[0][2] == [{"split": "train", "rows": "1,234", "share": "100.0%"}]
    assert tables[1][0] == "Target distribution" and tables[1][2][0] == {"statistic": "mean",
                                                                        "train": "1.235"}
    assert tables[2][1] == "No missing values in any of the 1 columns." and tables[2][2] == []


def test_durations_are_rounded_for_people():
    assert [rounded_seconds(s) for s in (0.4234, 8.26, 55.069, 99.96, 125.4, 3600)] == [
        "0.42 s", "8.3 s", "55.1 s", "100.0 s", "2 min 5 s", "60 min 0 s"]
