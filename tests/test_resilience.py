"""A worker that dies mid-training does not stop training, nor change the model."""

import os
import signal
import threading
import time

import dask.dataframe as dd
import numpy as np
import pandas as pd

import distboost as db


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
