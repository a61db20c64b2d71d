"""Training callbacks: ``after_iteration`` sees the model of the rounds so far,
``TrainingCheckPoint`` saves it, and a checkpoint continued with ``init_model``
gives the model an uninterrupted fit gives."""

import numpy as np
import pandas as pd
import pytest

from distboost import GradientBoostingClassifier, GradientBoostingRegressor, load_model
from distboost.callbacks import TrainingCallback, TrainingCheckPoint

rng = np.random.default_rng(1)
X = pd.DataFrame(rng.normal(size=(600, 4)), columns=["a", "b", "c", "d"])
X.loc[::9, "b"] = np.nan
Y = X["a"] + np.sin(2 * X["c"]) + rng.normal(scale=0.3, size=600)
LABELS = (Y > 0.2).astype(int)
EVAL = [(X.iloc[:150], LABELS.iloc[:150])]
PARAMS = {"max_depth": 3, "learning_rate": 0.3, "subsample": 0.8, "random_state": 3}


def same_trees(a, b):
    assert len(a.trees_) == len(b.trees_)
    assert all(ta == tb for ra, rb in zip(a.trees_, b.trees_) for ta, tb in zip(ra, rb))


class Recorder(TrainingCallback):
    """Keeps what each call saw, and stops after ``stop_at`` (an epoch)."""

    def __init__(self, stop_at=None):
        self.calls, self.stop_at = [], stop_at

    def after_iteration(self, model, epoch, evals_log):
        self.calls.append((epoch, len(model.trees_), model.predict_proba(X)[:, 1],
                           len(evals_log["validation_0"]["logloss"])))
        return epoch == self.stop_at


def test_after_iteration_sees_the_model_of_the_rounds_so_far():
    recorder = Recorder()
    est = GradientBoostingClassifier(n_estimators=5, **PARAMS)
    est.fit(X, LABELS, eval_set=EVAL, callbacks=[recorder])
    assert [c[0] for c in recorder.calls] == [0, 1, 2, 3, 4]
    assert [c[1] for c in recorder.calls] == [1, 2, 3, 4, 5]  # rounds 0 .. epoch
    assert [c[3] for c in recorder.calls] == [1, 2, 3, 4, 5]  # this fit's metrics so far
    for epoch, _, proba, _ in recorder.calls:
        shorter = GradientBoostingClassifier(n_estimators=epoch + 1, **PARAMS).fit(X, LABELS)
        np.testing.assert_array_equal(proba, shorter.predict_proba(X)[:, 1])


