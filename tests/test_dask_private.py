"""Dask's private API is used in one module only (``distboost.engine.dask_internals``),
and every private path there has a public fallback giving the same results:
fits from Parquet on a real LocalCluster with the internals off equal the fit
in process, errors still name their partition and row, and the dashboard
without its page still runs."""

import ast
import logging
import os
import pathlib
import subprocess
import sys
import textwrap

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.engine import dask_internals

PACKAGES = [pathlib.Path(db.__file__).parent, pathlib.Path(__file__).parents[1] / "flows"]
THE_MODULE = pathlib.Path(dask_internals.__file__)

PUBLIC_MODULES = {"dask", "dask.array", "dask.bag", "dask.base", "dask.config",
                  "dask.dataframe", "dask.delayed", "dask.utils",
                  "distributed", "distributed.diagnostics.plugin"}
"""Dask modules documented for users (their names without an underscore)."""

PRIVATE_NAMES = {"dask_expr", "expr", "_meta", "_meta_nonempty", "_expr", "_plan",
                 "_dataset_info", "_fusion_buckets", "rpc", "connection_args",
                 "memory_manager", "applications", "template_variables", "ProxyRPC",
                 "send_recv", "to_serialize", "actor_execute"}
"""Names of Dask internals (attributes, imported names) distboost has used."""


def _dask_module(name: str) -> bool:
    return name.split(".")[0] in ("dask", "distributed")


def private_uses(source: str) -> list[str]:
    """Each use of a private Dask API in ``source``: imports of modules other
    than ``PUBLIC_MODULES`` or of underscore names, ``PRIVATE_NAMES`` as
    imported names or attributes, ``get_worker().state``, and dynamic imports
    of private modules."""
    found = []
    for node in ast.walk(ast.parse(source)):
        modules, names = [], []
        if isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules, names = [node.module], [a.name for a in node.names]
            if not _dask_module(node.module):
                names = []
        elif isinstance(node, ast.Call) and _callee(node) in ("import_module", "__import__"):
            modules = [a.value for a in node.args[:1] if isinstance(a, ast.Constant)]
        elif isinstance(node, ast.Attribute):
            if node.attr in PRIVATE_NAMES:
                found.append(f"line {node.lineno}: .{node.attr}")
            elif node.attr == "state" and isinstance(node.value, ast.Call) \
                    and _callee(node.value) == "get_worker":
                found.append(f"line {node.lineno}: get_worker().state")
            continue
        for m in modules:
            if isinstance(m, str) and _dask_module(m) and (
                    m not in PUBLIC_MODULES or any(p.startswith("_") for p in m.split("."))):
                found.append(f"line {node.lineno}: module {m}")
        found += [f"line {node.lineno}: name {n}" for n in names
                  if n.startswith("_") or n in PRIVATE_NAMES]
    return found


def _callee(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def test_the_scan_finds_private_uses():
    snippet = textwrap.dedent("""
        import distributed.comm
        from distributed.core import send_recv
        from dask.dataframe.dask_expr._expr import are_co_aligned
        from dask.dataframe import dask_expr
        from distributed.dashboard import scheduler
        from distributed.actor import ProxyRPC
        from distributed.protocol import to_serialize
        from dask._task_spec import Task
        from distributed import _concurrent_futures_thread
        import importlib
        importlib.import_module("distributed.worker_memory")
        meta = X._meta
        plan = X.expr
        n = get_worker().state.nthreads
        get_worker().rpc(address)
    """)
    found = private_uses(snippet)
    lines = {int(f.split(":")[0].split()[1]) for f in found}
    assert lines == set(range(2, 17)) - {11}, found  # all but `import importlib`
    public = textwrap.dedent("""
        import dask, dask.dataframe as dd, dask.array as da
        from dask.delayed import Delayed, delayed
        from dask.utils import parse_timedelta
        from distributed import Actor, Client, LocalCluster, get_worker, wait
        from distributed.diagnostics.plugin import SchedulerPlugin
        directory = get_worker().local_directory
        state = holder.state
    """)
    assert private_uses(public) == []


def test_no_private_dask_api_outside_the_one_module():
    offenders = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            if path.resolve() == THE_MODULE.resolve():
                continue
            found = private_uses(path.read_text(encoding="utf-8"))
            if found:
                offenders[str(path)] = found
    assert offenders == {}, (
        f"private Dask API outside {THE_MODULE.name}: {offenders}; move each use into "
        f"distboost/dask_internals.py with a public fallback")


def test_the_one_module_finds_its_capabilities_here():
    """On the Dask installed, every private path is available (so the tests of
    the defaults exercise them), and none is once the internals are off."""
    frame = dd.from_pandas(pd.DataFrame({"a": [1.0, 2.0], "y": [0, 1]}), npartitions=1)
    assert dask_internals.fast_path_available()
    assert dask_internals.co_aligned(frame[["a"]], frame["y"]) is True
    with dask.config.set({dask_internals.INTERNALS: False}):
        assert not dask_internals.internals_allowed()
        assert not dask_internals.fast_path_available()
        assert dask_internals.co_aligned(frame[["a"]], frame["y"]) is None
        assert dask_internals.parquet_pieces(frame, 0) is None
        assert dask_internals.worker_nthreads() is None
        assert dask_internals.worker_memory_limit() is None
        assert dask_internals.serialized(frame) is frame
    with dask.config.set({dask_internals.INTERNALS: "False"}):  # as the environment gives it
        assert not dask_internals.internals_allowed()


def test_public_meta_has_the_private_meta_dtypes():
    frame = pd.DataFrame({"x": np.arange(4.0), "n": np.arange(4, dtype="int32"),
                          "b": [True, False] * 2, "c": pd.Categorical(list("abca"))})
    ddf = dd.from_pandas(frame, npartitions=2)
    private = dask_internals.meta(ddf)
    with dask.config.set({dask_internals.INTERNALS: False}):
        public = dask_internals.meta(ddf)
        series = dask_internals.meta(ddf["c"])
    assert len(public) == 0 and list(public.columns) == list(frame.columns)
    assert list(public.dtypes) == list(private.dtypes)
    assert series.dtype == frame["c"].dtype and series.name == "c"


@pytest.fixture(scope="module")
def parquet_frame(tmp_path_factory):
    rng = np.random.default_rng(5)
    n = 2400
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.03] = np.nan
    df = pd.DataFrame(X, columns=[f"x{j}" for j in range(5)])
    df["kind"] = pd.Categorical(rng.choice(["a", "b", "c"], n))
    score = np.nan_to_num(X[:, 0]) - np.nan_to_num(X[:, 1]) ** 2 + (df["kind"] == "b") * 1.2
    df["label"] = (score + rng.logistic(size=n) > 0).astype(int)
    folder = tmp_path_factory.mktemp("private") / "data"
    folder.mkdir()
    for i, rows in enumerate(np.array_split(np.arange(n), 4)):
        df.iloc[rows].to_parquet(folder / f"part-{i}.parquet")
    return df, str(folder)


