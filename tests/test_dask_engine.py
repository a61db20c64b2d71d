"""Training on a real LocalCluster from real Parquet files."""

import asyncio
import gc
import subprocess
import sys
import textwrap
import threading
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db

N = 3000


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(N, 6))
    X[rng.random(X.shape) < 0.05] = np.nan
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(6)])
    df["kind"] = pd.Categorical(rng.choice(["a", "b", "c", "d"], N))
    logit = np.nan_to_num(X[:, 0]) * 2 - np.nan_to_num(X[:, 1]) ** 2 + df["kind"].isin(["b", "d"]) * 1.5
    df["label"] = (logit + rng.logistic(size=N) > 0).astype(int)
    df["target"] = logit + rng.normal(0, 0.3, N)
    df["cls"] = np.digitize(logit, [-1.0, 0.5])
    return df


def _write(df, path, n_parts):
    path.mkdir()
    for i, part in enumerate(np.array_split(np.arange(len(df)), n_parts)):
        df.iloc[part].to_parquet(path / f"part-{i:03d}.parquet")
    return str(path)


@pytest.fixture(scope="module")
def parquet_dirs(frame, tmp_path_factory):
    base = tmp_path_factory.mktemp("parquet")
    return {n: _write(frame, base / f"p{n}", n) for n in (1, 3, 8)}


FEATURES = [f"x{j}" for j in range(6)] + ["kind"]


def _same_model(a, b):
    assert len(a.trees_) == len(b.trees_)
    for ra, rb in zip(a.trees_, b.trees_):
        assert all(ta == tb for ta, tb in zip(ra, rb))
    np.testing.assert_array_equal(a.base_score_, b.base_score_)


@pytest.mark.parametrize("n_parts", [1, 3, 8])
def test_distributed_equals_in_process(frame, parquet_dirs, dask_client, n_parts):
    params = {"n_estimators": 8, "max_depth": 4, "subsample": 0.8, "colsample_bytree": 0.8, "random_state": 3}
    local = db.GradientBoostingClassifier(**params).fit(frame[FEATURES], frame["label"])
    ddf = dd.read_parquet(parquet_dirs[n_parts])
    dist = db.GradientBoostingClassifier(client=dask_client, **params).fit(ddf[FEATURES], ddf["label"])
    _same_model(local, dist)
    np.testing.assert_array_equal(local.predict_proba(frame[FEATURES]), dist.predict_proba(frame[FEATURES]))


def test_multiclass_and_regression_match_in_process(frame, parquet_dirs, dask_client):
    ddf = dd.read_parquet(parquet_dirs[3])
    for est, target in ((db.GradientBoostingClassifier, "cls"), (db.GradientBoostingRegressor, "target")):
        local = est(n_estimators=4, max_depth=None, max_leaf_nodes=9).fit(frame[FEATURES], frame[target])
        dist = est(n_estimators=4, max_depth=None, max_leaf_nodes=9, client=dask_client).fit(
            ddf[FEATURES], ddf[target])
        _same_model(local, dist)


def test_one_worker_equals_two_workers(frame, parquet_dirs, dask_client):
    from distributed import Client, LocalCluster

    ddf = dd.read_parquet(parquet_dirs[8])
    two = db.GradientBoostingRegressor(n_estimators=5, client=dask_client).fit(ddf[FEATURES], ddf["target"])
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        one = db.GradientBoostingRegressor(n_estimators=5, client=client).fit(ddf[FEATURES], ddf["target"])
    _same_model(one, two)


def test_partitions_persisted_on_one_worker_are_held_evenly(frame, parquet_dirs, dask_client):
    """8 partitions persisted on one of the two workers: the binned partitions
    move so that each holder keeps half the rows, and the model is the in-process one."""
    from distributed import wait

    workers = sorted(dask_client.scheduler_info()["workers"])
    ddf = dask_client.persist(dd.read_parquet(parquet_dirs[8]), workers=workers[:1])
    with dask_client.as_current():
        wait(ddf)
    assert {w for ws in dask_client.who_has(ddf).values() for w in ws} == {workers[0]}
    params = {"n_estimators": 4, "max_depth": 3}
    dist = db.GradientBoostingRegressor(client=dask_client, **params).fit(ddf[FEATURES],
                                                                           ddf["target"])
    rows = {p["worker"]: p["memory_rows"] for p in dist.data_placement_}
    assert sorted(rows) == workers and rows[workers[0]] == rows[workers[1]] == len(frame) // 2
    local = db.GradientBoostingRegressor(**params).fit(frame[FEATURES], frame["target"])
    _same_model(local, dist)
    # out of core, memory is short somewhere: the rows stay on the worker's disk that binned them
    on_disk = db.GradientBoostingRegressor(client=dask_client, out_of_core=True, **params).fit(
        ddf[FEATURES], ddf["target"])
    assert [(p["worker"], p["disk_rows"]) for p in on_disk.data_placement_] == [
        (workers[0], len(frame))]
    _same_model(local, on_disk)


