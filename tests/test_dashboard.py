"""distboost.dashboard: the /distboost page of a real cluster started with the
preload, live during a fit; readable task prefixes; the pure fit view."""

import threading
import time
import urllib.request

from bokeh.client import pull_session

import distboost as db
from distboost.dashboard import PAGE, summary_html
from distboost.dashboard.fit_log import FitLog
from distboost.training.events import TOPIC


def url(client, path):
    return client.dashboard_link.replace("/status", path)


def status(client, path):
    with urllib.request.urlopen(url(client, path), timeout=30) as response:
        return response.status, response.read().decode()


def n_rounds_logged(client):
    return sum(e["kind"] == "round" for _, e in client.get_events(TOPIC))


def test_the_page_is_live_during_a_fit_and_holds_every_round(dashboard_client,
                                                           dask_classification):
    X, y, Xv, yv = dask_classification
    clf = db.GradientBoostingClassifier(n_estimators=60, max_depth=3, learning_rate=0.1,
                                        client=dashboard_client)
    before = n_rounds_logged(dashboard_client)
    fit = threading.Thread(target=clf.fit, args=(X, y), kwargs={"eval_set": [(Xv, yv)]})
    fit.start()
    deadline = time.monotonic() + 120
    while n_rounds_logged(dashboard_client) <= before + 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    during = [status(dashboard_client, p)[0] for p in (PAGE, "/status", "/events")]
    was_running = fit.is_alive()
    fit.join(timeout=300)
    assert during == [200, 200, 200] and was_running
    code, text = status(dashboard_client, "/status")
    assert code == 200 and 'href="distboost"' in text  # in the dashboard's menu
    with pull_session(url=url(dashboard_client, PAGE)) as session:
        doc = session.document
        curves = doc.select_one({"name": "distboost-curves"}).data
        rounds = doc.select_one({"name": "distboost-rounds"}).data
        summary = doc.select_one({"name": "distboost-summary"}).text
    (i,) = [k for k, label in enumerate(curves["label"]) if label == "validation_0 logloss"]
    assert list(curves["ys"][i]) == clf.evals_result_["validation_0"]["logloss"]
    assert list(curves["xs"][i]) == list(range(60)) == list(rounds["round"])
    assert all(t > 0 for t in rounds["round_time"]) and min(rounds["n_leaves"]) >= 2
    assert "GradientBoostingClassifier" in summary and "round 60 of 60" in summary


def test_adaboost_and_forest_curves(dashboard_client, dask_classification):
    X, y, _, _ = dask_classification
    ada = db.AdaBoostClassifier(n_estimators=4, client=dashboard_client).fit(X, y)
    with pull_session(url=url(dashboard_client, PAGE)) as session:
        extras = session.document.select_one({"name": "distboost-extras"}).data
        curves = session.document.select_one({"name": "distboost-curves"}).data
    assert list(extras["label"]) == ["estimator_weight"]
    assert list(extras["ys"][0]) == list(ada.estimator_weights_)
    assert list(curves["ys"][0]) == list(ada.estimator_errors_)
    db.RandomForestClassifier(n_estimators=5, max_depth=3, trees_per_pass=2,
                              client=dashboard_client).fit(X, y)
    with pull_session(url=url(dashboard_client, PAGE)) as session:
        extras = session.document.select_one({"name": "distboost-extras"}).data
    assert list(extras["ys"][0]) == [2, 4, 5]


def test_task_prefixes_are_readable(dashboard_client, dask_classification):
    """Dask's key_split drops words that look like hashes (8 letters a-f...):
    no distboost task may collapse to a bare "distboost" bar."""
    X, y, Xv, yv = dask_classification
    client = dashboard_client
    db.GradientBoostingClassifier(n_estimators=2, client=client).fit(X, y, eval_set=[(Xv, yv)])
    db.AdaBoostClassifier(n_estimators=2, client=client).fit(X, y)
    prefixes = client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.task_prefixes))
    ours = [p for p in prefixes if p.startswith("distboost")]
    # reading and binning are tasks (levels and rounds are holder calls, not tasks)
    for name in ("distboost-scan", "distboost-bin", "distboost-bin-eval", "distboost-group"):
        assert name in ours, ours
    assert "distboost" not in ours, ours


def _events(n, finished=False):
    start = {"fit": "f", "kind": "fit-start", "estimator": "GradientBoostingRegressor",
             "params": {"learning_rate": 0.1, "max_depth": 3, "dashboard_client": None},
             "n_rounds": 10, "first_round": 0}
    rounds = [{"fit": "f", "kind": "round", "round": r, "validation_0": {"rmse": 5.0 - r},
               "best_round": r, "elapsed": 2.0 * (r + 1), "round_time": 2.0, "n_trees": 1,
               "n_leaves": 8, "timings": {"kernels": 0.5, "round_start": 0.5, "histograms": 1.0}}
              for r in range(n)]
    end = [{"fit": "f", "kind": "fit-end", "n_rounds": n, "best_round": n - 1,
            "elapsed": 2.0 * n}] if finished else []
    return [(0.0, e) for e in [start, *rounds, *end]]


def test_fit_view_progress_time_split_and_summary():
    log = FitLog()
    for _, event in _events(4):
        log.add(event)
    view = log.fits["f"]
    assert log.version == 5
    assert view.progress() == {"round": 4, "n_rounds": 10, "elapsed": 8.0, "remaining": 12.0,
                               "best_round": 3, "finished": False}
    cols = view.per_round()
    assert (cols["compute"][0], cols["transfer"][0], cols["driver"][0]) == (0.5, 1.0, 0.5)
    assert view.curves() == {"validation_0 rmse": ([0, 1, 2, 3], [5.0, 4.0, 3.0, 2.0])}
    text = summary_html(view)
    assert "round 4 of 10" in text and "learning_rate=0.1" in text and "best round 3" in text
    for _, event in _events(5, finished=True)[-2:]:
        log.add(event)
    assert view.progress()["finished"] and view.progress()["remaining"] == 0.0
    assert [e["round"] for e in view.rounds] == [0, 1, 2, 3, 4]


def test_a_stall_shows_until_the_fit_moves_on():
    log = FitLog()
    for _, event in _events(2):
        log.add(event)
    view = log.fits["f"]
    log.add({"fit": "f", "kind": "stall", "what": "the wave 'histogram' of round 2",
             "idle": 61.0, "workers": ["tcp://w:1"],
             "message": "distboost: no progress for 61 s ... tcp://w:1: paused <memory>"})
    text = summary_html(view)
    assert "stalled:" in text and "tcp://w:1: paused &lt;memory&gt;" in text
    log.add(_events(3)[-1][1])  # round 2 arrives: the fit moved on
    assert view.stall is None and "stalled" not in summary_html(view)
