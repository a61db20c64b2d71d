"""Partitions read where a bad or changed source file is named
(``distboost.engine.sources``): real Parquet files, read in this process by
Dask's synchronous scheduler, and on the session's LocalCluster for
prediction. The fit's refusals are rows of ``test_bad_input.py``; a file
changed before a worker's rows are rebuilt is in ``test_resilience.py``."""

import os

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine import dask_internals, sources
from distboost.inspection import shap_values

rng = np.random.default_rng(7)
FRAME = pd.DataFrame(rng.normal(size=(900, 20)), columns=["a", "b"] + [f"c{j}" for j in range(18)])
FRAME["label"] = (FRAME["a"] - FRAME["b"] > 0).astype(int)


@pytest.fixture
def folder(tmp_path):
    """Nine Parquet files of 100 rows and 21 columns (Dask reads three into one
    partition when three columns are chosen)."""
    for i in range(9):
        FRAME.iloc[100 * i: 100 * (i + 1)].to_parquet(tmp_path / f"part-{i}.parquet")
    return tmp_path


def _joined(folder):
    ddf = dd.read_parquet(folder)
    return ddf[["a", "b"]].assign(y=ddf["label"])


def _compute(part):
    return dask.compute(part, scheduler="sync")[0]


def test_partitions_read_as_dask_reads_them_and_name_a_bad_file(folder):
    joined = _joined(folder)
    plan = dask_internals.parquet_plan(joined)
    assert max(len(p) for p in plan.pieces) > 1  # several files in one partition
    parts = sources.read_parts(joined, True, "training data", sources.FileIdentities())
    expected = joined.compute()
    pd.testing.assert_frame_equal(pd.concat([_compute(p) for p in parts]), expected)
    (bad,) = [i for i, p in enumerate(plan.pieces) if any("part-4" in f for _, f, _ in p)]
    (folder / "part-4.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(db.SourceError, match=(rf"training data, partition {bad}: file "
                                              r"\S*part-4\.parquet is not a readable Parquet")):
        _compute(sources.read_parts(joined, True, "training data", None)[bad])


def test_a_file_changed_or_gone_since_the_first_read_is_named(folder):
    files = sources.FileIdentities()
    parts = sources.read_parts(_joined(folder), True, "eval_set[0]", files)
    _compute(parts[0])
    first = dask_internals.parquet_plan(_joined(folder)).pieces[0][0][1]
    FRAME.iloc[:100].assign(a=0.0).to_parquet(first)  # rewritten in place: other values
    with pytest.raises(db.SourceChangedError, match=(rf"eval_set\[0\], partition 0: file {first} "
                                                     r"changed while the fit was using it "
                                                     r"\(mtime_ns was \d+, now \d+[,)]")):
        _compute(parts[0])
    os.unlink(first)
    with pytest.raises(db.SourceChangedError, match=r"file \S+ changed .*\(it is gone\)"):
        _compute(parts[0])


def test_without_a_plan_partitions_are_dask_own():
    frame = dd.from_pandas(FRAME, npartitions=3)
    assert dask_internals.parquet_plan(frame) is None
    assert sources.apply_to_parts(frame, len, "X", lambda i: ("n", i)) is None
    parts = sources.read_parts(frame, True, "training data", sources.FileIdentities())
    assert [p.key for p in parts] == [p.key for p in frame.to_delayed()]


def test_no_plan_where_partitions_move_after_the_read(folder):
    ddf = dd.read_parquet(folder)
    assert dask_internals.parquet_plan(ddf.repartition(npartitions=2)) is None
    assert dask_internals.parquet_plan(ddf.partitions[3:], optimize=False) is None
    plan = dask_internals.parquet_plan(ddf.partitions[3:])  # pushed into the read
    assert plan.pieces[0][0][1].endswith("part-3.parquet") and plan.columns[-1] == "label"
    with dask.config.set({dask_internals.INTERNALS: False}):
        assert dask_internals.parquet_plan(ddf) is None


def test_prediction_from_parquet_equals_prediction_in_memory(folder, dask_client):
    model = db.GradientBoostingClassifier(n_estimators=5).fit(FRAME[["a", "b"]], FRAME["label"])
    X = dd.read_parquet(folder, columns=["a", "b"])
    lazy = model.predict_proba(X)
    assert lazy.name.startswith("distboost-predict-") and lazy.numblocks == (X.npartitions, 1)
    assert lazy.shape[1] == 2 and np.isnan(lazy.shape[0])
    np.testing.assert_array_equal(dask_client.compute(lazy).result(),
                                  model.predict_proba(FRAME[["a", "b"]]))
    shap = shap_values(model, X)  # the same per-partition reads (not computed: slow to compile)
    assert shap.name.startswith("distboost-shap-") and shap.shape[1:] == (3,)  # and the bias


def test_without_internals_prediction_errors_keep_their_partition(folder, dask_client):
    model = db.GradientBoostingRegressor(n_estimators=2).fit(FRAME[["a", "b"]], FRAME["label"])
    FRAME.iloc[500:600].assign(b="text").to_parquet(folder / "part-5.parquet")
    with dask.config.set({dask_internals.INTERNALS: False}):
        lazy = model.predict(dd.read_parquet(folder, columns=["a", "b"]))
        with pytest.raises(TypeError, match=(r"column 'b' has dtype \S+, which is neither "
                                             r"numeric nor categorical.* \[X, partition \d\]$")):
            dask_client.compute(lazy).result()