def test_weights_eval_set_and_early_stopping_on_dask(frame, parquet_dirs, dask_client):
    ddf = dd.read_parquet(parquet_dirs[3])
    ddf = ddf.assign(w=ddf["x2"].abs().fillna(1.0) + 0.5)
    train, valid = frame.iloc[:2000], frame.iloc[2000:]
    w = (frame["x2"].abs().fillna(1.0) + 0.5).to_numpy()
    dtrain = ddf.partitions[:2]
    dvalid = ddf.partitions[2:]
    params = {"n_estimators": 200, "learning_rate": 0.5, "max_depth": 5}
    local = db.GradientBoostingClassifier(**params).fit(
        train[FEATURES], train["label"], sample_weight=w[:2000],
        eval_set=[(valid[FEATURES], valid["label"])], early_stopping_rounds=4)
    dist = db.GradientBoostingClassifier(client=dask_client, **params).fit(
        dtrain[FEATURES], dtrain["label"], sample_weight=dtrain["w"],
        eval_set=[(dvalid[FEATURES], dvalid["label"])], early_stopping_rounds=4)
    assert dist.best_iteration_ == local.best_iteration_ < 199
    assert dist.evals_result_ == local.evals_result_
    _same_model(local, dist)


def test_prediction_is_lazy_and_partitionwise(frame, parquet_dirs, dask_client):
    import dask.array as da

    ddf = dd.read_parquet(parquet_dirs[3])
    clf = db.GradientBoostingClassifier(n_estimators=3, client=dask_client).fit(ddf[FEATURES], ddf["label"])
    proba = clf.predict_proba(ddf[FEATURES])
    labels = clf.predict(ddf[FEATURES])
    assert isinstance(proba, da.Array) and isinstance(labels, da.Array)
    assert "distboost" in proba.name and "distboost" in labels.name  # graph named for the dashboard
    np.testing.assert_array_equal(dask_client.compute(proba).result(), clf.predict_proba(frame[FEATURES]))
    np.testing.assert_array_equal(dask_client.compute(labels).result(), clf.predict(frame[FEATURES]))
    # Dask arrays work too, for training and prediction
    X = da.from_array(frame[[f"x{j}" for j in range(6)]].to_numpy(), chunks=(1000, 3))
    y = da.from_array(frame["target"].to_numpy(), chunks=1000)
    reg = db.GradientBoostingRegressor(n_estimators=3, client=dask_client).fit(X, y)
    local = db.GradientBoostingRegressor(n_estimators=3).fit(X.compute(), y.compute())
    _same_model(reg, local)
    np.testing.assert_array_equal(dask_client.compute(reg.predict(X)).result(), local.predict(X.compute()))


def test_tasks_are_named_and_levels_are_actor_calls(frame, parquet_dirs, dask_client):
    from distributed import get_task_stream

    ddf = dd.read_parquet(parquet_dirs[3])
    with get_task_stream(client=dask_client) as ts:
        db.GradientBoostingRegressor(n_estimators=3, max_depth=3, client=dask_client).fit(
            ddf[FEATURES], ddf["target"])
    groups = {k[0] if isinstance(k, tuple) else k for k in (t["key"] for t in ts.data)}
    for name in ("distboost-scan-r0", "distboost-bin-r0", "distboost-group-r0"):
        assert name in groups, sorted(groups)
    # rounds and levels run as actor calls, not tasks: no task per wave
    assert not [g for g in groups if "histogram" in g or "round-start" in g], sorted(groups)
    events = [e for _, e in dask_client.get_events("distboost")]
    fit = events[-1]["fit"]
    assert [e["round"] for e in events if e["fit"] == fit and e["kind"] == "round"] == [0, 1, 2]


