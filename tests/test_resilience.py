"""A worker that dies mid-training does not stop training, nor change the model."""

import os
import signal
import threading
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine import Engine


def test_killed_worker_mid_training_gives_the_same_model():
    from distributed import Client, LocalCluster

    rng = np.random.default_rng(0)
    X = rng.normal(size=(20000, 8))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.logistic(size=20000) > 1).astype(int)
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(8)]).assign(label=y)
    params = {"n_estimators": 40, "max_depth": 4}
    local = db.GradientBoostingClassifier(**params).fit(df.drop(columns="label"), df["label"])
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        ddf = dd.from_pandas(df, npartitions=6)
        victim = next(iter(client.run(os.getpid).values()))
        rounds = []

        def kill_after_round(r, *_):
            rounds.append(r)
            if r == 10:
                threading.Thread(target=os.kill, args=(victim, signal.SIGKILL)).start()
                time.sleep(0.5)

        dist = db.GradientBoostingClassifier(client=client, **params).fit(
            ddf.drop(columns="label"), ddf["label"], callbacks=[kill_after_round])
        assert victim not in client.run(os.getpid).values()  # the worker really died
    assert rounds == list(range(40))
    assert all(a[0] == b[0] for a, b in zip(local.trees_, dist.trees_))


# ------------------------------------------------- kills at other moments
@pytest.fixture(scope="module")
def cluster_client():
    """Its own two-worker cluster: these tests kill workers (the nanny restarts them)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6000, 6))
    y = (X[:, 0] - X[:, 1] ** 2 + rng.logistic(size=6000) > 0).astype(int)
    return pd.DataFrame(X, columns=[f"x{i}" for i in range(6)]).assign(
        label=y, target=X[:, 0] * 2 + np.abs(X[:, 2]) + rng.standard_t(2, size=6000))


def _kill(client, address):
    """SIGKILL the worker at ``address``; return once the scheduler has lost it."""
    pid = client.run(os.getpid, workers=[address])[address]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while address in client.scheduler_info()["workers"]:
        assert time.monotonic() < deadline, "the killed worker is still registered"
        time.sleep(0.05)


def test_killed_worker_during_binning_gives_the_same_model(data, cluster_client, tmp_path):
    """A worker dies while it reads a partition for binning (its second read, after the scan)."""
    features = [f"x{i}" for i in range(6)]
    params = {"n_estimators": 6, "max_depth": 3}
    local = db.GradientBoostingClassifier(**params).fit(data[features], data["label"])
    reads = tmp_path / "reads"

    def read_and_maybe_die(part):
        if part.index[0] == 0:  # the first partition: count its reads, die on the second
            with open(reads, "a") as f:
                f.write(f"{os.getpid()}\n")
            if len(reads.read_text().split()) == 2:
                os.kill(os.getpid(), signal.SIGKILL)
        return part

    ddf = dd.from_pandas(data, npartitions=4).map_partitions(read_and_maybe_die)
    before = set(cluster_client.run(os.getpid).values())
    dist = db.GradientBoostingClassifier(client=cluster_client, **params).fit(
        ddf[features], ddf["label"])
    pids = reads.read_text().split()
    assert len(pids) >= 3 and int(pids[1]) in before  # scan, killed bin, bin again
    assert int(pids[1]) not in cluster_client.run(os.getpid).values()
    assert all(a[0] == b[0] for a, b in zip(local.trees_, dist.trees_))


class _KillBefore:
    """Wraps ``Engine.level`` (or ``Engine.apply``, counting only the passes
    whose name holds ``name``): before call ``n`` (counted from 1), call
    ``before()`` if given, then kill a holder's worker."""

    def __init__(self, client, n, method="level", name="", before=None):
        self.client, self.n, self.calls, self.killed = client, n, 0, None
        self.method, self.name, self.before = method, name, before

    def install(self, monkeypatch):
        original = getattr(Engine, self.method)

        def wrapped(engine, *args):
            if self.method == "level" or self.name in args[1]:
                self.calls += 1
                if self.calls == self.n:
                    if self.before is not None:
                        self.before()
                    self.killed = engine.ex.groups[0].address
                    _kill(self.client, self.killed)
            return original(engine, *args)

        monkeypatch.setattr(Engine, self.method, wrapped)


