"""Round events on a real LocalCluster: one per round on the ``distboost``
topic with that round's own named metrics (those of ``evals_result_``), and a
dashboard whose ``/events`` and ``/status`` pages still answer."""

import threading
import urllib.request
import uuid

import numpy as np
import pytest

import distboost as db
from distboost.training.booster import round_metrics
from distboost.training.events import TOPIC, Outbox


def fit_events(client, kind=None):
    """The events of the client's last fit (of ``kind`` if given)."""
    events = [e for _, e in client.get_events(TOPIC)]
    last = [e for e in events if e["kind"] == "fit-start"][-1]["fit"]
    return [e for e in events if e["fit"] == last and kind in (None, e["kind"])]


def get(client, path):
    with urllib.request.urlopen(client.dashboard_link.replace("/status", path), timeout=30) as r:
        return r.status


def test_named_metrics_follow_evals_result():
    assert round_metrics(["rmse"], [1.5], [[2.0], [3.0]]) == {
        "training": {"rmse": 1.5},
        "validation_0": {"rmse": 2.0},
        "validation_1": {"rmse": 3.0},
    }
    assert round_metrics(["rmse"], None, []) == {}
    assert round_metrics(["rmse", "mae"], None, [[2.0, 1.0]]) == {
        "validation_0": {"rmse": 2.0, "mae": 1.0}}


def test_one_event_per_round_with_its_own_metrics(dashboard_client, dask_classification):
    X, y, Xv, yv = dask_classification
    clf = db.GradientBoostingClassifier(n_estimators=6, max_depth=2, verbose=1,
                                        client=dashboard_client)
    clf.fit(X, y, eval_set=[(Xv, yv)])
    events = fit_events(dashboard_client)
    start, *rounds, end = events
    assert start["kind"] == "fit-start" and end["kind"] == "fit-end"
    assert start["estimator"] == "GradientBoostingClassifier" and start["metric"] == "logloss"
    assert start["params"]["max_depth"] == 2 and start["n_rounds"] == 6
    assert [e["round"] for e in rounds] == list(range(6))
    for r, event in enumerate(rounds):
        for name, metrics in clf.evals_result_.items():
            assert event[name] == {"logloss": metrics["logloss"][r]}, (r, name)
        assert event["n_trees"] == 1
        assert event["n_leaves"] == clf.trees_[r][0].nodes["is_leaf"].sum() >= 2
        assert event["round_time"] > 0 and event["timings"]["kernels"] > 0
    assert rounds[-1]["elapsed"] <= end["elapsed"] and end["n_rounds"] == 6
    best = int(np.argmin(clf.evals_result_["validation_0"]["logloss"]))
    assert rounds[-1]["best_round"] == best
    assert get(dashboard_client, "/events") == 200
    assert get(dashboard_client, "/status") == 200
    # the dashboard's own topic only holds what its page can draw
    assert all("action" in e for _, e in dashboard_client.get_events("all"))


def test_early_stopping_and_continued_rounds(dashboard_client, dask_classification):
    X, y, Xv, yv = dask_classification
    first = db.GradientBoostingClassifier(n_estimators=3, max_depth=2, client=dashboard_client)
    first.fit(X, y, eval_set=[(Xv, yv)])
    more = db.GradientBoostingClassifier(n_estimators=40, learning_rate=1.0, max_depth=3,
                                         client=dashboard_client)
    more.fit(X, y, eval_set=[(Xv, yv)], early_stopping_rounds=2, init_model=first)
    start, *rounds, end = fit_events(dashboard_client)
    assert start["first_round"] == 3 and start["n_rounds"] == 43
    history = more.evals_result_["validation_0"]["logloss"]  # the continued model's first
    assert history[:3] == first.evals_result_["validation_0"]["logloss"]
    ran = history[3:]
    assert [e["round"] for e in rounds] == list(range(3, 3 + len(ran))) and len(ran) < 40
    assert [e["validation_0"]["logloss"] for e in rounds] == ran
    assert end["n_rounds"] == more.n_estimators_ == more.best_iteration_ + 1
    assert rounds[-1]["best_round"] == more.best_iteration_


def test_adaboost_rounds_carry_error_and_alpha(dashboard_client, dask_classification):
    X, y, _, _ = dask_classification
    clf = db.AdaBoostClassifier(n_estimators=5, client=dashboard_client).fit(X, y)
    rounds = fit_events(dashboard_client, "round")
    assert [e["training"]["weighted_error"] for e in rounds] == list(clf.estimator_errors_)
    assert [e["estimator_weight"] for e in rounds] == list(clf.estimator_weights_)
    assert [e["n_leaves"] for e in rounds] == [2] * 5


def test_forest_batches_report_trees_and_oob(dashboard_client, dask_classification):
    X, y, _, _ = dask_classification
    forest = db.RandomForestClassifier(n_estimators=6, max_depth=3, trees_per_pass=4,
                                       oob_score=True, client=dashboard_client).fit(X, y)
    rounds = fit_events(dashboard_client, "round")
    assert [e["trees_grown"] for e in rounds] == [4, 6]
    assert [e["round"] for e in rounds] == [3, 5] and [e["n_trees"] for e in rounds] == [4, 2]
    (end,) = fit_events(dashboard_client, "fit-end")
    assert end["oob_score"] == forest.oob_score_ and end["n_rounds"] == 6


def test_in_process_fits_log_nothing(dashboard_client):
    before = len(dashboard_client.get_events(TOPIC))
    X = np.random.default_rng(1).normal(size=(200, 3))
    db.GradientBoostingRegressor(n_estimators=3).fit(X, X[:, 0])
    assert len(dashboard_client.get_events(TOPIC)) == before


def test_the_outbox_keeps_the_order_and_raises_a_failed_send(dashboard_client):
    """Events are sent without waiting, in the order posted; one that could
    not be sent raises at the flush and at every post after it."""
    topic = f"outbox-{uuid.uuid4().hex[:8]}"
    box = Outbox(dashboard_client, topic)
    for i in range(300):
        box.post({"i": i})
    box.flush()
    assert [e["i"] for _, e in dashboard_client.get_events(topic)] == list(range(300))
    box.post({"i": threading.Lock()})  # cannot be serialized: cannot be sent
    with pytest.raises(TypeError):
        box.flush()
    with pytest.raises(TypeError):
        box.post({"i": 301})
    assert len(dashboard_client.get_events(topic)) == 300
