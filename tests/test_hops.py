"""From ``fit`` to the histogram kernel, in process: at most 8 module
crossings, each a call from one module of distboost to another
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