def test_killed_worker_mid_round_gives_the_same_model_with_eval_set(data, cluster_client,
                                                                  monkeypatch):
    """Killed between two levels of round 3: the new holder replays the round's start
    (and the line searches and evaluations before it), then routes rows to this level."""
    features = [f"x{i}" for i in range(6)]
    train, valid = data.iloc[:4500], data.iloc[4500:]
    params = {"n_estimators": 8, "max_depth": 3, "loss": "huber", "subsample": 0.7,
              "random_state": 2}
    local = db.GradientBoostingRegressor(**params).fit(
        train[features], train["target"], eval_set=[(valid[features], valid["target"])])
    dtrain = dd.from_pandas(train, npartitions=4)
    dvalid = dd.from_pandas(valid, npartitions=2)
    kill = _KillBefore(cluster_client, n=3 * 3 + 2)
    kill.install(monkeypatch)
    dist = db.GradientBoostingRegressor(client=cluster_client, **params).fit(
        dtrain[features], dtrain["target"], eval_set=[(dvalid[features], dvalid["target"])])
    assert kill.killed is not None
    assert kill.killed not in cluster_client.scheduler_info()["workers"]
    assert all(a[0] == b[0] for a, b in zip(local.trees_, dist.trees_))
    assert dist.evals_result_ == local.evals_result_
    deadline = time.monotonic() + 10  # the rebuilt holders go with the fit too
    while any(cluster_client.run(_n_actors).values()):
        assert time.monotonic() < deadline, cluster_client.run(_n_actors)
        time.sleep(0.05)


def _n_actors(dask_worker):
    return len(dask_worker.state.actors)


def test_killed_worker_mid_search_replays_the_searchs_cache(data, cluster_client, monkeypatch):
    """Killed between passes of round 2's exact quantile search (absolute error's
    leaf medians): the new holder replays the rows, then the round's passes so
    far (the search's cached values), and the search goes on."""
    features = [f"x{i}" for i in range(6)]
    params = {"n_estimators": 4, "max_depth": 2, "loss": "absolute_error", "random_state": 0}
    local = db.GradientBoostingRegressor(**params).fit(data[features], data["target"])
    ddf = dd.from_pandas(data, npartitions=4)
    kill = _KillBefore(cluster_client, n=2, method="apply", name="-refine")
    kill.install(monkeypatch)
    dist = db.GradientBoostingRegressor(client=cluster_client, **params).fit(
        ddf[features], ddf["target"])
    assert kill.killed is not None
    assert all(a[0] == b[0] for a, b in zip(local.trees_, dist.trees_))
    np.testing.assert_array_equal(local.predict(data[features]), dist.predict(data[features]))


@pytest.mark.parametrize("make", [
    lambda **kw: db.AdaBoostClassifier(n_estimators=6, max_depth=2, **kw),
    lambda **kw: db.RandomForestClassifier(n_estimators=12, max_depth=4, oob_score=True,
                                           trees_per_pass=4, random_state=0, **kw),
], ids=["adaboost", "forest"])
def test_killed_worker_mid_fit_ensembles(data, cluster_client, monkeypatch, make):
    """The replayed history holds each learner's own passes (weights, out-of-bag sums)."""
    features = [f"x{i}" for i in range(6)]
    local = make().fit(data[features], data["label"])
    ddf = dd.from_pandas(data, npartitions=4)
    kill = _KillBefore(cluster_client, n=5)
    kill.install(monkeypatch)
    dist = make(client=cluster_client).fit(ddf[features], ddf["label"])
    assert kill.killed is not None
    np.testing.assert_array_equal(local.predict_proba(data[features]),
                                  dist.predict_proba(data[features]))
    for name in ("estimator_weights_", "oob_decision_function_"):
        if hasattr(local, name):
            np.testing.assert_array_equal(getattr(local, name), getattr(dist, name))


def test_a_source_file_changed_before_a_rebuild_stops_the_fit_naming_it(data, cluster_client,
                                                                       monkeypatch, tmp_path):
    """Parquet files rewritten mid-fit, then a worker lost: the rebuild's re-read
    finds its file changed and the fit stops, naming it, instead of training the
    lost rows on other data."""
    features = [f"x{i}" for i in range(6)]

    def write(shift):
        for i, rows in enumerate(np.array_split(np.arange(len(data)), 4)):
            part = data.iloc[rows].assign(x0=data["x0"].iloc[rows] + shift)
            part.to_parquet(tmp_path / f"part-{i}.parquet")

    write(0.0)
    ddf = dd.read_parquet(tmp_path)
    kill = _KillBefore(cluster_client, n=4, before=lambda: write(1.0))
    kill.install(monkeypatch)
    with pytest.raises(db.SourceChangedError,
                       match=(r"training data, partition \d+: file \S*part-\d\.parquet changed "
                              r"while the fit was using it \(.*mtime_ns was \d+, now \d+.*\)\. "
                              r"The fit noted the file when it started")):
        db.GradientBoostingClassifier(client=cluster_client, n_estimators=6, max_depth=3).fit(
            ddf[features], ddf["label"])
    assert kill.killed is not None