def test_client_without_direct_connections_to_workers(frame, parquet_dirs, dask_client):
    """Holder calls then go through the scheduler; same model."""
    from distributed import Client

    ddf = dd.read_parquet(parquet_dirs[3])
    params = {"n_estimators": 3, "max_depth": 3}
    local = db.GradientBoostingRegressor(**params).fit(frame[FEATURES], frame["target"])
    with Client(dask_client.scheduler.address, direct_to_workers=False,
                set_as_default=False) as relayed:
        dist = db.GradientBoostingRegressor(client=relayed, **params).fit(
            ddf[FEATURES], ddf["target"])
    _same_model(local, dist)


def test_fit_inside_a_running_event_loop(frame, parquet_dirs, dask_client, caplog):
    """A notebook runs its cells inside an event loop: the waves then go through
    the client's loop (the executor cannot run its own there); same model, and
    no connection is left open after either fit."""
    ddf = dd.read_parquet(parquet_dirs[3])
    params = {"n_estimators": 3, "max_depth": 3}
    local = db.GradientBoostingRegressor(**params).fit(frame[FEATURES], frame["target"])

    async def in_a_cell():
        return db.GradientBoostingRegressor(client=dask_client, **params).fit(ddf[FEATURES], ddf["target"])

    with caplog.at_level("WARNING", logger="distributed"):
        _same_model(local, asyncio.run(in_a_cell()))
        _same_model(local, db.GradientBoostingRegressor(client=dask_client, **params).fit(
            ddf[FEATURES], ddf["target"]))
        gc.collect()
    assert "dangling" not in caplog.text


def _worker_holdings(dask_worker):
    return sorted(map(str, dask_worker.data)), len(dask_worker.state.actors)


def _settled(client):
    """Worker holdings once no holder of an earlier fit is left (releases are asynchronous)."""
    import time

    deadline = time.monotonic() + 10
    while any(n for _, n in client.run(_worker_holdings).values()):
        assert time.monotonic() < deadline, client.run(_worker_holdings)
        time.sleep(0.05)
    return client.run(_worker_holdings)


def test_workers_keep_one_holder_and_no_partitions_while_training(parquet_dirs, dask_client):
    ddf = dd.read_parquet(parquet_dirs[8])
    before = _settled(dask_client)
    during = []

    def look(r, *_):
        if r == 1:
            during.append(dask_client.run(_worker_holdings))

    db.GradientBoostingRegressor(n_estimators=3, client=dask_client).fit(
        ddf[FEATURES], ddf["target"], callbacks=[look])
    for worker, (keys, n_actors) in during[0].items():
        assert set(keys) <= set(before[worker][0]), keys  # shards and source partitions released
        assert n_actors == 1  # its holder
    assert _settled(dask_client) == before  # the fit's holders went with it


def _refuse(state, message):
    raise ValueError(message)


def test_an_error_in_a_holder_reaches_the_caller(frame, dask_client):
    from distboost.engine import Engine, plan

    ddf = dd.from_pandas(frame, npartitions=2)
    given = plan(ddf[FEATURES], ddf["target"], client=dask_client)
    ex = given.executor
    engine = Engine(ex)
    engine.prepare(given, True, 255)
    with pytest.raises(ValueError, match="no thanks"):
        engine.apply(_refuse, "refuse", "no thanks")
    assert len(engine.groups) == 2  # not mistaken for lost holders
    assert not any(n for _, n in _settled(dask_client).values())  # the failed fit's holders went


def _thread(state, seconds):
    time.sleep(seconds)
    return state, threading.current_thread().name


def test_short_waves_run_on_the_workers_event_loops(frame, dask_client):
    from distboost.engine import Engine, plan
    from distboost.engine.transport import LOOP_CALL_SECONDS

    ddf = dd.from_pandas(frame, npartitions=2)
    given = plan(ddf[FEATURES], ddf["target"], client=dask_client)
    ex = given.executor
    engine = Engine(ex)
    engine.prepare(given, True, 255)
    try:
        threads = [engine.apply(_thread, "probe", s) for s in (0, 0, LOOP_CALL_SECONDS + 0.05, 0)]
    finally:
        ex.close()
    where = [{"loop" if name == "MainThread" else "thread" for name in names} for names in threads]
    # a wave's first call runs in a thread, calls after a short one on the workers'
    # event loops (their main threads), a call after a long one in a thread again
    assert where == [{"thread"}, {"loop"}, {"loop"}, {"thread"}]


