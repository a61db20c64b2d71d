"""A ranking task through the command line: ``prepare --group`` keeps each
query's rows together in one split and one file, ``train`` fits a
GradientBoostingRanker on them (Dask, equal to the same fit in process), and
the refusals name the file, row and query."""

try:
    import _flows_fixtures as fx
except ImportError:  # tests/ imported as a package
    from tests import _flows_fixtures as fx

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db
from flows._precheck import check_prepare
from flows._tabular import DataError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.ranking_data import make_ranking

PARAMS = ["--param", "n_estimators=6", "--param", "max_depth=3", "--param", "learning_rate=0.3"]


def _frame(seed=0):
    X, rel, qid = make_ranking(n_queries=60, min_docs=8, max_docs=16, n_features=4, seed=seed)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(4)]).assign(rel=rel, query=qid)


@pytest.fixture(scope="module")
def ranked(tmp_path_factory):
    """Two CSV files (queries 0-29 and 30-59), prepared with --group and trained."""
    folder = tmp_path_factory.mktemp("ranking")
    frame = _frame()
    raw = folder / "raw"
    raw.mkdir()
    fx.write_csv(raw / "a.csv", frame[frame["query"] < 30])
    fx.write_csv(raw / "b.csv", frame[frame["query"] >= 30])
    data, run = folder / "data", folder / "run"
    prepared = fx.run_cli(["prepare", str(raw), "--out", str(data), "--target", "rel",
                           "--group", "query", "--workers", "1", "--dashboard-address", ":0"])
    assert prepared.returncode == 0, prepared.stderr
    trained = fx.run_cli(["train", str(data), "--out", str(run), *PARAMS, "--workers", "2",
                          "--dashboard-address", ":0"])
    assert trained.returncode == 0, trained.stderr
    return frame, data, run


def _split(data, name):
    return pd.concat([pd.read_parquet(p) for p in sorted((data / name).glob("*.parquet"))],
                     ignore_index=True)


def test_prepare_keeps_each_query_in_one_split_and_file(ranked):
    frame, data, _ = ranked
    schema = json.loads((data / "schema.json").read_text())
    assert (schema["task"], schema["group"], schema["ids"]) == ("ranking", "query",
                                                                 {"query": "integer"})
    assert [f["name"] for f in schema["features"]] == ["x0", "x1", "x2", "x3"]
    seen = {}
    for name in ("train", "validation", "test"):
        for path in sorted((data / name).glob("*.parquet")):
            part = pd.read_parquet(path)
            assert part["query"].is_monotonic_increasing  # rows in input order
            for q in part["query"].unique():
                assert q not in seen, f"query {q} in {seen.get(q)} and {path}"
                seen[q] = path
                rows = frame[frame["query"] == q]
                np.testing.assert_array_equal(part.loc[part["query"] == q, "rel"], rows["rel"])
    assert sorted(seen) == list(range(60))  # every query, whole, in one file of one split
    assert all(len(list((data / s).glob("*.parquet"))) >= 1 for s in ("train", "validation"))


def test_train_fits_a_ranker_equal_to_the_fit_in_process(ranked):
    _, data, run = ranked
    est = db.load_model(run / "model.json")
    assert type(est).__name__ == "GradientBoostingRanker"
    train, valid = _split(data, "train"), _split(data, "validation")
    features = ["x0", "x1", "x2", "x3"]
    from flows._data import load_bin_mapper

    here = db.GradientBoostingRanker(n_estimators=6, max_depth=3, learning_rate=0.3,
                                     random_state=0, train_metric=True,
                                     early_stopping_rounds=10).fit(  # the run's default
        train[features], train["rel"], qid=train["query"], eval_set=[(valid[features],
                                                                      valid["rel"])],
        eval_qid=[valid["query"]], bin_mapper=load_bin_mapper(data))
    np.testing.assert_array_equal(est.predict(valid[features]), here.predict(valid[features]))
    history = est.evals_result_["validation_0"]["ndcg@32"]
    assert history == here.evals_result_["validation_0"]["ndcg@32"] and len(history) == 6
    assert len(est.trees_) == len(here.trees_) == est.best_iteration_ + 1


def test_group_refusals(tmp_path):
    frame = _frame()
    swapped = frame.copy()
    swapped.loc[20, "query"] = 0  # data row 21, after query 1 or 2
    raw = fx.write_csv(tmp_path / "unsorted.csv", swapped)
    check_prepare(str(raw), "rel", group="query")  # the first rows pass; the scan refuses
    from flows._file_stats import file_statistics
    from flows._schema import source_schema

    fmt, files, schema = source_schema(str(raw), "rel", group="query")
    with pytest.raises(DataError, match=r"query id column 'query' of .*unsorted.csv is not "
                                        r"sorted: data row 21 has query 0 after query [12]"):
        # prepare's statistics pass, 7 rows a batch: the row is found across batches
        file_statistics(files[0], fmt, schema, 0, {"validation": 0.15, "test": 0.15}, 7)
    with pytest.raises(DataError, match=r"query id column 'qid' \(--group\) not found"):
        check_prepare(str(raw), "rel", group="qid")
    with pytest.raises(DataError, match="--group query makes a ranking task"):
        check_prepare(str(raw), "rel", task="regression", group="query")
    with pytest.raises(DataError, match="a ranking task needs its query id column"):
        check_prepare(str(raw), "rel", task="ranking")
    from flows._queries import queries_across_files

    problem = queries_across_files("query", ["a.csv", "b.csv"],
                                   [np.array([0, 1, 2]), np.array([2, 3])])
    assert problem and problem[0].startswith("query 2 of column 'query' has rows in a.csv and "
                                             "b.csv; each file is a partition")


def test_report_shows_ndcg_by_cutoff_and_across_queries(ranked, tmp_path):
    _, data, run = ranked
    out = tmp_path / "report"
    result = fx.run_cli(["evaluate", str(data), "--model", str(run / "model.json"), "--out",
                         str(out), "--shap-rows", "40", "--workers", "1",
                         "--dashboard-address", ":0"])
    assert result.returncode == 0, result.stderr
    metrics = json.loads((out / "evaluation.json").read_text())["metrics"]
    test = _split(data, "test")
    est = db.load_model(run / "model.json")
    score = est.predict(test[["x0", "x1", "x2", "x3"]])
    from distboost.metrics import query_metric
    from distboost.trees.ranking import QueryTarget

    target = QueryTarget(test["rel"].to_numpy(float), test["query"].to_numpy())
    per_query = {}
    for name in ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg"):
        per_query[name], _ = query_metric(name).per_query(target, score[None, :])
        assert metrics[name] == pytest.approx(per_query[name].mean(), rel=1e-12)
        flat, _ = query_metric(name).per_query(target, np.zeros((1, len(score))))
        assert metrics["baseline"][name] == pytest.approx(flat.mean(), rel=1e-12)
    assert metrics["queries"] == test["query"].nunique() and metrics["n"] == len(test)
    spread = metrics["per_query"]
    assert spread["quantiles"]["0.5"] == pytest.approx(np.median(per_query["ndcg@10"]))
    assert sum(spread["histogram"]) == metrics["queries"]
    assert metrics["ndcg@10"] > metrics["baseline"]["ndcg@10"]  # the model learned something
    page = (out / "report.html").read_text()
    for text in ("NDCG@1", "NDCG@10", "NDCG (whole list)", "Across queries",
                 "NDCG by cut-off and across queries", "queries evaluated"):
        assert text in page
    assert (out / "figures" / "ndcg.png").is_file()
