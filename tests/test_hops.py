"""From ``fit`` to the histogram kernel: at most 8 module crossings in process,
10 on Dask, each a call from one module of distboost to another
(``bench/hops.py`` measures them; docs/architecture.md names their jobs)."""

from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[1] / "bench"


@pytest.fixture
def hops(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import hops

    return hops


def test_crossings_count_changes_of_module_only(hops):
    stack = [("a.py", "f"), ("a.py", "g"), ("b.py", "h"), ("a.py", "k")]
    assert hops.crossings(stack) == [("a.py", "b.py", "h"), ("b.py", "a.py", "k")]
    assert hops.count({"driver": stack, "worker": None}) == 2
    assert hops.count({"driver": stack, "worker": stack[:3]}) == 2 + 1 + 1  # the wave is one


def test_an_in_process_fit_reaches_the_histogram_kernel_in_at_most_8_crossings(hops):
    traced = hops.trace()
    assert list(traced) == ["grow"]  # a round's trees in one compiled call
    stacks = traced["grow"]
    assert stacks["driver"][0][1].endswith(".fit")
    assert stacks["driver"][-1] == ("kernels/local_grower.py", "grow")
    assert hops.count(stacks) <= 8, hops.report(traced)


def test_a_fit_on_dask_reaches_the_histogram_kernels_in_at_most_10_crossings(hops):
    from distributed import Client, LocalCluster

    with (LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                       dashboard_address=None) as cluster, Client(cluster) as client):
        traced = hops.trace(client)
    assert set(traced) == {"root_histograms", "split_level"}
    for stacks in traced.values():
        assert stacks["driver"][0][1].endswith(".fit")
        assert stacks["worker"] is not None  # the wave crossed to the worker's holder
    assert hops.count(traced["root_histograms"]) <= 9, hops.report(traced)
    assert hops.count(traced["split_level"]) <= 10, hops.report(traced)
