"""The module crossings from ``fit`` to the histogram kernel, measured.

Fits ``GradientBoostingRegressor`` once and, when a Python function that
reaches the histogram kernel is first entered, reads the call stack: in
process, the stack of the fit itself (``kernels.local_grower.grow``, whose
compiled code builds the histograms, or ``kernels.histogram``'s functions on
the level-by-level path); on Dask (``--dask``, a ``LocalCluster`` of threads),
the worker's stack from ``Holder.run`` to ``kernels.histogram`` and, at that
moment, the driver's stack from ``fit`` to where it waits for the wave. A
module crossing is a call from a function of one module of distboost to a
function of another (frames of other libraries in between, e.g. Dask's
comms, are not counted apart); the wave itself, driver to worker, is one.

    python bench/hops.py            # in process
    python bench/hops.py --dask     # on a LocalCluster (threads)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import types
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "distboost"
# the Python functions whose compiled calls build histograms
TARGETS = {("kernels/local_grower.py", "grow"), ("kernels/histogram.py", "root_histograms"),
           ("kernels/histogram.py", "split_level")}


def _module(code) -> str | None:
    """``code``'s module as a path under distboost/, or None outside it."""
    try:
        return Path(code.co_filename).resolve().relative_to(PACKAGE).as_posix()
    except ValueError:
        return None


def _stack(frame) -> list[tuple[str, str]]:
    """(module, function) of distboost's frames, outermost first, from the
    outermost ``fit`` (the driver) or the whole stack (a worker)."""
    out = []
    while frame is not None:
        module = _module(frame.f_code)
        if module is not None:
            out.append((module, frame.f_code.co_qualname))
        frame = frame.f_back
    out.reverse()
    fits = [i for i, (_, name) in enumerate(out) if name.endswith(".fit")]
    return out[fits[0]:] if fits else out


def crossings(stack: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """(from module, to module, the function entered) at each change of module."""
    return [(a[0], b[0], b[1]) for a, b in itertools.pairwise(stack) if a[0] != b[0]]


class _Catch:
    """Wraps the ``TARGETS`` functions, wherever distboost's modules hold them,
    and keeps the stacks of the first call to each."""

    def __init__(self, driver: threading.Thread):
        self.driver, self.stacks, self.undo = driver, {}, []

    def wrap(self, fn):
        def caught(*args, **kwargs):
            if fn.__name__ not in self.stacks:
                here = [*_stack(sys._getframe(1)), (_module(fn.__code__), fn.__qualname__)]
                if threading.current_thread() is self.driver:
                    self.stacks[fn.__name__] = {"driver": here, "worker": None}
                else:
                    driver = _stack(sys._current_frames()[self.driver.ident])
                    if driver and driver[0][1].endswith(".fit"):  # else not this fit's wave
                        self.stacks[fn.__name__] = {"driver": driver, "worker": here}
            return fn(*args, **kwargs)
        return caught

    def __enter__(self):
        import distboost  # noqa: F401  (its modules loaded)

        for module in [m for name, m in sys.modules.items() if name.startswith("distboost")]:
            for name, value in list(vars(module).items()):
                if isinstance(value, types.FunctionType) \
                        and (_module(value.__code__), value.__name__) in TARGETS:
                    setattr(module, name, self.wrap(value))
                    self.undo.append((module, name, value))
        return self

    def __exit__(self, *exc):
        for module, name, value in self.undo:
            setattr(module, name, value)


def trace(dask_client=None, n_rows: int = 2000) -> dict:
    """The stacks of one ``GradientBoostingRegressor(max_depth=3).fit``.

    Returns
    -------
    dict
        Per function of ``TARGETS`` the fit reached (``"grow"`` in process;
        ``"root_histograms"`` and ``"split_level"`` on Dask), the stacks of
        its first call: ``"driver"``, from ``fit`` down to the kernel's caller
        (in process) or to where the driver waits for the wave (on Dask), and
        ``"worker"``, on Dask, the worker's stack down to the kernel's caller.
    """
    import distboost as db

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n_rows, 4))
    y = X[:, 0] + rng.normal(size=n_rows)
    if dask_client is not None:
        import dask.array as da

        X, y = da.from_array(X, chunks=n_rows // 2), da.from_array(y, chunks=n_rows // 2)
    with _Catch(threading.current_thread()) as catch:
        db.GradientBoostingRegressor(n_estimators=2, max_depth=3, client=dask_client).fit(X, y)
    return catch.stacks


def count(stacks: dict) -> int:
    """Module crossings from ``fit`` to the kernel: the driver's, the wave's
    one (on Dask), and the worker's."""
    driver = len(crossings(stacks["driver"]))
    if stacks["worker"] is None:
        return driver
    return driver + 1 + len(crossings(stacks["worker"]))


def report(traced: dict) -> str:
    """Per kernel the fit reached, its crossings numbered, and their count."""
    lines = []
    for target, stacks in traced.items():
        lines.append(f"fit -> {target}")
        n = 0
        for side in ("driver", "worker"):
            if stacks[side] is None:
                continue
            if side == "worker":
                n += 1
                lines.append(f"{n:4d}  (the wave: driver -> worker)  {stacks[side][0][1]}")
            lines.append(f"        {side}: {stacks[side][0][0]} {stacks[side][0][1]}")
            for a, b, fn in crossings(stacks[side]):
                n += 1
                lines.append(f"{n:4d}  {a} -> {b}  {fn}")
        lines.append(f"      {count(stacks)} module crossings\n")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dask", action="store_true", help="on a LocalCluster of threads")
    args = parser.parse_args(argv)
    if not args.dask:
        print(report(trace()))
        return
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        print(report(trace(client)))


if __name__ == "__main__":
    main()