FEATURES = [f"x{j}" for j in range(5)] + ["kind"]
PARAMS = {"n_estimators": 6, "max_depth": 3, "subsample": 0.8, "random_state": 1}


@pytest.mark.parametrize("internals", [True, False], ids=["private", "public"])
def test_fits_from_parquet_equal_the_fit_in_process(parquet_frame, dask_client, internals):
    df, folder = parquet_frame
    local = db.GradientBoostingClassifier(**PARAMS).fit(df[FEATURES], df["label"])
    with dask.config.set({dask_internals.INTERNALS: internals}):
        ddf = dd.read_parquet(folder)
        model = db.GradientBoostingClassifier(client=dask_client, **PARAMS)
        model.fit(ddf[FEATURES], ddf["label"])
    assert len(model.trees_) == len(local.trees_)
    for a, b in zip(model.trees_, local.trees_, strict=True):
        assert all(ta == tb for ta, tb in zip(a, b, strict=True))
    np.testing.assert_array_equal(model.predict_proba(df[FEATURES]),
                                  local.predict_proba(df[FEATURES]))


def test_without_internals_errors_keep_partition_and_row(parquet_frame, dask_client, tmp_path):
    df, _ = parquet_frame
    bad = df.assign(label=df["label"].astype(float))
    bad.loc[700, "label"] = np.nan  # in part-1 (rows 600..1199), its row 100
    for i, rows in enumerate(np.array_split(np.arange(len(bad)), 4)):
        bad.iloc[rows].to_parquet(tmp_path / f"part-{i}.parquet")
    messages = {}
    for internals in (True, False):
        with dask.config.set({dask_internals.INTERNALS: internals}):
            ddf = dd.read_parquet(tmp_path)
            with pytest.raises(ValueError, match=r"partition \d+ has 1 missing") as info:
                db.GradientBoostingRegressor(n_estimators=2, client=dask_client).fit(
                    ddf[FEATURES], ddf["label"])
        messages[internals] = str(info.value)
    assert "part-1.parquet, row 100]" in messages[True], messages[True]
    assert "partition 1 " in messages[False] and "row 100" in messages[False], messages[False]
    assert "[read from" not in messages[False]


def test_dashboard_without_its_internals_logs_and_serves_no_page(caplog):
    with dask.config.set({dask_internals.INTERNALS: False}), \
            caplog.at_level(logging.INFO, logger="distboost"):
        assert not dask_internals.register_dashboard_page("/distboost-test", lambda *a: None)
        assert not dask_internals.link_dashboard_page(object(), "/distboost-test")
    assert "page is not served" in caplog.text


CLUSTER_WITHOUT_INTERNALS = """
import sys, urllib.error, urllib.request
from distributed import Client, LocalCluster
from distboost.dashboard import SCHEDULER_KWARGS
import distboost as db
import numpy as np

with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                  dashboard_address="127.0.0.1:0", scheduler_kwargs=SCHEDULER_KWARGS) as cluster, \\
        Client(cluster) as client:
    base = f"http://127.0.0.1:{client.scheduler_info()['services']['dashboard']}"
    status = urllib.request.urlopen(base + "/status").status
    try:
        page = urllib.request.urlopen(base + "/distboost").status
    except urllib.error.HTTPError as error:
        page = error.code
    import dask.array as da
    X = da.from_array(np.random.default_rng(0).normal(size=(400, 3)), chunks=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    model = db.GradientBoostingClassifier(n_estimators=3, client=client).fit(X, y)
    events = [e for _, e in client.get_events("distboost")]
    print("status", status, "page", page, "events", len(events), "trees", len(model.trees_))
"""


@pytest.mark.slow
def test_a_cluster_without_the_dashboard_internals_trains_and_logs_why(tmp_path):
    env = dict(os.environ, DASK_DISTBOOST__DASK_INTERNALS="False")
    run = subprocess.run([sys.executable, "-c", CLUSTER_WITHOUT_INTERNALS], env=env, check=False,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    words = run.stdout.split()
    assert words[words.index("status") + 1] == "200"
    assert words[words.index("page") + 1] == "404"
    assert int(words[words.index("events") + 1]) > 0  # the fit's events are still logged
    assert words[words.index("trees") + 1] == "3"
    assert "/distboost page is not served" in run.stderr

