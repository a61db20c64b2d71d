"""numba's thread count: set in one place, and put back after a fit or a prediction;
its OpenMP threads wait passively unless the user says otherwise."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import distboost as db
from distboost.kernels.threads import numba_threads, set_numba_threads, threads_now, use_threads


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


def test_the_compiled_setting_is_numbas_own(restore_threads):
    """``use_threads`` and ``threads_now`` (compiled once numba's threads run)
    set and read what ``numba.set_num_threads`` and ``get_num_threads`` do."""
    for n in (1, numba.config.NUMBA_NUM_THREADS, 1):
        use_threads(n)
        assert numba.get_num_threads() == n == threads_now()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS + 1 - n)
        assert threads_now() == numba.config.NUMBA_NUM_THREADS + 1 - n


_BEFORE_THREADS = """
from numba.np.ufunc import parallel
from distboost.kernels.threads import threads_now, use_threads
started = parallel._is_initialized
use_threads(1)
print(started, threads_now(), parallel._is_initialized)
"""


def test_the_setting_works_before_numbas_threads_start():
    """With a wait policy of the user's, importing distboost starts no threads:
    the first setting starts them (numba's own calls), and reads back."""
    done = subprocess.run([sys.executable, "-c", _BEFORE_THREADS], capture_output=True,
                          text=True, env={**os.environ, "OMP_WAIT_POLICY": "ACTIVE"}, check=True)
    assert done.stdout.split() == ["False", "1", "True"]


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


_SHOW_POLICY = ("import os, numba, numpy as np, distboost\n"
                "@numba.njit(parallel=True)\n"
                "def f(x):\n"
                "    return np.sum(x)\n"
                "f(np.ones(4))\n"
                "print(numba.threading_layer(), os.environ.get('OMP_WAIT_POLICY'))\n")


def _policy(**env):
    """libgomp's spin count (turns a waiting thread spins before it sleeps) in a
    fresh process that imports distboost (libgomp prints its settings when
    ``OMP_DISPLAY_ENV`` is set; its wait policy reads "PASSIVE" when unset, the
    spin count tells), and what the process printed: numba's threading layer
    and its own ``OMP_WAIT_POLICY``."""
    clean = {k: v for k, v in os.environ.items()
             if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "NUMBA_THREADING_LAYER")}
    done = subprocess.run([sys.executable, "-c", _SHOW_POLICY], capture_output=True, text=True,
                          env={**clean, "OMP_DISPLAY_ENV": "VERBOSE", **env}, check=True)
    shown = [line.split("=")[1].strip().strip("'") for line in done.stderr.splitlines()
             if line.strip().startswith("GOMP_SPINCOUNT")]
    return shown, done.stdout.split()


def test_openmp_threads_wait_passively_and_the_environment_is_left_as_it_was():
    shown, (layer, own) = _policy()
    assert layer == "omp" and shown == ["0"] and own == "None"


def test_a_users_wait_policy_is_kept():
    shown, (_, own) = _policy(OMP_WAIT_POLICY="ACTIVE")
    assert shown != ["0"] and own == "ACTIVE"  # active: spins (libgomp shows its maximum)