# ------------------------------------------------------------------ bad input
def test_error_without_a_client(parquet_dirs):
    code = textwrap.dedent(f"""
        import dask.dataframe as dd, distboost as db
        ddf = dd.read_parquet({parquet_dirs[1]!r})
        try:
            db.GradientBoostingClassifier().fit(ddf[["x0"]], ddf["label"])
        except ValueError as e:
            print("ERR", e)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         check=False)
    assert "ERR training data is a Dask collection but no Dask client is active" in out.stdout


def test_empty_partition_is_named(frame, dask_client):
    ddf = dd.from_pandas(frame, npartitions=3)  # rows 0-999, 1000-1999, 2000-2999
    ddf = ddf.map_partitions(lambda p: p[(p.index < 1000) | (p.index >= 2000)], meta=ddf._meta)
    with pytest.raises(ValueError, match="partition 1 is empty"):
        db.GradientBoostingClassifier(client=dask_client).fit(ddf[FEATURES], ddf["label"])


def test_nan_target_names_its_partition(frame, dask_client):
    bad = frame.copy()
    bad.loc[2500, "target"] = np.nan
    ddf = dd.from_pandas(bad, npartitions=3)
    with pytest.raises(ValueError, match=r"target in partition 2 has 1 missing or infinite"):
        db.GradientBoostingRegressor(client=dask_client).fit(ddf[FEATURES], ddf["target"])


def test_missing_column_and_unseen_class_on_dask(frame, dask_client):
    ddf = dd.from_pandas(frame, npartitions=2)
    clf = db.GradientBoostingClassifier(n_estimators=2, client=dask_client).fit(ddf[FEATURES], ddf["label"])
    with pytest.raises(ValueError, match=r"missing feature column\(s\) \['kind'\]"):
        clf.predict(ddf[FEATURES[:-1]])  # refused from the metadata, before any task
    odd = frame.assign(label=frame["label"].where(frame.index < 2900, 5))
    dodd = dd.from_pandas(odd, npartitions=2)
    with pytest.raises(ValueError, match=r"eval_set\[0\] in partition 1 has label\(s\) \[5\]"):
        db.GradientBoostingClassifier(client=dask_client).fit(
            ddf[FEATURES], ddf["label"], eval_set=[(dodd[FEATURES], dodd["label"])])


def test_non_numeric_column_on_dask(frame, dask_client):
    ddf = dd.from_pandas(frame.assign(city="Seoul"), npartitions=2)
    with pytest.raises(TypeError, match="column 'city'"):
        db.GradientBoostingClassifier(client=dask_client).fit(ddf[FEATURES + ["city"]], ddf["label"])


def test_the_driver_finds_splits_on_one_thread_unless_told(frame, parquet_dirs, dask_client):
    """On Dask the driver's kernels are small: n_jobs=None means one thread there
    (idle OpenMP threads spinning would take CPU from workers on the same machine);
    in process it means numba's default, and an explicit n_jobs is kept."""
    import numba

    from distboost.callbacks import TrainingCallback

    class Threads(TrainingCallback):
        def __init__(self):
            self.seen = set()

        def after_iteration(self, model, epoch, evals_log):
            self.seen.add(numba.get_num_threads())
            return False

    ddf = dd.read_parquet(parquet_dirs[3])
    default = numba.config.NUMBA_NUM_THREADS
    for n_jobs, data, want in ((None, ddf, 1), (2, ddf, min(2, default)),
                               (None, frame, default)):
        seen = Threads()
        db.GradientBoostingClassifier(n_estimators=2, n_jobs=n_jobs, client=dask_client).fit(
            data[FEATURES], data["label"], callbacks=[seen])
        assert seen.seen == {want}
    assert numba.get_num_threads() == default


def test_array_fitted_model_predicts_a_dask_frame_by_position(frame, dask_client):
    """Fitted on an array, a model takes a DataFrame's columns by position, whatever
    their names: in memory and on Dask alike."""
    numeric = FEATURES[:-1]
    model = db.GradientBoostingClassifier(n_estimators=3).fit(frame[numeric].to_numpy(),
                                                               frame["label"])
    renamed = frame[numeric].set_axis([f"other{j}" for j in range(len(numeric))], axis=1)
    lazy = model.predict_proba(dd.from_pandas(renamed, npartitions=3))
    np.testing.assert_array_equal(lazy.compute(), model.predict_proba(renamed))
