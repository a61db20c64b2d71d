"""numba's thread count: set in one place, and put back after a fit or a prediction."""

import numba
import numpy as np
import pytest

import distboost as db
from distboost.kernels.threads import numba_threads, set_numba_threads


@pytest.fixture
def restore_threads():
    saved = numba.get_num_threads()
    yield saved
    numba.set_num_threads(saved)


def test_set_numba_threads_stays_within_numbas_pool(restore_threads):
    set_numba_threads(10_000)
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    set_numba_threads(0)
    assert numba.get_num_threads() == 1


def test_the_context_puts_the_setting_back(restore_threads):
    with numba_threads(1):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == restore_threads
    with numba_threads(None, distributed=True):  # on Dask the driver finds splits alone
        assert numba.get_num_threads() == 1
    with numba_threads(None):  # numba's default: unchanged
        assert numba.get_num_threads() == restore_threads


def test_fit_and_predict_with_n_jobs_leave_the_setting_as_it_was(restore_threads):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 3)), rng.normal(size=300)
    model = db.GradientBoostingRegressor(n_estimators=3, n_jobs=1).fit(X, y)
    assert numba.get_num_threads() == restore_threads
    model.predict(X)
    assert numba.get_num_threads() == restore_threads