def test_the_estimator_being_fitted_changes_only_when_fit_returns():
    est = GradientBoostingClassifier(n_estimators=4, **PARAMS)
    seen = []

    class Look(TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            seen.append((model is est, hasattr(est, "trees_")))
            return False

    est.fit(X, LABELS, callbacks=[Look()])
    assert seen == [(False, False)] * 4
    assert len(est.trees_) == 4


def test_a_callback_object_stops_training_and_functions_still_work():
    recorder, rounds = Recorder(stop_at=2), []
    est = GradientBoostingClassifier(n_estimators=10, **PARAMS)
    est.fit(X, LABELS, eval_set=EVAL, callbacks=[lambda r, tm, ev: rounds.append(r), recorder])
    assert rounds == [0, 1, 2] and len(recorder.calls) == 3
    assert len(est.trees_) == 3  # rounds so far kept (no early stopping asked)


def test_checkpoints_fall_on_the_interval_and_load(tmp_path):
    est = GradientBoostingRegressor(n_estimators=7, **PARAMS)
    est.fit(X, Y, callbacks=[TrainingCheckPoint(tmp_path, interval=3)])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model-00003.json", "model-00006.json"]
    six = load_model(tmp_path / "model-00006.json")
    same_trees(six, GradientBoostingRegressor(n_estimators=6, **PARAMS).fit(X, Y))
    np.testing.assert_array_equal(six.base_score_, est.base_score_)


def test_continuing_a_checkpoint_gives_the_uninterrupted_model(tmp_path):
    """The resume of a crashed run: rounds numbered across fits, same draws."""
    whole = GradientBoostingClassifier(n_estimators=9, **PARAMS)
    whole.fit(X, LABELS, eval_set=EVAL, callbacks=[TrainingCheckPoint(tmp_path, "run", 4)])
    later = tmp_path / "later"
    rest = GradientBoostingClassifier(n_estimators=5, **PARAMS)
    rest.fit(X, LABELS, eval_set=EVAL, init_model=tmp_path / "run-00004.json",
             callbacks=[TrainingCheckPoint(later, "run", 4)])
    same_trees(rest, whole)
    assert [p.name for p in later.iterdir()] == ["run-00008.json"]  # global rounds
    same_trees(load_model(later / "run-00008.json"), load_model(tmp_path / "run-00008.json"))
    assert rest.evals_result_ == whole.evals_result_  # the checkpoint's history carried on


def test_checkpoints_with_early_stopping_keep_every_round_so_far(tmp_path):
    est = GradientBoostingClassifier(n_estimators=200, max_depth=6, learning_rate=1.0,
                                     random_state=0)
    est.fit(X, LABELS, eval_set=EVAL, early_stopping_rounds=3,
            callbacks=[TrainingCheckPoint(tmp_path, interval=1)])
    last = max(tmp_path.iterdir())
    assert len(load_model(last).trees_) == est.best_iteration_ + 1 + 3  # up to the stop
    assert len(est.trees_) == est.best_iteration_ + 1


def test_checkpoint_on_dask(tmp_path, dask_client):
    import dask.dataframe as dd

    ddf = dd.from_pandas(X.assign(y=LABELS), npartitions=3)
    est = GradientBoostingClassifier(n_estimators=4, client=dask_client, **PARAMS)
    est.fit(ddf.drop(columns="y"), ddf["y"], callbacks=[TrainingCheckPoint(tmp_path, interval=2)])
    two = load_model(tmp_path / "model-00002.json")
    np.testing.assert_array_equal(two.predict_proba(X),
                                  GradientBoostingClassifier(n_estimators=2, **PARAMS)
                                  .fit(X, LABELS).predict_proba(X))


def test_bad_callbacks_are_refused():
    with pytest.raises(TypeError, match="TrainingCallback objects or callables"):
        GradientBoostingRegressor(n_estimators=2).fit(X, Y, callbacks=[object()])
    with pytest.raises(ValueError, match="interval must be an int >= 1; got 0"):
        TrainingCheckPoint("somewhere", interval=0)


@pytest.mark.parametrize("back", [0, 2, 5, 30])
def test_early_stopping_spans_a_continued_fit(tmp_path, back):
    """A fit continued from any checkpoint, with the same early stopping, ends
    with the uninterrupted fit's model: its best round, trees and history,
    including when the checkpoint's rounds already exhausted the patience (no
    round is added) or the best round is among them (trees are cut there)."""
    params = dict(PARAMS, learning_rate=1.0, max_depth=6)
    whole = GradientBoostingClassifier(n_estimators=40, **params)
    whole.fit(X, LABELS, eval_set=EVAL, early_stopping_rounds=3,
              callbacks=[TrainingCheckPoint(tmp_path, "run", 1)])
    stopped = len(whole.evals_result_["validation_0"]["logloss"])
    assert stopped < 40 and whole.best_iteration_ == stopped - 4
    start = max(1, stopped - back)  # back 0: patience already out; 2: the best round is before
    rest = GradientBoostingClassifier(n_estimators=40 - start, **params)
    rest.fit(X, LABELS, eval_set=EVAL, early_stopping_rounds=3,
             init_model=tmp_path / f"run-{start:05d}.json")
    assert rest.best_iteration_ == whole.best_iteration_
    assert rest.evals_result_ == whole.evals_result_
    same_trees(rest, whole)


def test_a_continued_fit_measured_otherwise_starts_its_own_history():
    first = GradientBoostingClassifier(n_estimators=3, **PARAMS).fit(X, LABELS)  # no eval set
    more = GradientBoostingClassifier(n_estimators=2, **PARAMS)
    more.fit(X, LABELS, eval_set=EVAL, init_model=first)
    assert [len(v) for v in more.evals_result_["validation_0"].values()] == [2]
